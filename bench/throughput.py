"""Bulk output through the station agent.

  PTY mode:  tcg_shell run-line 'cat big.txt'   vs  script -qfc 'cat big.txt' /dev/null
             (both started on the same outer PTY, which this script drains: one
             terminal hop each, as in a real terminal)
  pipe mode: tcg_shell run-line 'cat big.txt' > /dev/null  vs  cat big.txt | cat > /dev/null

Targets: PTY masked >= 0.8x script; pipe masked >= 150 MB/s. The
masker's own speed bounds both; bench/mask_throughput.py isolates it.
The text is made of ordinary words and numbers (no secrets), generated once.

Usage: .venv/bin/python bench/throughput.py [--mb 200] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import random
import select
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
WORDS = ("the quick brown fox jumps over lazy dog build test deploy error warning info debug "
         "request response server client cache index value table row column 404 200 17 3.14").split()


# The station's copy loops with an identity filter: what the runner itself costs.
RUNNER_ONLY = """
import os, sys
from tcg.runner.base import IdentityFilter
if os.isatty(0) and os.isatty(1):
    from tcg.runner.loop import run_pty
    sys.exit(run_pty(sys.argv[1:2] + ["-c", sys.argv[2]], dict(os.environ), IdentityFilter()))
from tcg.runner.pipes import run_pipes
sys.exit(run_pipes(sys.argv[1:2] + ["-c", sys.argv[2]], dict(os.environ), IdentityFilter(),
                   IdentityFilter()))
"""


def make_text(path: Path, size: int) -> None:
    rng = random.Random(4)
    lines = []
    block_size = 0
    while block_size < 1 << 20:
        line = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 16))) + "\n"
        lines.append(line)
        block_size += len(line)
    block = "".join(lines).encode()
    with open(path, "wb") as fh:
        written = 0
        while written < size:
            chunk = block[: size - written]
            fh.write(chunk)
            written += len(chunk)


def on_outer_pty(argv: list[str], env: dict[str, str]) -> float:
    """Run ``argv`` with a PTY as stdin/stdout/stderr; drain it; return seconds."""
    master, slave = os.openpty()
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env,
                            start_new_session=True)
    os.close(slave)
    while True:
        r, _, _ = select.select([master], [], [], 1.0)
        if not r:
            if proc.poll() is not None:
                break
            continue
        try:
            if not os.read(master, 1 << 16):
                break
        except OSError:
            break
    proc.wait()
    elapsed = time.perf_counter() - start
    os.close(master)
    if proc.returncode != 0:
        raise SystemExit(f"{argv} failed with {proc.returncode}")
    return elapsed


def machine_cpu_seconds() -> float | None:
    """CPU time the whole machine has spent busy since boot, from /proc/stat: user,
    nice, system, irq and softirq (guest time is inside user). Idle, I/O wait and a
    virtual machine's steal (time its host ran something else) are not this
    machine's work. None where there is no /proc (macOS)."""
    try:
        with open("/proc/stat") as fh:
            fields = [int(x) for x in fh.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    user, nice, system, _idle, _iowait, irq, softirq = fields[:7]
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def on_outer_pty_cpu(argv: list[str], env: dict[str, str]) -> tuple[float, float | None]:
    """``on_outer_pty`` and the CPU the machine spent meanwhile (this drain, the
    command, the kernel's terminal work, and whatever else ran): on a machine whose
    CPUs are all busy, throughput follows the CPU each arm needs."""
    before = machine_cpu_seconds()
    elapsed = on_outer_pty(argv, env)
    after = machine_cpu_seconds()
    return elapsed, None if before is None or after is None else after - before


def piped(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, env=env, check=True)
    return time.perf_counter() - start


def median_of(runs: int, fn, *args) -> float:
    return statistics.median(fn(*args) for _ in range(runs))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=200, help="size of the text in MB (10^6 bytes)")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tcg-tput-"))
    env = dict(os.environ, TCG_HOME=str(work / "home"), TERM="xterm")
    env.pop("TCG_MEDIATED", None)
    try:
        big = work / "big.txt"
        size = args.mb * 1_000_000
        make_text(big, size)
        line = f"cat '{big}'"
        tcg = [TCG_SHELL, "run-line", "--shell", BASH, line]
        piped([TCG_SHELL, "run-line", "--shell", BASH, "echo warm"], env)  # warm caches
        unmasked = [PY, "-c", RUNNER_ONLY, BASH, line]
        results = {
            "pty  script -qfc": median_of(args.runs, on_outer_pty,
                                          ["script", "-qfc", line, "/dev/null"], env),
            "pty  tcg runner, no masker": median_of(args.runs, on_outer_pty, unmasked, env),
            "pty  tcg_shell (masked)": median_of(args.runs, on_outer_pty, tcg, env),
            "pipe cat | cat": median_of(args.runs, piped, [BASH, "-c", f"{line} | cat"], env),
            "pipe tcg runner, no masker": median_of(args.runs, piped, unmasked, env),
            "pipe tcg_shell (masked)": median_of(args.runs, piped, tcg, env),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"throughput, {args.mb} MB of text, median of {args.runs} runs "
          f"(load avg {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
    for name, t in results.items():
        print(f"  {name:26s} {t:8.2f} s  {size / t / 1e6:8.1f} MB/s")
    pty_ratio = results["pty  script -qfc"] / results["pty  tcg_shell (masked)"]
    pipe_mbs = size / results["pipe tcg_shell (masked)"] / 1e6
    pipe_ratio = results["pipe cat | cat"] / results["pipe tcg_shell (masked)"]
    loop_ratio = results["pty  script -qfc"] / results["pty  tcg runner, no masker"]
    print(f"PTY: runner alone = {loop_ratio:.2f}x script's throughput")
    print(f"PTY: tcg = {pty_ratio:.2f}x script's throughput (target >= 0.8x): "
          f"{'PASS' if pty_ratio >= 0.8 else 'FAIL'}")
    print(f"pipe: tcg = {pipe_mbs:.1f} MB/s (target >= 150 MB/s): "
          f"{'PASS' if pipe_mbs >= 150 else 'FAIL'}; {pipe_ratio:.3f}x of cat | cat")
    return 0


if __name__ == "__main__":
    sys.exit(main())
