"""The per-call entries against the interpreter floor, for this tree and optionally older ones.

Times, interleaved in the same run, N times each (medians of wall-clock and of
the child's CPU time, user + system; the machine is noisy, so CPU ratios say
more than wall-clock ones and several runs more than one):

- ``python -I -c pass``                 the interpreter floor (baseline);
- ``tcg_shell run-line true``           every command an agent runs;
- ``tcg hook claude PreToolUse``        every tool call of Claude Code (a Read of an ordinary file);
- ``tcg launch claude``, cache hit      an agent start in an unchanged repository
                                        (``claude`` is /bin/true).

Each runs in-process from a package root put first on ``sys.path``: this tree,
and every ``--base DIR`` holding an older ``tcg/`` package (for example
``git archive main tcg | tar -x -C DIR``), each with a home of its own whose
caches (install key, policy snapshot, gate result, masked line) are warm.
Byte-code is compiled first, as an install would have it.

    .venv/bin/python bench/hot_paths.py [--runs 30] [--base DIR ...] [--only hook ...]

``--base`` may also be a ``pip install --target`` directory of a built wheel (its
``tcg-*.dist-info/RECORD`` is what tcg.fingerprint reads there, instead of a stat
walk of the package): that is what a user's install pays.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child). One child at a time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"{argv[-1][:80]} failed ({proc.returncode}): {proc.stderr.decode()[-500:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cases(tmp: Path, roots: dict[str, Path]) -> dict[str, tuple[list[str], dict[str, str], Path]]:
    py = sys.executable
    project, repo, bindir = tmp / "project", tmp / "repo", tmp / "bin"
    for d in (project, bindir):
        d.mkdir()
    (bindir / "claude").symlink_to("/bin/true")
    (project / "notes.txt").write_text("an ordinary file\n" * 20)
    event = project / "event.json"
    event.write_text(json.dumps({
        "session_id": "bench", "transcript_path": str(tmp / "t.jsonl"), "cwd": str(project),
        "permission_mode": "bypassPermissions", "hook_event_name": "PreToolUse", "tool_name": "Read",
        "tool_input": {"file_path": str(project / "notes.txt")}, "tool_use_id": "toolu_1"}))
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@tcg.invalid"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["cp", "-r", str(ROOT / "docs"), str(repo)], check=True)
    subprocess.run([*git, "-C", str(repo), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-qm", "docs"], check=True)
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("TCG_", "XDG_")) and k != "PYTHONDONTWRITEBYTECODE"}
    out = {"python -I -c pass": ([py, "-I", "-c", "pass"], clean, project)}
    for i, (name, root) in enumerate(roots.items()):
        home = tmp / f"home-{i}"
        home.mkdir()
        env = {**clean, "HOME": str(home)}
        first = f"import sys; sys.path.insert(0, {str(root)!r}); "
        out[f"run-line true [{name}]"] = (
            [py, "-I", "-c", first + "from tcg.shell_entry import main; sys.exit(main(['run-line', 'true']))"],
            env, project)
        out[f"hook PreToolUse [{name}]"] = (
            [py, "-I", "-c", first + f"import gc, os; os.dup2(os.open({str(event)!r}, os.O_RDONLY), 0); "
             "gc.disable(); from tcg.agents.claude import hook; hook(['PreToolUse'])"],
            {**env, "TCG_SESSION": "0123456789abcdef", "TCG_ACTOR": "agent", "TCG_AGENT": "claude"}, project)
        out[f"launch, cache hit [{name}]"] = (
            [py, "-I", "-c", first + "from tcg.cli import main; sys.exit(main(['launch', 'claude']))"],
            {**env, "PATH": f"{bindir}:/usr/bin:/bin"}, repo)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--base", action="append", default=[], type=Path,
                    help="a directory holding an older tcg/ package (repeatable)")
    ap.add_argument("--only", action="append", choices=["run-line", "hook", "launch"],
                    help="time only these entries (repeatable; the interpreter floor always)")
    args = ap.parse_args()
    roots = {"this tree": ROOT, **{f"base {i}: {p}": p.resolve() for i, p in enumerate(args.base, 1)}}
    for root in roots.values():
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "tcg")], check=True,
                       env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"})
    with tempfile.TemporaryDirectory(prefix="tcg-bench-hot-") as tmp:
        todo = cases(Path(tmp), roots)
        for argv, env, cwd in todo.values():  # warm: key, snapshot, gate result, masked line, page cache
            for _ in range(3):
                timed(argv, env, cwd)
        if args.only:  # after the warm-up: run-line creates the install key the others' caches need
            todo = {k: v for k, v in todo.items()
                    if k == "python -I -c pass" or any(k.startswith(o) for o in args.only)}
        wall: dict[str, list[float]] = {k: [] for k in todo}
        cpu: dict[str, list[float]] = {k: [] for k in todo}
        for _ in range(args.runs):
            for name, (argv, env, cwd) in todo.items():
                w, c = timed(argv, env, cwd)
                wall[name].append(w)
                cpu[name].append(c)
    base_w = statistics.median(wall["python -I -c pass"])
    base_c = statistics.median(cpu["python -I -c pass"])
    for name in todo:
        w, c = statistics.median(wall[name]), statistics.median(cpu[name])
        print(f"  {name:44s} wall median {w * 1e3:6.1f} ms = {w / base_w:4.2f} x   "
              f"CPU median {c * 1e3:6.1f} ms = {c / base_c:4.2f} x")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"n={args.runs} each, interleaved; load average {load:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
