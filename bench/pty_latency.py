#!/usr/bin/env python3
"""Latency of a short command in PTY mode: time to the first output byte and
to exit of `tcg_shell run-line 'echo hello'` driven by pexpect, with the masking
process (the default) and with the in-process masker (TCG_MASK_WORKER=0), beside
bare `bash -c 'echo hello'` in the same PTY setup. Medians; interleaved runs.

    .venv/bin/python bench/pty_latency.py [--runs 9]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

import pexpect

TCG_SHELL = str(Path(sys.executable).with_name("tcg_shell"))
BASH = shutil.which("bash") or "/bin/bash"


def one(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    start = time.perf_counter()
    child = pexpect.spawn(argv[0], argv[1:], env=env, timeout=60)
    child.expect("hello")
    first = time.perf_counter() - start
    child.expect(pexpect.EOF)
    done = time.perf_counter() - start
    child.close()
    return first, done


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=9)
    a = ap.parse_args()
    base = dict(os.environ, TERM="xterm")
    arms = {
        "bash -c (no tcg)": ([BASH, "-c", "echo hello"], base),
        "tcg_shell, masking process": ([TCG_SHELL, "run-line", "--shell", BASH, "echo hello"], base),
        "tcg_shell, in-process masker": ([TCG_SHELL, "run-line", "--shell", BASH, "echo hello"],
                                         dict(base, TCG_MASK_WORKER="0")),
    }
    results: dict[str, list[tuple[float, float]]] = {k: [] for k in arms}
    for _ in range(a.runs):
        for name, (argv, env) in arms.items():
            results[name].append(one(argv, env))
    print(f"PTY latency of `echo hello`, median of {a.runs} interleaved runs "
          f"(load avg {os.getloadavg()[0]:.1f})")
    for name, rows in results.items():
        first = statistics.median(r[0] for r in rows) * 1e3
        done = statistics.median(r[1] for r in rows) * 1e3
        print(f"  {name:30s} first output {first:6.1f} ms   exit {done:6.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
