"""Gate cost of `tcg launch` on a cache hit, in an unchanged 10k-commit repository.

Builds (once, with `git fast-import`) a repository of 10 000 commits under
bench/.data/launch-10k, launches once to fill the gate cache (the full scan is
timed), then times in the same run, interleaved, N times each:

- ``python -I -c pass``                 the bare interpreter start (baseline);
- ``claude``                            the agent alone (a symlink to /bin/true);
- ``python -I -m tcg launch claude``    what the shell hook's `claude` function runs.

Added time = median(launch) - median(agent alone), stated as a multiple of the baseline.
Also prints, in-process, what computing the state key with git costs (every launch does).

    .venv/bin/python bench/launch.py [--runs 40] [--commits 10000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
DATA = ROOT / ".data"


def build_repo(path: Path, commits: int) -> Path:
    if (path / ".git").is_dir() and (path / ".git" / "bench-complete").exists():
        return path
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    lines = []
    ts = 1_700_000_000
    for i in range(commits):
        body = f"# module {i % 200}\nVALUE_{i} = {i * 7919 % 100003}\n" + ("x = 1\n" * (i % 5))
        msg = f"commit {i}\n"
        lines.append(f"commit refs/heads/main\nmark :{i + 1}\n"
                     f"author Bench <bench@example.com> {ts + i} +0000\n"
                     f"committer Bench <bench@example.com> {ts + i} +0000\n"
                     f"data {len(msg)}\n{msg}")
        if i:
            lines.append(f"from :{i}\n")
        name = f"src/mod{i % 200:03d}.py"
        lines.append(f"M 100644 inline {name}\ndata {len(body.encode())}\n{body}\n")
    data = "".join(lines).encode()
    subprocess.run(["git", "-C", str(path), "fast-import", "--quiet"], input=data, check=True)
    subprocess.run(["git", "-C", str(path), "checkout", "-q", "-f", "main"], check=True)
    (path / ".git" / "bench-complete").write_text("ok\n")
    return path


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True)
    dt = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"{argv} failed ({proc.returncode}): {proc.stderr.decode()[-500:]}")
    return dt


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--commits", type=int, default=10_000)
    args = ap.parse_args()

    repo = build_repo(DATA / f"launch-{args.commits // 1000}k", args.commits)
    n_commits = subprocess.run(["git", "-C", str(repo), "rev-list", "--count", "HEAD"],
                               capture_output=True, text=True, check=True).stdout.strip()
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="tcg-bench-launch-") as tmp:
        t = Path(tmp)
        bindir = t / "bin"
        bindir.mkdir()
        (bindir / "claude").symlink_to("/bin/true")
        env = dict(os.environ, TCG_HOME=str(t / "home"), HOME=str(t), PATH=f"{bindir}:/usr/bin:/bin")
        for var in ("TCG_ACTOR", "TCG_AGENT", "TCG_POLICY", "TCG_MEDIATED"):
            env.pop(var, None)

        first = timed([py, "-I", "-m", "tcg", "launch", "claude"], repo, env)
        events = [json.loads(x) for x in (t / "home" / "state" / "events.jsonl").read_text().splitlines()]
        miss = events[-1]
        assert miss["cache"] == "miss", miss

        cmds = {
            "python -I -c pass": [py, "-I", "-c", "pass"],
            "claude (agent alone)": [str(bindir / "claude")],
            "python -I -m tcg launch claude": [py, "-I", "-m", "tcg", "launch", "claude"],
        }
        times: dict[str, list[float]] = {k: [] for k in cmds}
        for _ in range(3):  # warm the page cache
            for argv in cmds.values():
                timed(argv, repo, env)
        for _ in range(args.runs):
            for name, argv in cmds.items():
                times[name].append(timed(argv, repo, env))
        events = [json.loads(x) for x in (t / "home" / "state" / "events.jsonl").read_text().splitlines()]
        hits = [e for e in events if e["event"] == "launch_gate" and e["cache"] == "hit"]
        assert len(hits) == args.runs + 3 and not any(e["scanned"] for e in hits)

        sys.path.insert(0, str(ROOT.parent))
        os.environ["TCG_HOME"] = str(t / "home")
        os.environ["HOME"] = env["HOME"]
        from tcg.launcher import state

        key_times = []
        for _ in range(20):
            t0 = time.perf_counter()
            state.repo_state(repo)
            key_times.append(time.perf_counter() - t0)

    med = {k: statistics.median(v) * 1000 for k, v in times.items()}
    base = med["python -I -c pass"]
    added = med["python -I -m tcg launch claude"] - med["claude (agent alone)"]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"repository: {n_commits} commits, {miss['blobs']} blobs scanned; first launch (scan) {first:.2f} s "
          f"(gate {miss['duration_ms']} ms)")
    for k, v in med.items():
        print(f"  {k:34s} median {v:7.1f} ms  (n={len(times[k])})")
    print(f"  state key with git (in-process)    median {statistics.median(key_times) * 1000:7.1f} ms")
    print(f"  gate cache-hit duration (events)   median {statistics.median(e['duration_ms'] for e in hits):7.1f} ms")
    print(f"launch added time on a cache hit: {added:.1f} ms = {added / base:.2f} x bare python startup; "
          f"whole launch {med['python -I -m tcg launch claude'] / base:.2f} x; load average {load:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
