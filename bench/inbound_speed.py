"""Time of the inbound rule pass over a 5 MB MCP result, against baselines measured in
the same run: parsing the same result as JSON (what the proxy pays anyway) and one
case-insensitive Python ``re`` search for a phrase over the same text (what a single
rule costs without a prefilter); and the start-up of ``tcg inbound check`` against
``python -c pass``.

Inputs are real text nobody here wrote: Python's own standard library sources
(the running interpreter's, tests excluded), cut to 5 MB —
- ``mcp-json``: the tool-result frame as JSON (ASCII: non-ASCII escaped), checked as
  one string, the worst case for the rules (every line a candidate window);
- ``source-text``: the same sources as text (some non-ASCII: the nfkc, skeleton and
  invisible paths run too).
Prints medians of several runs, in ms, of wall time and of CPU time (the process's
own: on a shared machine it moves less than wall time), and the ratios to json.loads
of the text as a JSON string (what the MCP proxy does to every result before the gate
sees it) and to the plain ``re`` search. ``--startup`` adds the start-up of ``python -m
tcg inbound check`` on a short text (warm caches, bytecode compiled as after an install;
the runs alternate with ``python -c pass``). The machine may be shared: compare ratios, not absolute times, between runs.
Run: ``python bench/inbound_speed.py [--runs N] [--startup]``.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import sysconfig
import time

SIZE = 5_000_000


def corpus() -> str:
    root = sysconfig.get_paths()["stdlib"]
    parts, size = [], 0
    for path in sorted(glob.glob(root + "/**/*.py", recursive=True)):
        if "/test" in path:
            continue
        with open(path, encoding="utf-8", errors="replace") as fh:
            parts.append(fh.read())
        size += len(parts[-1])
        if size > SIZE:
            break
    return "".join(parts)[:SIZE]


def medians_ms(fn, runs: int) -> tuple[float, float]:
    """(wall, CPU) medians in ms."""
    wall, cpu = [], []
    for _ in range(runs):
        w, c = time.perf_counter(), time.process_time()
        fn()
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
    return statistics.median(wall) * 1000, statistics.median(cpu) * 1000


def startup(runs: int) -> None:
    """Medians of ``python -m tcg inbound check`` and ``python -c pass``, alternating."""
    check = [sys.executable, "-m", "tcg", "inbound", "check"]
    times: dict[str, list[float]] = {"python -c pass": [], "tcg inbound check": []}
    # an installed package has its bytecode compiled; PYTHONDONTWRITEBYTECODE would make
    # every run compile every module again
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(check, input=b"warm the cache", capture_output=True, check=False, env=env)
    for _ in range(runs):
        for name, cmd in (("python -c pass", [sys.executable, "-c", "pass"]),
                          ("tcg inbound check", check)):
            start = time.perf_counter()
            subprocess.run(cmd, input=b"hello world", capture_output=True, check=False, env=env)
            times[name].append(time.perf_counter() - start)
    base = statistics.median(times["python -c pass"]) * 1000
    gate = statistics.median(times["tcg inbound check"]) * 1000
    print(f"start-up     tcg inbound check {gate:7.1f} ms  python -c pass {base:7.1f} ms  "
          f"ratio {gate / base:5.2f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--startup", action="store_true", help="also time the command's start-up")
    args = ap.parse_args(argv)
    from tcg.inbound.engine import load_engine
    from tcg.inbound.inspect import inspect

    engine = load_engine()
    src = corpus()
    frame = json.dumps({"jsonrpc": "2.0", "id": 1,
                        "result": {"content": [{"type": "text", "text": src}]}})[:SIZE]
    cases = {"mcp-json": frame, "source-text": src}
    phrase = re.compile(r"ignore\s+(?:all\s+)?previous\s+instructions", re.IGNORECASE)
    print(f"engine {engine.engine}; {len(engine.rules)} rules; median of {args.runs} runs; "
          "wall ms (CPU ms)", file=sys.stderr)
    for name, text in cases.items():
        inspect(engine, text)  # warm: first-use tables and patterns
        gate, gate_cpu = medians_ms(lambda t=text: inspect(engine, t), args.runs)
        encoded = json.dumps({"t": text})
        base, base_cpu = medians_ms(lambda e=encoded: json.loads(e), args.runs)
        plain, plain_cpu = medians_ms(lambda t=text: phrase.search(t), args.runs)
        print(f"{name:<12} {len(text.encode()):>9} bytes  rule pass {gate:6.1f} ({gate_cpu:5.1f})  "
              f"json.loads {base:5.1f} ({base_cpu:5.1f})  plain re {plain:6.1f} ({plain_cpu:5.1f})  "
              f"ratio to json {gate_cpu / base_cpu:5.2f}  to re {gate_cpu / plain_cpu:5.2f} (CPU)")
    if args.startup:
        startup(args.runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
