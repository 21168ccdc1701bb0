"""Detection regression check: recall and precision of tcg on a GENERATED corpus, beside kingfisher and
betterleaks run on the same files.

    .venv/bin/python bench/detect_regression.py [--scale N] [--no-peers] [--misses]

The corpus (bench/corpus.py, seeded) is regenerated under bench/.data/quality/ on every run.
A finding counts as a true positive when its line range overlaps a labelled range in the same
file (tcg: of the same category); precision is per category of the finding, recall per category
of the label. Reference findings (names of secret-bearing variables and files) are counted but
not scored. Peers do not detect PII: their PII cells print n/a, and all their findings are scored
as secrets. Nothing printed here contains a matched value: misses are listed as
file:line:family only.

This corpus is built from the same formats the rules target, so it measures the rules against
themselves: keep it as a regression check (a rule change that loses a family shows here). The
quality figure is bench/detect_quality.py, on samples nobody here wrote.
"""

from __future__ import annotations

import argparse
import bisect
import shutil
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import corpus  # noqa: E402
import detect_quality  # noqa: E402  (the peers' runners)

from tcg.detect.engine import load_detector  # noqa: E402
from tcg.detect.rule import load_rules  # noqa: E402

ROOT = HERE / ".data" / "quality"
FILES = ROOT / "files"
SCORED = ("secret", "pii")
Span = tuple[str, int, int, str]  # file, first line, last line, category


def _line_starts(data: bytes) -> list[int]:
    starts = [0]
    i = data.find(b"\n")
    while i >= 0:
        starts.append(i + 1)
        i = data.find(b"\n", i + 1)
    return starts


def run_tcg(decode: bool = True, files: Path = FILES) -> tuple[list[Span], float]:
    """tcg findings as (file, first line, last line, category) over every file under ``files``."""
    det = load_detector()  # the packaged rules, compiled once per process
    out: list[Span] = []
    t0 = time.perf_counter()
    for p in sorted(files.rglob("*")):
        if not p.is_file():
            continue
        data = p.read_bytes()
        starts = _line_starts(data)
        rel = p.relative_to(files).as_posix()
        for f in det.find_bytes(data, decode=decode):
            first = bisect.bisect_right(starts, f.start)
            last = bisect.bisect_right(starts, max(f.start, f.end - 1))
            out.append((rel, first, last, f.category))
    return out, time.perf_counter() - t0


def _rel(path: str) -> str:
    p = Path(path)
    if not p.is_absolute():
        p = (Path.cwd() / p)
    try:
        return p.resolve().relative_to(FILES.resolve()).as_posix()
    except ValueError:
        return path


def run_kingfisher() -> tuple[list[Span], float] | str:
    got = detect_quality.kingfisher_report(FILES)
    if isinstance(got, str):
        return got
    items, dt = got
    out = []
    for item in items:
        f = item.get("finding", {})
        line = int(f.get("line", 0))
        out.append((_rel(f.get("path", "")), line, line, "secret"))
    return out, dt


def run_betterleaks() -> tuple[list[Span], float] | str:
    got = detect_quality.betterleaks_report(FILES)
    if isinstance(got, str):
        return got
    items, dt = got
    out = []
    for item in items:
        loc = item.get("location", {})
        a, b = int(loc.get("start_line", 0)), int(loc.get("end_line", 0))
        out.append((_rel(loc.get("path", "")), a, max(a, b), "secret"))
    return out, dt


def score(findings: list[Span], labels: list[dict], match_category: bool) -> dict:
    """Per category: tp/fp findings (deduplicated by file+line), recall over labels."""
    by_file: dict[str, list[dict]] = defaultdict(list)
    for lab in labels:
        by_file[str(lab["file"])].append(lab)
    seen: set[tuple[str, int, int, str]] = set()
    res: dict[str, dict] = {c: {"tp": 0, "fp": 0, "hit": set(), "fp_where": []} for c in SCORED}
    refs = 0
    for fpath, a, b, cat in findings:
        if cat not in SCORED:
            refs += 1
            continue
        if (fpath, a, b, cat) in seen:
            continue
        seen.add((fpath, a, b, cat))
        hits = [lab for lab in by_file.get(fpath, ())
                if lab["line"] <= b and a <= lab["end_line"]
                and (not match_category or lab["category"] == cat)]
        if hits:
            res[cat]["tp"] += 1
            for lab in hits:
                res[str(lab["category"])]["hit"].add((lab["file"], lab["line"]))
        else:
            res[cat]["fp"] += 1
            res[cat]["fp_where"].append(f"{fpath}:{a}")
    for cat in SCORED:
        total = [lab for lab in labels if lab["category"] == cat]
        r = res[cat]
        r["n"] = len(total)
        r["recall"] = len(r["hit"]) / len(total) if total else float("nan")
        r["precision"] = r["tp"] / (r["tp"] + r["fp"]) if r["tp"] + r["fp"] else float("nan")
        r["missed"] = [lab for lab in total if (lab["file"], lab["line"]) not in r["hit"]]
    res["refs"] = refs
    return res


def _overall(res: dict) -> tuple[float, float]:
    tp = sum(res[c]["tp"] for c in SCORED)
    fp = sum(res[c]["fp"] for c in SCORED)
    hit = sum(len(res[c]["hit"]) for c in SCORED)
    n = sum(res[c]["n"] for c in SCORED)
    return hit / n, (tp / (tp + fp) if tp + fp else float("nan"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=1, help="corpus size multiplier")
    ap.add_argument("--no-peers", action="store_true", help="skip kingfisher and betterleaks")
    ap.add_argument("--misses", action="store_true", help="list tcg misses and false positives")
    ap.add_argument("--no-decode", action="store_true",
                    help="tcg without base64 decoding (peers decode base64 by default)")
    args = ap.parse_args(argv)

    shutil.rmtree(ROOT, ignore_errors=True)
    labels = corpus.generate(ROOT, scale=args.scale)
    nfiles = sum(1 for p in FILES.rglob("*") if p.is_file())
    size = sum(p.stat().st_size for p in FILES.rglob("*") if p.is_file())
    counts = {c: sum(1 for lab in labels if lab["category"] == c) for c in SCORED}
    print(f"tcg: {len(load_rules())} rules, base64 decoding {'off' if args.no_decode else 'on'}")
    print(f"corpus: {nfiles} files, {size / 1e6:.2f} MB, labels: "
          + ", ".join(f"{c}={n}" for c, n in counts.items()))

    tools: dict[str, tuple[dict, float] | str] = {}
    tfind, tdt = run_tcg(decode=not args.no_decode)
    tools["tcg"] = (score(tfind, labels, match_category=True), tdt)
    if not args.no_peers:
        for name, fn in (("kingfisher", run_kingfisher), ("betterleaks", run_betterleaks)):
            got = fn()
            tools[name] = got if isinstance(got, str) else (score(got[0], labels, False), got[1])

    def cell(x: float) -> str:
        return "  n/a " if x != x else f"{x:6.3f}"

    print(f"\n{'tool':<12} {'secret R':>9} {'secret P':>9} {'pii R':>7} {'pii P':>7} "
          f"{'all R':>7} {'all P':>7} {'FP':>5} {'refs':>5} {'time s':>7}")
    for name, got in tools.items():
        if isinstance(got, str):
            print(f"{name:<12} {got}")
            continue
        res, dt = got
        peer = name != "tcg"
        s, p = res["secret"], res["pii"]
        if peer:
            rec_all, prec_all = _overall({"secret": s, "pii": {**p, "tp": 0, "fp": 0, "hit": set()}})
        else:
            rec_all, prec_all = _overall(res)
        fp = s["fp"] + p["fp"]
        print(f"{name:<12} {cell(s['recall']):>9} {cell(s['precision']):>9} "
              f"{'  n/a ' if peer else cell(p['recall']):>7} {'  n/a ' if peer else cell(p['precision']):>7} "
              f"{cell(rec_all):>7} {cell(prec_all):>7} {fp:>5} "
              f"{'-' if peer else res['refs']:>5} {dt:7.2f}")
    print("\nR = recall over labelled lines, P = precision over reported lines; peers' PII cells are"
          " n/a (they have no PII rules) and their 'all' recall counts PII labels as misses.")

    if args.misses:
        res = tools["tcg"][0]  # type: ignore[index]
        for cat in SCORED:
            fams: dict[str, int] = defaultdict(int)
            for lab in res[cat]["missed"]:
                fams[str(lab["family"])] += 1
            print(f"\ntcg {cat} misses by family: {dict(sorted(fams.items()))}")
            for lab in res[cat]["missed"][:40]:
                print(f"  miss {lab['file']}:{lab['line']} {lab['family']}")
            for where in res[cat]["fp_where"][:40]:
                print(f"  fp   {where}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
