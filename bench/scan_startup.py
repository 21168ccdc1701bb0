"""Start-up of `tcg scan` on a one-commit repository, against the interpreter's floor and
git's own time, in the same run.

    .venv/bin/python bench/scan_startup.py [--runs 30]

Three commands run interleaved (round-robin, so all see the same machine load), wall time
of each run measured around the whole process; medians are printed:

* ``python -I -c pass`` — the interpreter's floor;
* the git commands a history scan of that repository runs (rev-list piped into
  cat-file --batch-check, ls-files --stage, ls-files -m -o, cat-file --batch of the blob),
  started from one shell, as ``git``;
* ``tcg scan REPO`` (default text output to /dev/null), after one warm-up run that fills the
  signed start-up cache, with tcg byte-compiled as an install leaves it.

The acceptance figure is ``tcg - git`` against ``2 × python``.
"""

from __future__ import annotations

import argparse
import compileall
import os
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


def timed(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--runs", type=int, default=30)
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
        timed(cmds["tcg scan"], env)  # warm-up: the signed cache, the page cache
        times: dict[str, list[float]] = {k: [] for k in cmds}
        for _ in range(args.runs):
            for name, cmd in cmds.items():
                times[name].append(timed(cmd, env))
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"{args.runs} interleaved runs each, medians (load avg {os.getloadavg()[0]:.2f}):")
    for k, v in med.items():
        print(f"  {k:<9} {v * 1000:7.1f} ms")
    budget = 2 * med["python"] + med["git"]
    print(f"tcg scan = {med['tcg scan'] / med['python']:.1f} x python; "
          f"(tcg - git) / python = {(med['tcg scan'] - med['git']) / med['python']:.1f} "
          f"(acceptance: <= 2.0, i.e. tcg <= {budget * 1000:.1f} ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
