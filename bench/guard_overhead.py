"""What the delete-guard costs: the decision on a plain `rm`, a relocation, and
relocating a 1 GiB directory on the same filesystem (which must be a rename).

Part 1 (hyperfine, medians, one run, same machine state), against two baselines
measured in the same run:
  run-line true                 the station with nothing to guard
  run-line 'test -e kept.txt'   a silent command with a file argument, nothing to guard
  run-line 'rm -f nothere'      the decision with the guard's rules, nothing to move
  run-line 'rm f'               decision + transaction (manifest, rename, stand-in, settle)
  python -I -c pass             the bare interpreter
each through the `tcg_shell` console script and through `python -I -m
tcg.shell_entry` (the console script adds its own import overhead).

Part 2: `run-line 'rm -rf DIR'` for an empty directory and for a 1 GiB one
(1024 files of 1 MiB), each followed by `tcg restore` (rename back), N times;
medians. Equal times mean the size does not matter: a rename.

Usage: .venv/bin/python bench/guard_overhead.py [--runs N] [--gib-runs N] [--skip-gib]
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
TCG = str(Path(PY).parent / "tcg")
BASH = shutil.which("bash") or "/bin/bash"


def hyperfine(cmds: dict[str, tuple[list[str], str | None]], runs: int, env: dict[str, str], cwd: str) -> dict:
    """Medians; each command's ``--prepare`` (hyperfine takes one per command, in order)."""
    import shlex

    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        argv = ["hyperfine", "-N", "--warmup", "3", "--runs", str(runs), "--export-json", out.name, "--style",
                "none"]
        for _cmd, prepare in cmds.values():
            argv += ["--prepare", prepare or "true"]
        for name, (cmd, _prepare) in cmds.items():
            argv += ["-n", name, shlex.join(cmd)]
        subprocess.run(argv, check=True, env=env, cwd=cwd, stdout=subprocess.DEVNULL)
        data = json.loads(Path(out.name).read_text())
    return {r["command"]: statistics.median(r["times"]) for r in data["results"]}


def part1(runs: int, env: dict[str, str], work: str) -> None:
    mod = [PY, "-I", "-m", "tcg.shell_entry", "run-line", "--shell", BASH]
    script = [TCG_SHELL, "run-line", "--shell", BASH]
    cmds = {
        "python -I -c pass": ([PY, "-I", "-c", "pass"], None),
        "tcg_shell run-line true": ([*script, "true"], None),
        "tcg_shell run-line 'test -e kept.txt'": ([*script, "test -e kept.txt"], None),
        "tcg_shell run-line 'rm -f nothere'": ([*script, "rm -f nothere"], None),
        "tcg_shell run-line 'rm f'": ([*script, "rm f"], "touch f"),
        "python -I -m tcg.shell_entry run-line true": ([*mod, "true"], None),
        "python -I -m tcg.shell_entry run-line 'test -e kept.txt'": ([*mod, "test -e kept.txt"], None),
        "python -I -m tcg.shell_entry run-line 'rm -f nothere'": ([*mod, "rm -f nothere"], None),
        "python -I -m tcg.shell_entry run-line 'rm f'": ([*mod, "rm f"], "touch f"),
    }
    Path(work, "kept.txt").write_text("kept\n")
    subprocess.run([*script, "true"], env=env, cwd=work, check=True)  # warm caches
    medians = hyperfine(cmds, runs, env, work)
    base = medians["python -I -c pass"]
    print(f"per-command cost (hyperfine, median of {runs} runs, load avg {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} CPUs; a noisy shared machine)")
    for name, t in medians.items():
        print(f"  {name:55s} {t * 1000:8.1f} ms   {t / base:5.2f}x python -I -c pass")


DECIDE = r"""
import os, statistics, sys, time
from tcg.policy.load import load_policy
from tcg.decide.line import evaluate_line
p = load_policy()
out = {}
for line in sys.argv[1:]:
    evaluate_line(p, line, "agent", cwd=os.getcwd())
    times = []
    for _ in range(15):
        t = time.perf_counter()
        for _ in range(40):
            evaluate_line(p, line, "agent", cwd=os.getcwd())
        times.append((time.perf_counter() - t) / 40)
    out[line] = statistics.median(times)
print(repr(out))
"""


def part0(env: dict[str, str], work: str) -> None:
    """In one process: the decision itself, and the import the guard adds (robust to load)."""
    lines = ["true", "test -e kept.txt", "rm -f nothere", "rm f", "git status"]
    Path(work, "f").write_text("x")
    out = subprocess.run([PY, "-I", "-c", DECIDE, *lines], env=env, cwd=work, capture_output=True, check=True)
    medians = eval(out.stdout)  # noqa: S307 - our own repr of a dict of floats
    print("decision only (evaluate_line in one process, median of 15 x 40):")
    for line, t in medians.items():
        print(f"  {line:20s} {t * 1e6:8.0f} us")
    imports = []
    for _ in range(9):
        proc = subprocess.run([PY, "-I", "-X", "importtime", "-c",
                               "import tcg.decide.line, tcg.policy.load; import tcg.guard.rules, tcg.guard.copies"],
                              env=env, capture_output=True, check=True)
        total = 0
        for row in proc.stderr.decode().splitlines():
            parts = row.split("|")
            if len(parts) == 3 and parts[2].strip() in ("tcg.guard.rules", "tcg.guard.plan", "tcg.guard.wording",
                                                           "tcg.guard.copies"):
                total += int(parts[0].split(":")[1])
        imports.append(total)
    print(f"  import of tcg.guard.rules (+plan, wording, copies), paid by guarded lines only: {statistics.median(imports)} us "
          "(median of 9)")


def timed(argv: list[str], env: dict[str, str], cwd: str) -> float:
    t = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def last_txid(env: dict[str, str]) -> str:
    out = subprocess.run([TCG, "trash", "list", "--json"], env=env, capture_output=True, check=True).stdout
    return json.loads(out.splitlines()[-1])["txid"]


def part2(runs: int, env: dict[str, str], work: str) -> None:
    big = Path(work, "big")
    big.mkdir()
    chunk = os.urandom(1 << 20)
    for i in range(1024):
        (big / f"part{i:04d}").write_bytes(chunk)
    Path(work, "small").mkdir()
    result: dict[str, list[float]] = {"small": [], "big": []}
    for _ in range(runs):
        for name in ("small", "big"):
            result[name].append(timed([TCG_SHELL, "run-line", "--shell", BASH, f"rm -rf {name}"], env, work))
            assert not Path(work, name).exists()
            subprocess.run([TCG, "restore", last_txid(env)], env=env, cwd=work, check=True, stdout=subprocess.DEVNULL)
            assert Path(work, name).is_dir()
    size = sum(p.stat().st_size for p in big.iterdir())
    print(f"relocation on the same filesystem (median of {runs}; each followed by tcg restore):")
    for name, times in result.items():
        label = f"{size / (1 << 30):.2f} GiB, 1024 files" if name == "big" else "empty directory"
        print(f"  tcg_shell run-line 'rm -rf {name}' ({label}): {statistics.median(times) * 1000:8.1f} ms")
    ratio = statistics.median(result["big"]) / statistics.median(result["small"])
    print(f"  1 GiB / empty = {ratio:.2f}x (a rename: independent of size)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--gib-runs", type=int, default=5)
    ap.add_argument("--skip-gib", action="store_true")
    args = ap.parse_args()
    if not shutil.which("hyperfine"):
        print("hyperfine is needed (apt install hyperfine)", file=sys.stderr)
        return 1
    # XDG dirs rather than TCG_HOME, and no "tcg" in the work path: with TCG_HOME set
    # (or "tcg" in a path) the engine computes tcg's own paths for every file argument,
    # which is not what a user's `rm f` costs.
    root = tempfile.mkdtemp(prefix="guard-bench-")
    env = dict(os.environ)
    for var in ("TCG_MEDIATED", "TCG_ACTOR", "TCG_AGENT", "TCG_HOME", "TCG_POLICY"):
        env.pop(var, None)
    for var, sub in (("XDG_CONFIG_HOME", "config"), ("XDG_STATE_HOME", "state"), ("XDG_CACHE_HOME", "cache")):
        env[var] = os.path.join(root, "home", sub)
    work = os.path.join(root, "work")
    os.mkdir(work)
    try:
        Path(work, "kept.txt").write_text("kept\n")
        part0(env, work)
        part1(args.runs, env, work)
        if not args.skip_gib:
            part2(args.gib_runs, env, work)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
