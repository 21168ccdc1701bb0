"""Per-command overhead of the station agent.

Compares, side by side in one run (medians of >= 30 runs each):
  tcg_shell run-line true         the full station: policy, decision, event, run
  python -I -m tcg.shell_entry …  the same without the console-script wrapper
  <python> -I -c pass             the bare interpreter (acceptance: station <= 2.0x this)
  bash -c true                    what the shell alone costs

Uses hyperfine when installed (-N, no intermediate shell), else a timing loop.
Runs in a throw-away TCG_HOME (after one warm-up, so caches are warm) with
stdin/stdout not terminals: pipe mode, as for an agent.

Usage: .venv/bin/python bench/overhead.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PY = sys.executable
TCG_SHELL = str(Path(PY).parent / "tcg_shell")
BASH = shutil.which("bash") or "/bin/bash"


def commands() -> dict[str, list[str]]:
    return {
        "tcg_shell run-line true": [TCG_SHELL, "run-line", "--shell", BASH, "true"],
        "python -I -m tcg.shell_entry run-line true": [
            PY, "-I", "-m", "tcg.shell_entry", "run-line", "--shell", BASH, "true"],
        "python -I -c pass": [PY, "-I", "-c", "pass"],
        "bash -c true": [BASH, "-c", "true"],
    }


def with_hyperfine(cmds: dict[str, list[str]], runs: int, env: dict[str, str]) -> dict[str, float]:
    import shlex

    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        argv = ["hyperfine", "-N", "--warmup", "3", "--runs", str(runs), "--export-json", out.name,
                "--style", "none"]
        for name, cmd in cmds.items():
            argv += ["-n", name, shlex.join(cmd)]
        subprocess.run(argv, check=True, env=env, stdout=subprocess.DEVNULL)
        data = json.loads(Path(out.name).read_text())
    return {r["command"]: statistics.median(r["times"]) for r in data["results"]}


def with_loop(cmds: dict[str, list[str]], runs: int, env: dict[str, str]) -> dict[str, float]:
    result = {}
    for name, cmd in cmds.items():
        times = []
        for i in range(runs + 3):
            t = time.perf_counter()
            subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
            if i >= 3:
                times.append(time.perf_counter() - t)
        result[name] = statistics.median(times)
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    home = tempfile.mkdtemp(prefix="tcg-bench-")
    env = dict(os.environ, TCG_HOME=home)
    env.pop("TCG_MEDIATED", None)
    try:
        cmds = commands()
        subprocess.run(cmds["tcg_shell run-line true"], env=env, check=True)  # warm caches
        tool = "hyperfine" if shutil.which("hyperfine") else "loop"
        medians = (with_hyperfine if tool == "hyperfine" else with_loop)(cmds, args.runs, env)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    base = medians["python -I -c pass"]
    print(f"per-command overhead ({tool}, median of {args.runs} runs, load avg "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
    for name, t in medians.items():
        print(f"  {name:45s} {t * 1000:8.1f} ms   {t / base:5.2f}x python -I -c pass")
    ratio = medians["tcg_shell run-line true"] / base
    print(f"acceptance (tcg_shell run-line true <= 2.0x python -I -c pass): "
          f"{'PASS' if ratio <= 2.0 else 'FAIL'} ({ratio:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
