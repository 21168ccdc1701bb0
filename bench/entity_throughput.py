#!/usr/bin/env python3
"""What business-entity aliasing adds to the strict masker, with N registered entities.

Same run, same data, interleaved: (A) the strict Masker alone, as an agent's
command output gets it with no registry; (B) the Masker followed by the alias
stream (tcg.entities.stream.Chained) over N entities. The data is the masker
benchmark's corpus (bench/mask_throughput.py: logs, JSON, source code, coloured
tool output, a secret per ~100 KB), fed in 256 KiB chunks as the pipe runner
does. Entities: N names from the OpenCorpora dictionary pymorphy3 ships
(surnames, half of them with a first name; data nobody here wrote), or built
from a syllable table without pymorphy3; forms generated as ``tcg entity add``
does (transliterations included).

    .venv/bin/python bench/entity_throughput.py [--entities 1000] [--size 40] [--runs 5]
    .venv/bin/python bench/entity_throughput.py --russian   # Russian prose instead

Prints medians; the machine is shared, so read the ratio, not the MB/s.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

CHUNK = 1 << 18


def names(n: int) -> list[str]:
    try:
        import itertools

        import pymorphy3

        m = pymorphy3.MorphAnalyzer()
        found: set[str] = set()
        for p in itertools.islice(m.iter_known_word_parses(""), 0, 3_000_000):
            if "Surn" in p.tag and "nomn" in p.tag and "sing" in p.tag and "masc" in p.tag \
                    and p.word == p.normal_form:
                found.add(p.word.capitalize())
                if len(found) >= n * 3:
                    break
        pool = sorted(found)
    except ImportError:
        syl = ["ка", "ре", "ло", "ми", "ан", "то", "ве", "ру", "са", "ни", "до", "ле"]
        r0 = random.Random(5)
        pool = sorted({"".join(r0.choices(syl, k=3)).capitalize() + "ов" for _ in range(n * 3)})
    r = random.Random(7)
    r.shuffle(pool)
    firsts = ["Алексей", "Иван", "Мария", "Ольга", "Дмитрий", "Анна", "Сергей", "Елена"]
    return [f"{firsts[i % len(firsts)]} {s}" if i % 2 else s for i, s in enumerate(pool[:n])]


def build_entities(n: int):
    from tcg.entities.registry import Registry, add_entity
    from tcg.entities.runtime import Entities

    reg = Registry("/bench")
    for v in names(n):
        try:
            add_entity(reg, v, "person", "", backends=("table",))
        except Exception:  # noqa: BLE001 - a duplicate skeleton: skip
            continue
    t = time.perf_counter()
    ents = Entities.from_registry(reg)
    ents.matcher._prefilter()
    return ents, len(reg.entities), time.perf_counter() - t


def corpus(size_mb: int, russian: bool) -> bytes:
    if russian:
        seeds = sorted((Path("/work/shared/seeds")).glob("*.txt")) if Path("/work/shared/seeds").is_dir() else []
        base = b"".join(p.read_bytes() for p in seeds) or ("Договор поставки. " * 1000).encode()
        return (base * (size_mb * 1_000_000 // len(base) + 1))[: size_mb * 1_000_000]
    import mask_throughput as mt

    path = ROOT / "bench" / ".data" / f"entity-corpus-{size_mb}.bin"
    mt.generate(path, size_mb * 1_000_000)
    return path.read_bytes()


def run_once(data: bytes, make) -> float:
    f = make()
    t = time.perf_counter()
    for i in range(0, len(data), CHUNK):
        f.feed(data[i : i + CHUNK])
    f.flush()
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--entities", type=int, default=1000)
    ap.add_argument("--size", type=int, default=40, help="MB of corpus (default 40)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--russian", action="store_true", help="Russian prose (the seeds) as the corpus")
    args = ap.parse_args()

    from tcg.detect.engine import load_detector
    from tcg.entities.stream import AliasStream, Chained
    from tcg.keyhash import KeyedHasher
    from tcg.mask import Masker

    ents, n, compile_s = build_entities(args.entities)
    data = corpus(args.size, args.russian)
    det = load_detector()
    hasher = KeyedHasher(b"\x00" * 32)
    forms = len(ents.matcher._forms)
    print(f"{n} entities, {forms} distinct forms; matcher + prefilter built in {compile_s:.1f} s")

    def plain():
        return Masker(det, hasher, "strict")

    def chained():
        return Chained(Masker(det, hasher, "strict"), AliasStream(ents.matcher))

    def alias_only():
        return AliasStream(ents.matcher)

    ta, tb, tc = [], [], []
    for _ in range(args.runs):  # interleaved: load changes hit all alike
        ta.append(run_once(data, plain))
        tb.append(run_once(data, chained))
        tc.append(run_once(data, alias_only))
    a, b, c = statistics.median(ta), statistics.median(tb), statistics.median(tc)
    mb = len(data) / 1e6
    print(f"(A) strict masker alone:            {mb / a:8.1f} MB/s")
    print(f"(B) masker + aliases ({n} entities): {mb / b:8.1f} MB/s   "
          f"added time {100 * (b - a) / a:+.1f}%   (median of {args.runs}, {mb:.0f} MB, "
          f"{'Russian prose' if args.russian else 'masker corpus'})")
    print(f"(C) alias stream alone:             {mb / c:8.1f} MB/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
