"""Recall and false-positive rate of the inbound gate, per corpus and language.

Corpora (all offline):
- bastioncorpus 0.6.0 (PyPI, 181 rows: 118 malicious, 63 benign "false-positive traps");
  split by a hash of the row id into the half the rules were written against ("dev",
  whose misses were looked at) and the half nobody looked at ("held-out");
- jailbreak-corpus-mini-py 0.1.0 (PyPI, 15 fixtures, all attacks);
- bench/data/inbound_corpus.jsonl: tcg's own EN/RU/UZ attacks and hard negatives
  (tutorial, news and UI phrasing that shares words with the attacks).

A row counts as flagged when the gate flags it on the ``web`` surface (any rule, or
the invisible / drain checks). Run: ``python bench/inbound_quality.py [--json]``;
``--misses`` lists the dev split's misses and false positives (never the held-out's).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent


def split_of(row_id: str) -> str:
    """dev or held-out, fixed by the id (the rules were checked against dev only)."""
    return "dev" if int(hashlib.sha256(row_id.encode()).hexdigest()[0], 16) < 8 else "held-out"


def bastion_rows() -> list[dict]:
    from bastioncorpus import load_corpus

    rows = []
    for r in load_corpus():
        rows.append({"id": r.id, "text": r.text, "attack": r.label == "malicious",
                     "lang": r.lang, "split": split_of(r.id), "category": r.category})
    return rows


def mini_rows() -> list[dict]:
    from jailbreak_corpus_mini import load_corpus

    return [{"id": f.id, "text": f.prompt, "attack": True, "lang": "en", "split": "all",
             "category": f.category} for f in load_corpus()]


def own_rows() -> list[dict]:
    rows = []
    with open(HERE / "data" / "inbound_corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            rows.append({"id": r["id"], "text": r["text"], "attack": r["label"] == "attack",
                         "lang": r["lang"], "split": "all", "category": r["family"] or "benign"})
    return rows


def evaluate(rows: list[dict], flagged) -> dict:
    tp = sum(1 for r in rows if r["attack"] and flagged(r["text"]))
    fp = sum(1 for r in rows if not r["attack"] and flagged(r["text"]))
    pos = sum(1 for r in rows if r["attack"])
    neg = len(rows) - pos
    return {"attacks": pos, "benign": neg, "caught": tp, "false_positives": fp,
            "recall": round(tp / pos, 3) if pos else None,
            "fp_rate": round(fp / neg, 3) if neg else None}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--misses", action="store_true", help="list dev-split misses and false positives")
    ap.add_argument("--engine", choices=("hyperscan", "re"), default=None)
    args = ap.parse_args(argv)

    from tcg.inbound.engine import InboundEngine
    from tcg.inbound.inspect import inspect
    from tcg.inbound.rules import load_rules

    engine = InboundEngine(load_rules(), engine=args.engine)
    cache: dict[str, bool] = {}

    def flagged(text: str) -> bool:
        if text not in cache:
            cache[text] = inspect(engine, text).flagged
        return cache[text]

    corpora = {"bastioncorpus": bastion_rows(), "jailbreak-corpus-mini": mini_rows(),
               "tcg-own": own_rows()}
    report: dict[str, dict] = {}
    for name, rows in corpora.items():
        groups: dict[str, list[dict]] = defaultdict(list)
        for r in rows:
            groups["all"].append(r)
            groups[f"lang={r['lang']}"].append(r)
            if r["split"] != "all":
                groups[f"split={r['split']}"].append(r)
        report[name] = {g: evaluate(rs, flagged) for g, rs in sorted(groups.items())}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for name, groups in report.items():
            print(name)
            for g, m in groups.items():
                rec = "-" if m["recall"] is None else f"{m['recall']:.3f}"
                fpr = "-" if m["fp_rate"] is None else f"{m['fp_rate']:.3f}"
                print(f"  {g:<16} recall {rec} ({m['caught']}/{m['attacks']})   "
                      f"FP rate {fpr} ({m['false_positives']}/{m['benign']})")
    if args.misses:
        for r in corpora["bastioncorpus"]:
            if r["split"] == "dev" and r["attack"] != flagged(r["text"]):
                kind = "MISS" if r["attack"] else "FP"
                print(f"{kind} {r['id']} [{r['category']}] {r['text'][:160]!r}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
