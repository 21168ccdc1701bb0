#!/usr/bin/env python3
"""Floors for the entity prefilter on Russian prose: what one hyperscan scan costs,
before any Python, for the databases a faster design would need.

Why: the alias stream's budget is a tenth of the strict masker's time (docs/entities.md,
"Speed"). On Russian prose with 1,000 Russian persons the scan of the prefilter's
database alone is most of the gap, so before building another design it pays to know
what its database would cost to scan. Each arm is one hyperscan database compiled
from the same entities as bench/entity_throughput.py (forms as ``tcg entity add``
makes them) and scanned over the same prose (the seeds) with a callback that only
counts; the strict masker runs in the same loop, turn by turn, and each arm is
reported as CPU time per MB and as a share of the masker's CPU time (all its threads,
as the CPU row of bench/entity_throughput.py; median of the per-run ratios: the machine
is shared). The masker's wall time is printed too: against it the shares are larger.

Arms (every expression a plain literal unless said):
- null: one literal that never occurs (the cost of a hyperscan pass itself);
- lit-N: N literals of 8 Cyrillic letters from the forms (how the scan grows with N);
- lit-1000 UPPER: the same in upper case (upper-case letters are rare in prose: how much
  of the scan is hyperscan's literal filter passing the common lower-case byte pairs);
- bounded (only when named in --arms: 66 s to compile): each form's longest word whole,
  in its casings, with the byte contexts of the current prefilter on both sides (ASCII
  words with ``\\b``);
- stems: each form's longest word, its first 8 letters (the whole word if shorter), in
  the three casings the prefilter spells (lower, Capitalised, UPPER) and е/ё both ways,
  unbounded — the least any exact matching of the forms must scan for;
- gaps: for each such word of 5+ Cyrillic letters and each place a separator may be
  inserted, the longer fragment with a space, tab or hyphen on its inner side (the
  fragment after the gap cut to 8 letters) — what finds «Ро машка» without short pieces;
- case: the current casing triggers of the stems (any other casing of a word);
- rare: the current rare-character literals (full-width, zero-width, ...);
- lookalike: the current non-literal triggers (a Latin letter touching a Cyrillic one,
  a control sequence between letters, a lone lead byte, a combining mark, ...);
- stems+triggers: stems + case + rare + lookalike in one database (no gaps: the floor
  without «Ро машка»);
- capital stems+triggers: the same with the stems of each form's first word in the
  casings a capital-first match can have (Capitalised, UPPER) — persons only;
- design: stems + gaps + case + rare + lookalike in one database — the floor of a
  design with the current coverage, before any hit is looked at in Python;
- design, edges checked: the design's database with the Python word-edge checks a hit
  would need first (a stem starts a word, and ends one when it is the whole word; a
  fragment before a gap starts one); the survivors would each still need a confirm
  step or the view;
- current: the current prefilter's full database (null callback), and its scan()
  with the confirm step (the real cost today);
- aho-corasick DFA stems: the stems' Cyrillic literals in the Rust Aho-Corasick DFA
  (ahocorasick_rs, only when installed: no dependency of tcg) — another engine's floor
  for the same literals.

    env -u PYTHONDONTWRITEBYTECODE .venv/bin/python bench/entity_floors.py [--runs 7] [--arms a,b]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))

PIECE = 8  # letters of a stem
SEPARATORS = (b" ", b"\t", b"-")


def _words(text: str) -> list[str]:
    from tcg.entities.prefilter import _words as words

    return words(text)


def _casings(word: str) -> set[str]:
    from tcg.entities.prefilter import _yo

    out: set[str] = set()
    for cased in {word.lower(), word.upper(), word[:1].upper() + word[1:].lower()}:
        out |= set(_yo(cased))
    return out


def _longest(texts: list[str]) -> set[str]:
    out = set()
    for t in texts:
        ws = _words(t)
        if ws:
            out.add(max(ws, key=len))
    return out


def stems(texts: list[str]) -> tuple[list[bytes], list[bytes]]:
    """(Cyrillic stems in their casings, ASCII stems lower-cased: caseless)."""
    cyr: set[bytes] = set()
    asc: set[bytes] = set()
    for w in _longest(texts):
        if w.isascii():
            asc.add(w[:PIECE].lower().encode())
        else:
            cyr |= {v[:PIECE].encode() for v in _casings(w)}
    return sorted(cyr), sorted(asc)


def gaps(texts: list[str]) -> list[bytes]:
    from tcg.entities.prefilter import INSERT_MIN_WORD, is_cyrillic

    out: set[bytes] = set()
    for w in _longest(texts):
        if len(w) < INSERT_MIN_WORD or not all(is_cyrillic(c) for c in w):
            continue
        for v in _casings(w):
            for g in range(1, len(v)):
                x, y = v[:g], v[g:]
                for s in SEPARATORS:
                    out.add(x.encode() + s if len(x) >= len(y) else s + y[:PIECE].encode())
    return sorted(out)


def asc_whole(texts: list[str]) -> list[bytes]:
    return sorted({w.lower().encode() for w in _longest(texts) if w.isascii()})


def arms(texts: list[str], want: set[str] | None = None) -> dict[str, tuple[list[bytes], list[int]]]:
    """name -> (expressions, flags)."""
    import hyperscan

    from tcg.entities import prefilter as pf

    lit = pf._lit
    cyr, asc = stems(texts)
    stem_ex = [lit(b) for b in cyr] + [lit(b) for b in asc]
    stem_fl = [0] * len(cyr) + [hyperscan.HS_FLAG_CASELESS] * len(asc)
    gap_ex = [lit(b) for b in gaps(texts)]
    trig = pf._trigger_expressions(pf.key_chars(texts))
    rare = [e for e in trig if pf._literal_bytes(e) is not None]
    look = [e for e in trig if pf._literal_bytes(e) is None]
    case = [lit(b) for b in sorted(pf.case_triggers(cyr))]
    pool = sorted({v[:PIECE].encode() for w in _longest(texts) if not w.isascii() and len(w) >= PIECE
                   for v in _casings(w)})
    r = random.Random(1)
    out: dict[str, tuple[list[bytes], list[int]]] = {"null": ([lit(b"\xff\xfe\xfd\xfc")], [0])}
    for n in (100, 1000, 10000):
        out[f"lit-{n}"] = ([lit(b) for b in r.sample(pool, min(n, len(pool)))], [0] * min(n, len(pool)))
    upper = sorted({b.decode().upper().encode() for b in pool})
    out["lit-1000 UPPER"] = ([lit(b) for b in r.sample(upper, min(1000, len(upper)))],
                             [0] * min(1000, len(upper)))
    out["stems"] = (stem_ex, stem_fl)
    out["gaps"] = (gap_ex, [0] * len(gap_ex))
    out["stems+gaps"] = (stem_ex + gap_ex, stem_fl + [0] * len(gap_ex))
    out["case"] = (case, [0] * len(case))
    out["rare"] = (rare, [0] * len(rare))
    out["lookalike"] = (look, [0] * len(look))
    trig_ex = case + rare + look
    out["stems+triggers"] = (stem_ex + trig_ex, stem_fl + [0] * len(trig_ex))
    # persons only: a match starts with a capital, so the first word's stems need only
    # the Capitalised and UPPER casings (the other words' casings left to the triggers)
    first = sorted({v[:PIECE].encode() for t in texts if (ws := _words(t)) and not ws[0].isascii()
                    for v in _casings(ws[0]) if v[:1].isupper()})
    out["capital stems+triggers"] = ([lit(b) for b in first] + [lit(b) for b in asc] + trig_ex,
                                     [0] * len(first) + [hyperscan.HS_FLAG_CASELESS] * len(asc)
                                     + [0] * len(trig_ex))
    if want is not None and "bounded" in want:  # 66 s to compile: on request only
        words = sorted({v.encode() for w in _longest(texts) if not w.isascii() for v in _casings(w)})
        out["bounded"] = ([pf._bounded(lit(b), b, pf.LEFT | pf.RIGHT) for b in words]
                          + [rb"\b" + lit(b) + rb"\b" for b in asc_whole(texts)],
                          [0] * len(words) + [hyperscan.HS_FLAG_CASELESS] * len(asc_whole(texts)))
    every = stem_ex + gap_ex + trig_ex
    out["design"] = (every, stem_fl + [0] * (len(every) - len(stem_fl)))
    return out


def edges_checked(texts: list[str], db: object, data: bytes, hits: dict[str, int]):
    """A scan of the design's database (ids: the stems, the gap fragments, then the
    triggers: see arms()) whose callback checks the word edges a hit of a stem or a
    fragment needs (tcg.entities.confirm's checks, on the raw bytes); ``hits`` gets
    the survivors."""
    from tcg.entities.confirm import word_after, word_before

    cyr, asc = stems(texts)
    whole = set()
    for w in _longest(texts):
        if len(w) <= PIECE:
            whole |= {w.lower().encode()} if w.isascii() else {v.encode() for v in _casings(w)}
    lits = [*cyr, *asc, *gaps(texts)]
    start = [0 if b[:1] in SEPARATORS else len(b) for b in lits]  # 0: a gap is before it
    end = [b in whole for b in lits]
    framed = b"\n" + data + b"\n"

    def run() -> None:
        kept = [0]

        def on_match(rid: int, _f: int, to: int, _fl: int, _c: object) -> None:
            to -= 1
            if rid < len(lits) and ((start[rid] and word_before(data, to - start[rid]))
                                    or (end[rid] and word_after(data, to))):
                return
            kept[0] += 1

        db.scan(framed, match_event_handler=on_match)  # type: ignore[attr-defined]
        hits["design, edges checked"] = kept[0]

    return run


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--entities", type=int, default=1000)
    ap.add_argument("--size", type=int, default=2, help="MB of prose (default 2)")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--arms", help="comma-separated arm names (default: all)")
    args = ap.parse_args()

    import entity_throughput as et
    import hyperscan

    from tcg.detect.engine import load_detector
    from tcg.keyhash import KeyedHasher
    from tcg.mask import Masker

    ents, n, _ = et.build_entities(args.entities)
    texts = list(ents.matcher._texts)
    data = et.corpus(args.size, True)
    framed = b"\n" + data + b"\n"
    mb = len(data) / 1e6
    want = set(args.arms.split(",")) if args.arms else None
    dbs: dict[str, tuple[object, float, int, int]] = {}
    for name, (ex, fl) in arms(texts, want).items():
        if want is not None and name not in want:
            continue
        t = time.perf_counter()
        db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        db.compile(expressions=ex, ids=list(range(len(ex))), flags=fl)
        dbs[name] = (db, time.perf_counter() - t, len(hyperscan.dumpb(db)), len(ex))
    pre = ents.matcher._prefilter()
    if pre is not None and (want is None or "current" in want):
        dbs["current (null callback)"] = (pre.db, 0.0, 0, 0)

    det = load_detector()
    hasher = KeyedHasher(b"\x00" * 32)
    chunk = 1 << 18

    def masker() -> None:
        m = Masker(det, hasher, "strict")
        for i in range(0, len(data), chunk):
            m.feed(data[i : i + chunk])
        m.flush()

    hits: dict[str, int] = {}

    def scanner(name: str, db: object):
        def run() -> None:
            count = [0]

            def on_match(*_a: object) -> None:
                count[0] += 1

            db.scan(framed, match_event_handler=on_match)  # type: ignore[attr-defined]
            hits[name] = count[0]
        return run

    jobs = {name: scanner(name, db) for name, (db, *_rest) in dbs.items()}
    if "design" in dbs:
        jobs["design, edges checked"] = edges_checked(texts, dbs["design"][0], data, hits)
    if pre is not None and (want is None or "current" in want):
        jobs["current scan() with confirm"] = lambda: hits.__setitem__(
            "current scan() with confirm", len(pre.scan(data) or ()))
    try:
        import ahocorasick_rs as ac
    except ImportError:
        ac = None
    if ac is not None and (want is None or "aho" in want):
        auto = ac.BytesAhoCorasick(stems(texts)[0], implementation=ac.Implementation.DFA)
        jobs["aho-corasick DFA stems"] = lambda: hits.__setitem__(
            "aho-corasick DFA stems", len(auto.find_matches_as_indexes(data, overlapping=True)))
    spent: dict[str, list[float]] = {k: [] for k in ["masker", *jobs]}
    wall: list[float] = []
    for r in range(args.runs):
        order = ["masker", *jobs] if r % 2 == 0 else [*jobs, "masker"][::-1]
        for k in order:
            c, w = time.process_time(), time.perf_counter()
            (masker if k == "masker" else jobs[k])()
            spent[k].append(time.process_time() - c)
            if k == "masker":
                wall.append(time.perf_counter() - w)
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
    m = statistics.median(spent["masker"])
    print(f"{n} entities, {len(texts)} forms, {mb:.1f} MB of Russian prose, {args.runs} runs, "
          f"load {' '.join(load)}")
    print(f"{'strict masker':28s} {1000 * m / mb:7.2f} ms/MB (CPU, all its threads; wall "
          f"{1000 * statistics.median(wall) / mb:.2f} ms/MB)")
    for k in jobs:
        share = statistics.median(100 * x / y for x, y in zip(spent[k], spent["masker"], strict=True))
        db, ct, size, nex = dbs.get(k, (None, 0.0, 0, 0))
        extra = f"  {nex:6d} expressions, compiled in {ct:5.1f} s, {size / 1e6:5.2f} MB" if nex else ""
        print(f"{k:28s} {1000 * statistics.median(spent[k]) / mb:7.2f} ms/MB = {share:5.1f}% of the "
              f"masker; {hits.get(k, 0) / mb:6.0f} hits/MB{extra}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
