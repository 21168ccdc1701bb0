"""Time of the inbound rule pass over a 5 MB MCP result, against a baseline the proxy
pays anyway: parsing the same result as JSON.

Inputs are real text nobody here wrote: Python's own standard library sources
(the running interpreter's, tests excluded), cut to 5 MB —
- ``mcp-json``: the tool-result frame as JSON (ASCII: non-ASCII escaped), checked as
  one string, the worst case for the rules (every line a candidate window);
- ``source-text``: the same sources as text (some non-ASCII: the nfkc, skeleton and
  invisible paths run too).
Prints medians of several runs, in ms, and the ratio to json.loads of the text as a JSON
string (what the MCP proxy does to every result before the gate sees it).
The machine may be shared: compare ratios, not absolute times, between runs.
Run: ``python bench/inbound_speed.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import glob
import json
import statistics
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


def median_ms(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args(argv)
    from tcg.inbound.engine import InboundEngine
    from tcg.inbound.inspect import inspect
    from tcg.inbound.rules import load_rules

    engine = InboundEngine(load_rules())
    src = corpus()
    frame = json.dumps({"jsonrpc": "2.0", "id": 1,
                        "result": {"content": [{"type": "text", "text": src}]}})[:SIZE]
    cases = {"mcp-json": frame, "source-text": src}
    print(f"engine {engine.engine}; {len(engine.rules)} rules; median of {args.runs} runs",
          file=sys.stderr)
    for name, text in cases.items():
        inspect(engine, text)  # warm: first-use tables
        gate = median_ms(lambda t=text: inspect(engine, t), args.runs)
        encoded = json.dumps({"t": text})
        base = median_ms(lambda e=encoded: json.loads(e), args.runs)
        print(f"{name:<12} {len(text.encode()):>9} bytes  rule pass {gate:7.1f} ms  "
              f"json.loads {base:7.1f} ms  ratio {gate / base:5.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
