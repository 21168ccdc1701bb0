#!/usr/bin/env python3
"""Masking throughput: `tcg mask` vs `cat`, and the in-process masker
vs a bare bytes copy loop, on realistic terminal output with one secret per ~100 KB.

    .venv/bin/python bench/mask_throughput.py            # 200 MB, 5 runs each, strict
    .venv/bin/python bench/mask_throughput.py --mode terminal --size 50
    .venv/bin/python bench/mask_throughput.py --rss 2048 # peak RSS of `tcg mask` over a 2 GB pipe

Prints medians (the machine is shared: compare ratios measured in the same run,
not absolute numbers across runs). Data lives in bench/.data/ (gitignored).
"""

from __future__ import annotations

import argparse
import random
import statistics
import string
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / ".data"
TCG = str(Path(sys.executable).with_name("tcg"))
CHUNK = 65536


def _secret(r: random.Random) -> bytes:
    up = string.ascii_uppercase + "234567"
    an = string.ascii_letters + string.digits
    kind = r.randrange(4)
    if kind == 0:
        return ("export AWS_ACCESS_KEY_ID=AKIA" + "".join(r.choices(up, k=16))).encode()
    if kind == 1:
        return ("GITHUB_TOKEN=ghp_" + "".join(r.choices(an, k=36))).encode()
    if kind == 2:
        return ('{"api_key": "sk-proj-' + "".join(r.choices(an + "-_", k=120)) + '"}').encode()
    return ("Authorization: Bearer glpat-" + "".join(r.choices(an, k=20))).encode()


def _blocks(r: random.Random) -> list[bytes]:
    words = ["request", "served", "user", "item", "cache", "miss", "ok", "retry", "timeout",
             "config", "loaded", "worker", "started", "GET", "POST", "/api/v1/items", "200", "404"]
    out = []
    for i in range(400):  # logs
        out.append(f"2026-01-0{i % 9 + 1}T12:{i % 60:02d}:00Z INFO {' '.join(r.choices(words, k=8))} "
                   f"ms={r.randrange(999)}\n".encode())
    for i in range(200):  # JSON
        name = "".join(r.choices(string.ascii_lowercase, k=12))
        out.append(f'{{"id": {i}, "name": "{name}", "tags": ["a", "b"], "score": {r.random():f}, '
                   f'"ok": true}}\n'.encode())
    src = Path(__file__).read_bytes() + (ROOT / "tcg" / "mask" / "masker.py").read_bytes()
    out += [line + b"\n" for line in src.splitlines()]  # source code
    for i in range(50):  # coloured tool output
        out.append(f"\x1b[01;34mdir{i}\x1b[0m  \x1b[01;32mrun.sh\x1b[0m  file{i}.txt\r\n".encode())
    return out


def generate(path: Path, size: int, seed: int = 1) -> None:
    if path.exists() and path.stat().st_size == size:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    r = random.Random(seed)
    blocks = _blocks(r)
    with open(path, "wb") as fh:
        written = 0
        while written < size:
            part = b"".join(r.choices(blocks, k=1200))[: 100_000]  # ~100 KB
            part += _secret(r) + b"\n"
            part = part[: size - written]
            fh.write(part)
            written += len(part)


def _time(cmd: list[str], path: Path) -> float:
    with open(path, "rb") as src:
        t = time.perf_counter()
        subprocess.run(cmd, stdin=src, stdout=subprocess.DEVNULL, check=True)
        return time.perf_counter() - t


def bench_cli(path: Path, runs: int, mode: str) -> None:
    size = path.stat().st_size / 1e6
    tcg, cat = [], []
    for _ in range(runs):  # interleaved so load changes hit both alike
        cat.append(_time(["cat"], path))
        tcg.append(_time([TCG, "mask", "--mode", mode], path))
    mt, mc = statistics.median(tcg), statistics.median(cat)
    print(f"(a) tcg mask --mode {mode}: {size / mt:8.1f} MB/s   cat: {size / mc:8.1f} MB/s   "
          f"ratio tcg/cat time = {mt / mc:.1f}x   (median of {runs}, {size:.0f} MB)")


def bench_inproc(path: Path, runs: int, mode: str, limit: int) -> None:
    sys.path.insert(0, str(ROOT))
    from tcg.detect.engine import load_detector
    from tcg.keyhash import KeyedHasher
    from tcg.mask import Masker

    with open(path, "rb") as fh:
        data = fh.read(limit)
    chunks = [data[i : i + CHUNK] for i in range(0, len(data), CHUNK)]
    det = load_detector()
    hasher = KeyedHasher(b"\x00" * 32)
    size = len(data) / 1e6
    tm, tc = [], []
    for _ in range(runs):
        t = time.perf_counter()
        sink = bytearray()
        for c in chunks:
            sink += bytes(c)
        tc.append(time.perf_counter() - t)
        m = Masker(det, hasher, mode)
        t = time.perf_counter()
        n = 0
        for c in chunks:
            n += len(m.feed(c))
        n += len(m.flush())
        tm.append(time.perf_counter() - t)
    mm, mc = statistics.median(tm), statistics.median(tc)
    print(f"(b) Masker.feed ({det.engine}, {mode}): {size / mm:8.1f} MB/s   bytes copy loop: "
          f"{size / mc:8.1f} MB/s   ratio = {mm / mc:.0f}x   (median of {runs}, {size:.0f} MB)")


def bench_rss(megabytes: int, mode: str) -> None:
    prog = (f"import sys; from tcg.cli import main; rc = main(['mask', '--mode', {mode!r}]); "
            "s = open('/proc/self/status').read(); "
            "sys.stderr.write([l for l in s.splitlines() if l.startswith('VmHWM')][0]); sys.exit(rc)")
    r = random.Random(2)
    blocks = _blocks(r)
    block = b"".join(r.choices(blocks, k=1200))[:100_000] + _secret(r) + b"\n"
    p = subprocess.Popen([sys.executable, "-c", prog], stdin=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert p.stdin is not None and p.stderr is not None
    total = megabytes * 1_000_000
    sent = 0
    t = time.perf_counter()
    while sent < total:
        p.stdin.write(block)
        sent += len(block)
    p.stdin.close()
    err = p.stderr.read().decode()
    rc = p.wait()
    dt = time.perf_counter() - t
    print(f"(c) RSS: {sent / 1e6:.0f} MB piped through tcg mask --mode {mode} in {dt:.0f} s "
          f"({sent / 1e6 / dt:.1f} MB/s), rc={rc}, peak {err.strip()}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=200, help="MB of test data (default 200)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--mode", choices=["strict", "terminal"], default="strict")
    ap.add_argument("--inproc-mb", type=int, default=50, help="MB for the in-process part (b)")
    ap.add_argument("--rss", type=int, default=0, metavar="MB", help="only run the RSS check over MB")
    a = ap.parse_args()
    if a.rss:
        bench_rss(a.rss, a.mode)
        return 0
    path = DATA / f"terminal-{a.size}m.txt"
    generate(path, a.size * 1_000_000)
    bench_cli(path, a.runs, a.mode)
    bench_inproc(path, a.runs, a.mode, a.inproc_mb * 1_000_000)
    return 0


if __name__ == "__main__":
    sys.exit(main())
