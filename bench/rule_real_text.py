"""A rule change against real text: the findings one rule set reports and the other does not.

    .venv/bin/python bench/rule_real_text.py --rules DIR [--root DIR ...] [--show N]

Labeled samples (bench/detect_quality.py) say whether a change keeps the peers' expectations;
they cannot say what a rule does in text nobody wrote to hold tokens: identifiers, mangled C++
names, base64 blobs, word lists. This scans every regular file under the roots (default: the
documentation, headers, man pages, binaries and libraries of this machine, /etc, the dpkg
database, the running Python's standard library and site-packages, and tests/.npm when the
agent CLIs are installed there) once with the packaged rules and once with the rule files in DIR
(a changed copy of tcg/detect/rules, or an older one: ``git archive REV tcg/detect/rules``), and
prints per rule how many findings only one side reports.

A finding is the same on both sides when rule, file and start offset agree (a span that only
grew, a token taking in its glue, is not a difference). Nothing prints a matched value: real
text can hold a real credential. ``--show N`` names the first N places of each difference as
path:offset, to be read by hand.
"""

from __future__ import annotations

import argparse
import os
import sys
import sysconfig
import time
from collections import Counter
from collections.abc import Iterator
from multiprocessing import Pool
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

MAX_BYTES = 64 << 20  # the head of a larger file (a few toolchain archives) is enough
Place = tuple[str, str, int]  # rule id, path, start offset


def default_roots() -> list[str]:
    roots = ["/usr/share/doc", "/usr/include", "/usr/share/man", "/usr/bin", "/usr/lib", "/etc",
             "/var/lib/dpkg", sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"],
             str(HERE.parent / "tests" / ".npm")]
    return [r for r in roots if os.path.isdir(r)]


def files(roots: list[str]) -> Iterator[str]:
    """Every regular file once (hard links and overlapping roots: by inode), no symlinks."""
    seen: set[tuple[int, int]] = set()
    for root in roots:
        for parent, _dirs, names in os.walk(root):
            for name in names:
                path = os.path.join(parent, name)
                try:
                    st = os.lstat(path)
                except OSError:
                    continue
                if not (st.st_mode & 0o170000 == 0o100000) or (st.st_dev, st.st_ino) in seen:
                    continue
                seen.add((st.st_dev, st.st_ino))
                yield path


_detectors: dict[str, object] = {}


def _init(rules_dir: str) -> None:
    from tcg.detect.engine import Detector, load_detector
    from tcg.detect.rule import load_rules

    _detectors["packaged"] = load_detector()
    paths = sorted(Path(rules_dir).glob("*.toml"))
    _detectors["other"] = Detector.from_rules(load_rules(paths))


def _scan(path: str) -> tuple[list[Place], list[Place]]:
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_BYTES)
    except OSError:
        return [], []
    sides = []
    for key in ("packaged", "other"):
        det = _detectors[key]
        sides.append([(f.rule_id, path, f.start) for f in det.find_bytes(data)])  # type: ignore[attr-defined]
    return sides[0], sides[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", required=True, help="a directory of rule files to compare with")
    ap.add_argument("--root", action="append", help="a directory to scan (repeatable)")
    ap.add_argument("--show", type=int, default=0, help="name the first N places per difference")
    args = ap.parse_args(argv)
    if not sorted(Path(args.rules).glob("*.toml")):
        ap.error(f"{args.rules}: no rule files (*.toml)")
    roots = args.root or default_roots()
    t0 = time.perf_counter()
    paths = list(files(roots))
    size = sum(os.path.getsize(p) for p in paths)
    packaged: set[Place] = set()
    other: set[Place] = set()
    with Pool(os.cpu_count() or 1, initializer=_init, initargs=(args.rules,)) as pool:
        for a, b in pool.imap_unordered(_scan, paths, chunksize=64):
            packaged.update(a)
            other.update(b)
    only = {"packaged": sorted(packaged - other), "other": sorted(other - packaged)}
    print(f"{len(paths)} files, {size / 1e6:.0f} MB under {', '.join(roots)}; "
          f"{time.perf_counter() - t0:.0f} s")
    print(f"findings: packaged rules {len(packaged)}, {args.rules} {len(other)}")
    for side, places in only.items():
        counts = Counter(rule for rule, _p, _s in places)
        name = "the packaged rules" if side == "packaged" else args.rules
        print(f"\nonly with {name}: {len(places)}")
        for rule, n in counts.most_common():
            print(f"  {rule:40s} {n}")
            for _r, path, start in [p for p in places if p[0] == rule][:args.show]:
                print(f"      {path}:{start}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
