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
    .venv/bin/python bench/entity_throughput.py --baseline-tree /tmp/base   # A/B against a checkout

With ``--baseline-tree`` two worker processes (this tree's tcg and the other
tree's, same bench code, same corpus and entities) take turns, one measurement
at a time, so both see the same load; each reports (A) and (B) as above.

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
BENCH = Path(__file__).resolve().parent
# a worker for --baseline-tree imports tcg from the tree it is given
TREE = Path(sys.argv[sys.argv.index("--tree") + 1]) if "--tree" in sys.argv else ROOT
sys.path.insert(0, str(TREE))
sys.path.insert(0, str(BENCH))

CHUNK = 1 << 18
# the last split run: seconds in the masker, in the alias stream (wall), and the same in
# CPU time of all the process's threads (the masker's helper thread too; what other
# processes on a shared machine disturb least)
SPENT = [0.0, 0.0, 0.0, 0.0]


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

    path = BENCH / ".data" / f"entity-corpus-{size_mb}.bin"
    mt.generate(path, size_mb * 1_000_000)
    return path.read_bytes()


def run_once(data: bytes, make) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process: all its threads)."""
    f = make()
    t, c = time.perf_counter(), time.process_time()
    for i in range(0, len(data), CHUNK):
        f.feed(data[i : i + CHUNK])
    f.flush()
    return time.perf_counter() - t, time.process_time() - c


def filters(args: argparse.Namespace):
    """(entities, corpus, {name: a fresh filter}) for this process's tcg."""
    from tcg.detect.engine import load_detector
    from tcg.entities.stream import AliasStream, Chained
    from tcg.keyhash import KeyedHasher
    from tcg.mask import Masker

    ents, n, compile_s = build_entities(args.entities)
    data = corpus(args.size, args.russian)
    det = load_detector()
    hasher = KeyedHasher(b"\x00" * 32)
    forms = len(ents.matcher._forms)
    import tcg

    print(f"{Path(tcg.__file__).parent}: {n} entities, {forms} distinct forms; "
          f"matcher + prefilter built in {compile_s:.1f} s", file=sys.stderr)

    class Split(Chained):
        """Chained, timing its two stages apart (chunk by chunk, so both see the same load)."""

        def feed(self, data: bytes) -> bytes:
            c0, t0 = time.process_time(), time.perf_counter()
            mid = self.first.feed(data)  # type: ignore[attr-defined]
            t1, c1 = time.perf_counter(), time.process_time()
            out = self.second.feed(mid)
            c2, t2 = time.process_time(), time.perf_counter()
            SPENT[0] += t1 - t0
            SPENT[1] += t2 - t1
            SPENT[2] += c1 - c0
            SPENT[3] += c2 - c1
            return out

    def split() -> Split:
        SPENT[:] = [0.0, 0.0, 0.0, 0.0]
        return Split(Masker(det, hasher, "strict"), AliasStream(ents.matcher))

    makers = {
        "A": lambda: Masker(det, hasher, "strict"),
        "S": split,
        "B": lambda: Chained(Masker(det, hasher, "strict"), AliasStream(ents.matcher)),
        "C": lambda: AliasStream(ents.matcher),
    }
    return n, data, makers


def worker(args: argparse.Namespace) -> int:
    """Measure on request: a line "A"/"B"/"C"/"S" in, the seconds out."""
    _n, data, makers = filters(args)
    print("ready", flush=True)
    for line in sys.stdin:
        what = line.strip()
        if what == "S":  # (masker, alias stage) seconds of one run, wall then CPU, flush left out
            run_once(data, makers["S"])
            print(*SPENT, flush=True)
        else:
            print(*run_once(data, makers[what]), flush=True)
    return 0


def report(mb: float, n: int, runs: int, what: str, t: dict[str, list[tuple[float, ...]]]) -> None:
    """Medians of wall time (throughput) and of CPU time (what the shared machine's
    load disturbs least), and the added time of each back-to-back (A, B) pair."""
    def med(k: str, i: int) -> float:
        return statistics.median(x[i] for x in t[k])

    a, b = med("A", 0), med("B", 0)
    print(f"(A) strict masker alone:            {mb / a:8.1f} MB/s")
    print(f"(B) masker + aliases ({n} entities): {mb / b:8.1f} MB/s   "
          f"added time {100 * (b - a) / a:+.1f}%   (median of {runs}, {mb:.0f} MB, {what})")
    for i, name in ((0, "wall"), (1, "CPU ")):
        pairs = [100 * (y[i] - x[i]) / x[i] for x, y in zip(t["A"], t["B"], strict=True)]
        print(f"    {name}: added {100 * (med('B', i) - med('A', i)) / med('A', i):+.1f}% (medians); "
              f"per pair: median {statistics.median(pairs):+.1f}%  "
              f"({', '.join(f'{p:+.1f}' for p in pairs)})")
    if t.get("S"):
        for i, name in ((0, "wall"), (2, "CPU, all threads")):
            shares = [100 * x[i + 1] / x[i] for x in t["S"]]
            print(f"    (B) timed stage by stage, chunk by chunk ({name}): the alias stream's "
                  f"time = {statistics.median(shares):+.1f}% of the masker's (median; "
                  f"{', '.join(f'{x:.1f}' for x in shares)})")
    if t.get("C"):
        print(f"(C) alias stream alone:             {mb / med('C', 0):8.1f} MB/s")


def ab(args: argparse.Namespace) -> int:
    """This tree against --baseline-tree, turn by turn."""
    import os
    import subprocess

    corpus(args.size, args.russian)  # written once, read by both workers
    cmd = [sys.executable, str(Path(__file__).resolve()), "--entities", str(args.entities),
           "--size", str(args.size), *(["--russian"] if args.russian else [])]
    trees = {"base": Path(args.baseline_tree).resolve(), "this": ROOT}
    env = {**os.environ, "PYTHONPATH": ""}
    procs = {k: subprocess.Popen([*cmd, "--tree", str(v)], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True, env=env)
             for k, v in trees.items()}
    try:
        for p in procs.values():
            assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        times: dict[str, dict[str, list[tuple[float, ...]]]] = {
            k: {"A": [], "B": [], "S": []} for k in procs}
        for r in range(args.runs):
            order = list(procs) if r % 2 == 0 else list(reversed(procs))
            for k in order:
                for what in ("A", "B", "S") if r % 2 == 0 else ("B", "A", "S"):
                    p = procs[k]
                    assert p.stdin is not None and p.stdout is not None
                    p.stdin.write(what + "\n")
                    p.stdin.flush()
                    times[k][what].append(tuple(float(v) for v in p.stdout.readline().split()))
    finally:
        for p in procs.values():
            if p.stdin is not None:
                p.stdin.close()
            p.wait()
    mb = len(corpus(args.size, args.russian)) / 1e6
    what = "Russian prose" if args.russian else "masker corpus"
    n = args.entities
    for k, tree in trees.items():
        print(f"--- {k}: {tree}")
        report(mb, n, args.runs, what, times[k])
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--entities", type=int, default=1000)
    ap.add_argument("--size", type=int, default=40, help="MB of corpus (default 40)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--russian", action="store_true", help="Russian prose (the seeds) as the corpus")
    ap.add_argument("--baseline-tree", metavar="DIR",
                    help="another checkout of tcg to measure against, turn by turn")
    ap.add_argument("--tree", help=argparse.SUPPRESS)  # a worker: tcg from this tree
    args = ap.parse_args()
    if args.tree:
        return worker(args)
    if args.baseline_tree:
        return ab(args)

    n, data, makers = filters(args)
    t: dict[str, list[tuple[float, ...]]] = {"A": [], "B": [], "C": [], "S": []}
    for _ in range(args.runs):  # interleaved: load changes hit all alike
        for k in t:
            t[k].append(run_once(data, makers[k]))
            if k == "S":
                t[k][-1] = tuple(SPENT)
    report(len(data) / 1e6, n, args.runs,
           "Russian prose" if args.russian else "masker corpus", t)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
