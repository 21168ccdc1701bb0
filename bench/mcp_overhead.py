"""MCP proxy overhead: per-call latency through `tcg mcp-proxy` vs the same server direct.

Three sessions of the official MCP SDK client stay open side by side against
tests/mcp/server.py: direct, through a bare byte relay (tests/mcp/tap.py — what
any Python relay costs, for context) and through the proxy. Rounds alternate
between them (the order rotates every round), so machine load hits all arms
alike. Prints medians, their ratios proxy/direct, and the median of the
per-round ratios (each round's three calls ran back to back, so this one is
the least sensitive to load drifting during the run).

    .venv/bin/python bench/mcp_overhead.py [--small 200] [--large 5] [--mb 5]

Targets: <= 1.5x direct for small calls, <= 1.2x for 5 MB reads.
TCG_HOME defaults to a temporary directory (events of the run go there).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SERVER = str(ROOT / "tests" / "mcp" / "server.py")
TAP = str(ROOT / "tests" / "mcp" / "tap.py")


def _argvs() -> dict[str, list[str]]:
    py = sys.executable
    return {
        "direct": [py, SERVER],
        "relay": [py, TAP, os.devnull, "--", py, SERVER],
        "proxy": [py, "-m", "tcg", "mcp-proxy", "--", py, SERVER],
    }


async def _run(small: int, large: int, size: int) -> dict[str, dict[str, list[float]]]:
    from contextlib import AsyncExitStack

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    times: dict[str, dict[str, list[float]]] = {}
    async with AsyncExitStack() as stack:
        clients = {}
        for name, argv in _argvs().items():
            params = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
            clients[name] = await stack.enter_async_context(Client(params, mode="legacy"))
            times[name] = {"small": [], "large": []}
        names = list(clients)
        for c in clients.values():  # warm-up: imports, first-call paths
            await c.call_tool("echo", {"text": "warm"})
            await c.call_tool("big", {"size": 100_000})
        for kind, rounds, args in (("small", small, ("echo", {"text": "hello world"})),
                                   ("large", large, ("big", {"size": size}))):
            for i in range(rounds):
                order = names[i % len(names):] + names[:i % len(names)]
                for name in order:
                    t = time.perf_counter()
                    r = await clients[name].call_tool(*args)
                    times[name][kind].append(time.perf_counter() - t)
                    assert not r.is_error
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--small", type=int, default=200, help="small calls per arm (>= 200 for the target)")
    ap.add_argument("--large", type=int, default=5, help="large reads per arm (>= 5)")
    ap.add_argument("--mb", type=float, default=5.0, help="size of a large read in MB")
    args = ap.parse_args()
    os.environ.setdefault("TCG_HOME", tempfile.mkdtemp(prefix="tcg-bench-"))

    import anyio

    times = anyio.run(_run, args.small, args.large, int(args.mb * 1_000_000))
    med = {n: {k: statistics.median(v) for k, v in d.items()} for n, d in times.items()}
    print(f"MCP proxy overhead (medians; {args.small} small calls, {args.large} x {args.mb:g} MB reads "
          f"per arm; rounds alternate; load average {os.getloadavg()[0]:.1f})")
    for kind in ("small", "large"):
        d, r, p = med["direct"][kind], med["relay"][kind], med["proxy"][kind]
        print(f"  {kind:5}  direct {d * 1000:9.2f} ms   bare relay {r * 1000:9.2f} ms ({r / d:4.2f}x)"
              f"   tcg mcp-proxy {p * 1000:9.2f} ms ({p / d:4.2f}x)")
    print(f"ratio proxy/direct: small {med['proxy']['small'] / med['direct']['small']:.2f}x (target <= 1.5x), "
          f"{args.mb:g} MB {med['proxy']['large'] / med['direct']['large']:.2f}x (target <= 1.2x)")

    def paired(kind: str, arm: str) -> float:  # per-round ratio: robust to load drifting during the run
        return statistics.median(p / d for p, d in zip(times[arm][kind], times["direct"][kind], strict=True))

    print(f"median of per-round ratios: small proxy {paired('small', 'proxy'):.2f}x (relay "
          f"{paired('small', 'relay'):.2f}x), {args.mb:g} MB proxy {paired('large', 'proxy'):.2f}x "
          f"(relay {paired('large', 'relay'):.2f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
