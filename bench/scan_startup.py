"""Start-up of `tcg scan` on a one-commit repository, against the interpreter's floor,
git's own time and the peer scanners, in the same run.

    .venv/bin/python bench/scan_startup.py [--runs 30] [--no-peers] [--baseline-tree DIR] [--wheel]

The commands run interleaved (round-robin, so all see the same machine load). For each
run the wall time around the whole process and its CPU time (user + system of the
process and every child it waited for, from ``RUSAGE_CHILDREN``) are measured; medians
of both are printed. On a loaded machine the wall time mostly measures the run queue:
the CPU time is the steadier figure, and the acceptance ratio is printed for both.

* ``python -I -c pass`` — the interpreter's floor;
* the git commands a history scan of that repository runs (rev-list piped into
  cat-file --batch-check, ls-files --stage, ls-files -m -o, cat-file --batch of the blob),
  started from one shell, as ``git``;
* ``tcg scan REPO`` (default text output to /dev/null), after one warm-up run that fills the
  signed start-up cache, with tcg byte-compiled as an install leaves it;
* the peers, when installed (pip extra ``bench``), on the same repository after one warm-up
  each: ``kingfisher scan REPO --no-validate --no-update-check`` and ``betterleaks git REPO``.

* with ``--wheel``: this tree built as a wheel and installed (``pip install --no-deps``) in a
  fresh virtual environment, the way users get tcg: its console script ``tcg scan`` as
  ``tcg (wheel)``, against that environment's own ``python -I -c pass`` (``python (wheel venv)``:
  no development ``.pth`` files). An installed wheel names its code by its RECORD
  (tcg.fingerprint), a source checkout by a stat of every file;
* with ``--baseline-tree DIR`` (a directory holding another version's ``tcg`` package, e.g.
  ``git archive main tcg | tar -x -C DIR``): ``tcg scan`` of that code too, as
  ``tcg (baseline)``, with its own TCG_HOME, interleaved with the rest — a before/after
  comparison under the same load.

The acceptance figure is ``tcg - git`` against ``2 × python``.
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
VENV_BIN = Path(sys.executable).parent


def tool(name: str) -> str:
    p = VENV_BIN / name
    return str(p) if p.exists() else (shutil.which(name) or name)


def one_commit_repo(root: Path) -> Path:
    repo = root / "one"
    repo.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b.invalid",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b.invalid"}
    subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
    (repo / "f").write_bytes(b"abc")
    subprocess.run(["git", "-C", str(repo), "add", "f"], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", "one"], check=True, env=env)
    return repo


def install_wheel(root: Path) -> Path:
    """A fresh venv (no pip, no development .pth files) holding a wheel of this tree,
    installed with --no-deps: a scan's path imports no third-party module."""
    wheels, venv = root / "wheels", root / "wheel-venv"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels),
                    str(HERE.parent)], check=True)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
                    "--no-deps", "--no-index", *map(str, wheels.glob("tcg-*.whl"))], check=True)
    return venv


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of ``cmd``."""
    c0, t0 = _children_cpu(), time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    return time.perf_counter() - t0, _children_cpu() - c0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--no-peers", action="store_true", help="leave out kingfisher and betterleaks")
    ap.add_argument("--baseline-tree", type=Path, metavar="DIR",
                    help="also time `tcg scan` of the tcg package in DIR (another version), interleaved")
    ap.add_argument("--wheel", action="store_true",
                    help="also time `tcg scan` installed from a wheel of this tree in a fresh venv")
    args = ap.parse_args(argv)
    compileall.compile_dir(str(HERE.parent / "tcg"), quiet=1)
    with tempfile.TemporaryDirectory(prefix="scan-startup-") as td:
        root = Path(td)
        repo = one_commit_repo(root)
        env = dict(os.environ, TCG_HOME=str(root / "tcg-home"))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        blob = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD:f"], capture_output=True,
                              text=True, check=True).stdout.strip()
        r = str(repo)
        git_script = (f"git -C {r} rev-list --objects --all --reverse --in-commit-order --missing=print"
                      f" | git -C {r} cat-file --batch-check='%(objecttype) %(objectname) %(objectsize) %(rest)'"
                      f" --buffer; git -C {r} ls-files --stage -z; git -C {r} ls-files -z -m -o"
                      f" --exclude-standard; echo {blob} | git -C {r} cat-file --batch")
        cmds = {
            "python": [sys.executable, "-I", "-c", "pass"],
            "git": ["sh", "-c", git_script],
            "tcg scan": [tool("tcg"), "scan", r],
        }
        envs = {name: env for name in cmds}
        if args.baseline_tree is not None:
            base = args.baseline_tree.resolve()
            compileall.compile_dir(str(base / "tcg"), quiet=1)
            cmds["tcg (baseline)"] = [tool("tcg"), "scan", r]
            envs["tcg (baseline)"] = dict(env, PYTHONPATH=str(base), TCG_HOME=str(root / "tcg-home-baseline"))
        if args.wheel:
            venv = install_wheel(root)
            cmds["python (wheel venv)"] = [str(venv / "bin" / "python"), "-I", "-c", "pass"]
            cmds["tcg (wheel)"] = [str(venv / "bin" / "tcg"), "scan", r]
            envs["python (wheel venv)"] = env
            envs["tcg (wheel)"] = dict(env, TCG_HOME=str(root / "tcg-home-wheel"))
        if not args.no_peers:
            for name, cmd in (("kingfisher", [tool("kingfisher"), "scan", r, "--no-validate",
                                              "--no-update-check", "-q"]),
                              ("betterleaks", [tool("betterleaks"), "git", r, "--no-banner",
                                               "-l", "error"])):
                if Path(cmd[0]).exists() or shutil.which(cmd[0]):
                    cmds[name] = cmd
                    envs[name] = env
        for name in cmds:  # warm-up: the signed cache, kingfisher's rule cache, the page cache
            timed(cmds[name], envs[name])
        wall: dict[str, list[float]] = {k: [] for k in cmds}
        cpu: dict[str, list[float]] = {k: [] for k in cmds}
        for _ in range(args.runs):
            for name, cmd in cmds.items():
                w, c = timed(cmd, envs[name])
                wall[name].append(w)
                cpu[name].append(c)
    print(f"{args.runs} interleaved runs each, medians (load avg {os.getloadavg()[0]:.2f} at the end):")
    print(f"  {'':<20} {'wall ms':>8} {'CPU ms':>8} {'wall/python':>12} {'CPU/python':>11}")
    mw = {k: statistics.median(v) for k, v in wall.items()}
    mc = {k: statistics.median(v) for k, v in cpu.items()}
    for k in cmds:
        print(f"  {k:<20} {mw[k] * 1000:8.1f} {mc[k] * 1000:8.1f} {mw[k] / mw['python']:12.2f}"
              f" {mc[k] / mc['python']:11.2f}")
    for label, m in (("wall", mw), ("CPU", mc)):
        if "tcg (baseline)" in m:
            print(f"{label}: baseline (tcg - git) / python = "
                  f"{(m['tcg (baseline)'] - m['git']) / m['python']:.2f}")
        if "tcg (wheel)" in m:
            floor = m["python (wheel venv)"]
            print(f"{label}: wheel (tcg - git) / python = {(m['tcg (wheel)'] - m['git']) / floor:.2f} "
                  f"(acceptance: <= 2.0, i.e. tcg <= {(2 * floor + m['git']) * 1000:.1f} ms)")
        print(f"{label}: (tcg - git) / python = {(m['tcg scan'] - m['git']) / m['python']:.2f} "
              f"(acceptance: <= 2.0, i.e. tcg <= {(2 * m['python'] + m['git']) * 1000:.1f} ms)"
              + "".join(f"; tcg / {p} = {m['tcg scan'] / m[p]:.2f}" for p in ("kingfisher", "betterleaks")
                        if p in m))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
