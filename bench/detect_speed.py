"""Detection throughput: Detector.find_bytes over >= 100 MB of realistic text.

Builds (once, deterministically) bench/.data/detect-clean.bin from the Python
stdlib sources on this machine, synthesized application logs and JSON, and
bench/.data/detect-secrets.bin = the same text with a rule example planted
every ~100 KB. Prints the median MB/s of ``find_bytes`` (hyperscan engine and the
``re`` fallback) next to the floor: one plain ``re.search`` for one absent
literal over the same bytes in the same process, and the ratio.

    .venv/bin/python bench/detect_speed.py [--mb 100] [--runs 5]

Targets: >= 300 MB/s without secrets, >= 100 MB/s with a secret every 100 KB.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
DATA = ROOT / ".data"
sys.path.insert(0, str(ROOT.parent))

from tcg.detect.engine import Detector  # noqa: E402
from tcg.detect.hsdb import hyperscan_available  # noqa: E402
from tcg.detect.rule import load_rules  # noqa: E402

SECRET_EVERY = 100_000


def _stdlib_sources() -> list[bytes]:
    lib = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in lib.rglob("*.py") if "site-packages" not in p.parts)
    out = []
    for p in files:
        try:
            out.append(p.read_bytes())
        except OSError:
            continue
    return out


def _logs(rnd: random.Random, n: int) -> bytes:
    levels = ["INFO", "DEBUG", "WARN", "ERROR"]
    paths = ["/api/v1/users", "/healthz", "/api/v1/orders/{}", "/static/app.{}.js", "/login"]
    lines = []
    for i in range(n):
        ts = f"2026-11-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:{(i * 7) % 60:02d}.{i % 1000:03d}Z"
        path = rnd.choice(paths).format(rnd.randrange(10_000))
        lines.append(
            f"{ts} {rnd.choice(levels)} [{rnd.choice(['web', 'worker', 'db'])}-{rnd.randrange(8)}] "
            f"req={rnd.getrandbits(64):016x} method=GET path={path} status={rnd.choice([200, 201, 404, 500])} "
            f"dur_ms={rnd.randrange(1, 900)} ua=\"Mozilla/5.0 (X11; Linux x86_64)\" sha={rnd.getrandbits(160):040x}"
        )
    return ("\n".join(lines) + "\n").encode()


def _json(rnd: random.Random, n: int) -> bytes:
    items = []
    for i in range(n):
        items.append({
            "id": i, "uuid": f"{rnd.getrandbits(128):032x}", "name": f"item-{rnd.randrange(10**6)}",
            "price": round(rnd.random() * 1000, 2), "tags": rnd.sample(["a", "b", "c", "d", "e"], 2),
            "created": f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}", "active": bool(i % 2),
        })
    return json.dumps(items, indent=1).encode()


def build_corpus(mb: int) -> tuple[Path, Path]:
    DATA.mkdir(parents=True, exist_ok=True)
    clean, dirty = DATA / f"detect-clean-{mb}.bin", DATA / f"detect-secrets-{mb}.bin"
    if clean.exists() and dirty.exists():
        return clean, dirty
    rnd = random.Random(20261129)
    target = mb * 1_000_000
    sources = _stdlib_sources()
    parts: list[bytes] = []
    size = 0
    i = 0
    while size < target:
        kind = i % 5
        chunk = sources[(i * 7919) % len(sources)] if kind < 3 else (_logs(rnd, 800) if kind == 3 else _json(rnd, 300))
        parts.append(chunk)
        size += len(chunk)
        i += 1
    data = b"".join(parts)[:target]
    clean.write_bytes(data)
    examples = [r.examples_match[0].encode() for r in load_rules() if r.category == "secret"]
    out = bytearray()
    pos = 0
    k = 0
    while pos < len(data):
        nxt = min(len(data), pos + SECRET_EVERY)
        cut = data.rfind(b"\n", pos, nxt)
        cut = nxt if cut <= pos else cut + 1
        out += data[pos:cut] + examples[k % len(examples)] + b"\n"
        pos = cut
        k += 1
    dirty.write_bytes(bytes(out))
    return clean, dirty


def _measure(fn, floor_fn, runs: int) -> tuple[float, float, float, float]:
    """Interleaved runs of ``fn`` and the floor, so both see the same machine load.
    Returns median (wall s, cpu s, wall ratio floor/fn, floor wall s)."""
    walls, cpus, ratios, floors = [], [], [], []
    for _ in range(runs):
        t = time.perf_counter()
        floor_fn()
        fw = time.perf_counter() - t
        t, c = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
        floors.append(fw)
        ratios.append(fw / walls[-1])
    return (statistics.median(walls), statistics.median(cpus), statistics.median(ratios),
            statistics.median(floors))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--re-mb", type=int, default=10, help="MB used for the slow re-fallback figure")
    args = ap.parse_args()
    clean_p, dirty_p = build_corpus(args.mb)
    rules = load_rules()
    t = time.perf_counter()
    hs = Detector.from_rules(rules, engine="hyperscan") if hyperscan_available() else None
    compile_s = time.perf_counter() - t
    plain = Detector.from_rules(rules, engine="re")
    print(f"rules: {len(rules)}  max_match_len: {plain.max_match_len} bytes")
    if hs is not None:
        print(f"hyperscan: {len(hs.hyperscan_rules)} rules in the database, compile {compile_s:.2f} s"
              f" (keyword+re path: {sorted(set(r.id for r in rules) - set(hs.hyperscan_rules))})")
    literal = re.compile(re.escape(b"tcg-floor-literal-not-present"))
    print(f"machine: 2 cores shared with other engineers (load average {os.getloadavg()[0]:.1f}); "
          f"medians of {args.runs} interleaved runs; cpu = process CPU time, less load-sensitive\n")
    print(f"{'corpus':<21}{'MB':>5}{'floor MB/s':>11}{'engine':>10}{'wall MB/s':>10}{'cpu MB/s':>9}"
          f"{'ratio':>7}{'findings':>9}")
    for label, path in (("no secrets", clean_p), ("secret every 100 KB", dirty_p)):
        data = path.read_bytes()
        engines = [("hyperscan", hs, data)] if hs is not None else []
        engines.append(("re", plain, data[: args.re_mb * 1_000_000]))
        for name, det, buf in engines:
            mb = len(buf) / 1e6
            count = len(det.find_bytes(buf))
            runs = args.runs if name == "hyperscan" else max(1, min(args.runs, 3))
            wall, cpu, ratio, floor = _measure(lambda det=det, buf=buf: det.find_bytes(buf),
                                               lambda buf=buf: literal.search(buf), runs)
            print(f"{label:<21}{mb:>5.0f}{mb / floor:>11.0f}{name:>10}{mb / wall:>10.0f}{mb / cpu:>9.0f}"
                  f"{ratio:>7.3f}{count:>9}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
