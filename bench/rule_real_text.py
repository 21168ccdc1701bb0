"""A rule change against real text: the findings one rule set reports and the other does not.

    .venv/bin/python bench/rule_real_text.py --rules DIR [--root DIR ...] [--show N]

Labeled samples (bench/detect_quality.py) say whether a change keeps the peers' expectations;
they cannot say what a rule does in text nobody wrote to hold tokens: identifiers, mangled C++
names, base64 blobs, word lists. This scans every regular file under the roots (default: the
documentation, headers, man pages, binaries and libraries of this machine, /etc, the dpkg
database, the running Python's standard library and site-packages, and tests/.npm when the
agent CLIs are installed there) once with the packaged rules and once with the rule files in DIR
(a changed copy of tcg/detect/rules, or an older one:
``git archive REV tcg/detect/rules | tar -x -C DIR`` and ``--rules DIR/tcg/detect/rules``), and
prints per rule how many findings only one side reports.

A finding is the same on both sides when rule, file and start offset agree: a span that grew or
shrank (a token taking in its glue) is not a difference. Findings are direct matches, as
`tcg scan` reports them; the masker's base64 pass is left out (it finds the same rules inside
decoded runs). Nothing prints a matched value: real text can hold a real credential, in its
bytes or in a file's name, so every printed path goes through tcg's strict masker first.
``--show N`` names the first N places of each difference as path:offset, to be read by hand.
Unreadable files are counted and skipped; of a file over 64 MiB the head is read.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
import sysconfig
import time
from collections import Counter
from collections.abc import Iterator
from multiprocessing import Pool
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

MAX_BYTES = 64 << 20  # the head of a larger file (a few toolchain archives) is enough
Place = tuple[str, str, int]  # rule id, path, start offset


def default_roots() -> list[str]:
    """Text and binaries every Linux machine has, and tcg's own dependencies."""
    roots = ["/usr/share/doc", "/usr/include", "/usr/share/man", "/usr/bin", "/usr/lib", "/etc",
             "/var/lib/dpkg", sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"],
             str(HERE.parent / "tests" / ".npm")]
    return [r for r in roots if os.path.isdir(r)]


def files(roots: list[str]) -> Iterator[tuple[str, int]]:
    """Every regular file once (hard links and overlapping roots: by inode), no symlinks;
    with the bytes that will be read of it."""
    seen: set[tuple[int, int]] = set()
    for root in roots:
        for parent, _dirs, names in os.walk(root):
            for name in names:
                path = os.path.join(parent, name)
                try:
                    st = os.lstat(path)
                except OSError:
                    continue
                if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) in seen:
                    continue
                seen.add((st.st_dev, st.st_ino))
                yield path, min(st.st_size, MAX_BYTES)


_detectors: dict[str, Any] = {}


def _rule_files(rules_dir: str) -> list[Path]:
    return sorted(Path(rules_dir).glob("*.toml"))


def _init(rules_dir: str) -> None:
    from tcg.detect.engine import Detector, load_detector
    from tcg.detect.rule import load_rules

    _detectors["packaged"] = load_detector()
    _detectors["other"] = Detector.from_rules(load_rules(_rule_files(rules_dir)))


def _scan(path: str) -> tuple[list[Place], list[Place]] | None:
    """Both sides' findings in one file; None when it cannot be read."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_BYTES)
    except OSError:
        return None
    packaged, other = ([(f.rule_id, path, f.start) for f in _detectors[key].find_bytes(data)]
                       for key in ("packaged", "other"))
    return packaged, other


def masked(text: str) -> str:
    """``text`` as `tcg mask` would print it (the strict masker, the effective policy)."""
    from tcg.mask import mask_text

    return mask_text(text)


def main(argv: list[str] | None = None) -> int:
    """Scan, compare, print the differences per rule (counts, then masked places)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", required=True, help="a directory of rule files to compare with")
    ap.add_argument("--root", action="append", help="a directory to scan (repeatable)")
    ap.add_argument("--show", type=int, default=0, help="name the first N places per difference")
    args = ap.parse_args(argv)
    if not _rule_files(args.rules):
        ap.error(f"{args.rules}: no rule files (*.toml)")
    from tcg.detect.rule import load_rules

    try:  # here, once: a broken file would fail every worker of the pool, again and again
        load_rules(_rule_files(args.rules))
    except Exception as exc:  # noqa: BLE001 - any load error ends the run with its message
        ap.error(f"{args.rules}: {exc}")
    roots = args.root or default_roots()
    t0 = time.perf_counter()
    listed = list(files(roots))
    size = sum(n for _p, n in listed)
    packaged: set[Place] = set()
    other: set[Place] = set()
    unread = 0
    with Pool(os.cpu_count() or 1, initializer=_init, initargs=(args.rules,)) as pool:
        for got in pool.imap_unordered(_scan, [p for p, _n in listed], chunksize=64):
            if got is None:
                unread += 1
                continue
            packaged.update(got[0])
            other.update(got[1])
    only = {"packaged": sorted(packaged - other), "other": sorted(other - packaged)}
    print(f"{len(listed) - unread} files, {size / 1e6:.0f} MB under {masked(', '.join(roots))}; "
          f"{unread} unreadable; {time.perf_counter() - t0:.0f} s")
    print(f"findings: packaged rules {len(packaged)}, {masked(args.rules)} {len(other)}")
    for side, places in only.items():
        counts = Counter(rule for rule, _p, _s in places)
        name = "the packaged rules" if side == "packaged" else masked(args.rules)
        print(f"\nonly with {name}: {len(places)}")
        for rule, n in counts.most_common():
            print(f"  {rule:40s} {n}")
            for _r, path, start in [p for p in places if p[0] == rule][:args.show]:
                print(f"      {masked(path)}:{start}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
