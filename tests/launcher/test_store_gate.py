"""The launch gate refuses a repository whose git holds a secret store (`.env`): the
agent's `git diff`, `git log -p` or `git grep` would print it, masked view or not."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.helpers.leaks import assert_no_secret_written
from tests.launcher.conftest import TCG, commit, git, make_repo

VALUE = "Zq8vN3kT7pW2mX5rB9cLq1"  # no keyword, no known shape: the detector passes it


def launch(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([TCG, "launch", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def gate_events(tcg_home: Path) -> list[dict]:
    path = tcg_home / "state" / "events.jsonl"
    recs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    return [r for r in recs if r["event"] == "launch_gate"]


def test_a_committed_env_blocks_the_launch(tmp_path, launch_env, tcg_home):
    repo = make_repo(tmp_path / "repo")
    commit(repo, "README", "hi\n", "init")
    commit(repo, ".env", f"STRIPE_WEBHOOK={VALUE}\n", "env")
    git(repo, "rm", "-q", "--cached", ".env")  # untracked now, still in history
    git(repo, "commit", "-q", "-m", "untrack")
    proc = launch(["claude", "-p", "hi"], repo, launch_env)
    assert proc.returncode == 126, proc.stderr
    assert not Path(launch_env["FAKE_AGENT_OUT"]).exists()  # the agent never ran
    assert "secret-store-in-git" in proc.stderr and "git rm --cached" in proc.stderr
    (ev,) = gate_events(tcg_home)
    assert (ev["decision"], ev["reason"], ev["status"]) == ("block", "repo-findings", "findings")
    assert ev["counts_by_rule"] == {"secret-store-in-git": 1}
    # the same repository without the store in history launches
    clean = make_repo(tmp_path / "clean")
    commit(clean, "README", "hi\n", "init")
    (clean / ".env").write_text(f"STRIPE_WEBHOOK={VALUE}\n")  # untracked: the view masks it
    proc = launch(["claude", "-p", "hi"], clean, launch_env)
    assert proc.returncode == 0, proc.stderr
    assert_no_secret_written(tcg_home, [VALUE])
