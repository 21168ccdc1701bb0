"""Latency of `tcg hook claude PreToolUse` on a Read, against a bare interpreter start.

Times, interleaved in the same run, N times each (medians; the machine is
noisy, so several runs say more than one):

- ``python -I -c pass``                      the interpreter floor (baseline);
- the PreToolUse hook on a Read of an ordinary file, exactly as Claude Code
  starts it from the settings `tcg launch claude` generates (exec form:
  the interpreter, ``-I -c ENTRY PreToolUse``, the event JSON on stdin);
- the same hook on a Read of ``.env`` (a refusal: also masks the detail for the
  event, so it loads the detector);
- the PostToolUse hook on that Read's output (masks; loads the detector; the
  inbound gate checks it as a file read);
- the same PostToolUse output from a Grep (masked the same way; the inbound gate
  leaves a Grep's output alone): the hook without the gate, the baseline for
  the gate's own cost on every Read.

Target: median(PreToolUse, ordinary Read) <= 1.5 x median(python -I -c pass).
Wall-clock and CPU time (user + system of the child, from wait4) are both
printed (Linux/macOS): on a loaded machine wall-clock ratios drift, CPU-time ratios less.
The environment is what `tcg launch claude` gives the agent (TCG_SESSION,
TCG_ACTOR, TCG_AGENT) with HOME and the XDG directories in a temporary
directory, no TCG_HOME; the policy snapshot and the detector cache are warm
(as after the first call of a session).

    .venv/bin/python bench/hook_latency.py [--runs 40]
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tcg.agents.claude import ENTRY  # noqa: E402 - the command line the settings carry


def timed(argv: list[str], data: bytes, env: dict[str, str], cwd: str) -> tuple[float, bytes, float]:
    """(wall seconds, stdout, CPU seconds of the child: user + system). One child at a
    time, so the growth of RUSAGE_CHILDREN across the run is that child's."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, input=data, env=env, cwd=cwd, capture_output=True)
    dt = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"{argv[-1]} failed ({proc.returncode}): {proc.stderr.decode()[-500:]}")
    used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return dt, proc.stdout, used


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=40)
    args = ap.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="tcg-bench-hook-") as tmp:
        t = Path(tmp)
        work = t / "project"
        work.mkdir()
        (work / "notes.txt").write_text("an ordinary file\n" * 20)
        (work / ".env").write_text("DB_PASSWORD=hunter2-" + "Xw4" * 6 + "\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith("TCG_")}
        env.update(HOME=str(t), XDG_CONFIG_HOME=str(t / "config"), XDG_STATE_HOME=str(t / "state"),
                   XDG_CACHE_HOME=str(t / "cache"), TCG_SESSION="0123456789abcdef", TCG_ACTOR="agent",
                   TCG_AGENT="claude")

        def event(name: str, tool_input: dict, tool: str = "Read", **extra: object) -> bytes:
            return json.dumps({"session_id": "bench", "transcript_path": str(t / "t.jsonl"), "cwd": str(work),
                               "permission_mode": "bypassPermissions", "hook_event_name": name, "tool_name": tool,
                               "tool_input": tool_input, "tool_use_id": "toolu_1", **extra}).encode()

        read_ok = event("PreToolUse", {"file_path": str(work / "notes.txt")})
        read_env = event("PreToolUse", {"file_path": str(work / ".env")})
        response = {"type": "text", "file": {"filePath": str(work / "notes.txt"), "content": "token ghp_"
                                             + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8" + "\n", "numLines": 2,
                                             "startLine": 1, "totalLines": 2}}
        post = event("PostToolUse", {"file_path": str(work / "notes.txt")}, tool_response=response)
        post_grep = event("PostToolUse", {"pattern": "token", "path": str(work)}, tool="Grep", tool_response=response)
        # Key, policy snapshot and detector cache: created by the first calls, as in a session.
        subprocess.run([py, "-I", "-m", "tcg", "policy", "show"], env=env, cwd=work, capture_output=True)
        hook = [py, "-I", "-c", ENTRY]
        cases = {
            "python -I -c pass": ([py, "-I", "-c", "pass"], b""),
            "PreToolUse, Read notes.txt (allow)": ([*hook, "PreToolUse"], read_ok),
            "PreToolUse, Read .env (deny)": ([*hook, "PreToolUse"], read_env),
            "PostToolUse, Read with a token (mask)": ([*hook, "PostToolUse"], post),
            "PostToolUse, Grep, same output (no gate)": ([*hook, "PostToolUse"], post_grep),
        }
        for argv, data in cases.values():  # warm: key, snapshot, detector cache, page cache
            for _ in range(3):
                timed(argv, data, env, str(work))
        _, out, _ = timed(*cases["PreToolUse, Read .env (deny)"], env, str(work))
        assert b'"permissionDecision":"deny"' in out, out
        _, out, _ = timed(*cases["PostToolUse, Read with a token (mask)"], env, str(work))
        assert b"<SECRET:github-pat" in out and b"a1B2c3D4e5F6" not in out, out
        _, out, _ = timed(*cases["PreToolUse, Read notes.txt (allow)"], env, str(work))
        assert out == b"", out
        times: dict[str, list[float]] = {k: [] for k in cases}
        cpu: dict[str, list[float]] = {k: [] for k in cases}
        for _ in range(args.runs):
            for name, (argv, data) in cases.items():
                wall, _, used = timed(argv, data, env, str(work))
                times[name].append(wall)
                cpu[name].append(used)
    med = {k: statistics.median(v) * 1000 for k, v in times.items()}
    cmed = {k: statistics.median(v) * 1000 for k, v in cpu.items()}
    base, cbase = med["python -I -c pass"], cmed["python -I -c pass"]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    for k, v in med.items():
        print(f"  {k:40s} wall median {v:7.1f} ms = {v / base:4.2f} x   CPU median {cmed[k]:6.1f} ms = "
              f"{cmed[k] / cbase:4.2f} x  (n={len(times[k])})")
    key = "PreToolUse, Read notes.txt (allow)"
    print(f"PreToolUse on a Read: {med[key] / base:.2f} x python -I -c pass wall-clock, {cmed[key] / cbase:.2f} x CPU "
          f"(target <= 1.50 x); load average {load:.1f}")
    gate, nogate = "PostToolUse, Read with a token (mask)", "PostToolUse, Grep, same output (no gate)"
    print(f"inbound gate on a PostToolUse Read: +{med[gate] - med[nogate]:.1f} ms wall, "
          f"+{cmed[gate] - cmed[nogate]:.1f} ms CPU over the same output without the gate")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
