"""`tcg launch` end to end with a fake agent: real git repos, the real `tcg`
entry point in a subprocess or under a real PTY (pexpect)."""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pytest

from tcg.launcher.cache import CACHE_FIELDS
from tests.helpers.leaks import assert_no_secret_written
from tests.launcher.conftest import TCG, commit, git, github_pat, make_repo


def launch(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([TCG, "launch", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def gate_events(tcg_home: Path) -> list[dict]:
    path = tcg_home / "state" / "events.jsonl"
    if not path.exists():
        return []
    recs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in recs if r["event"] == "launch_gate"]


def user_args(rec: dict) -> list[str]:
    """The agent's arguments without what tcg adds in front (claude: `--settings FILE`)."""
    args = rec["argv"][1:]
    return args[2:] if args[:1] == ["--settings"] else args


def agent_record(env: dict[str, str]) -> dict | None:
    p = Path(env["FAKE_AGENT_OUT"])
    return json.loads(p.read_text()) if p.exists() else None


@pytest.fixture
def secret_history_repo(tmp_path):
    """A secret committed, then deleted in a later commit: only history holds it."""
    repo = make_repo(tmp_path / "repo")
    token = github_pat(1)
    commit(repo, "README.md", "hello\n", "init")
    commit(repo, "config.py", f"TOKEN = '{token}'\n", "add config")
    git(repo, "rm", "-q", "config.py")
    git(repo, "commit", "-q", "-m", "remove the token")
    assert not (repo / "config.py").exists()
    return repo, token


def test_secret_in_history_blocks_the_launch(secret_history_repo, launch_env, tcg_home):
    repo, token = secret_history_repo
    proc = launch(["claude", "-p", "hi"], repo, launch_env)
    assert proc.returncode == 126, proc.stderr
    assert agent_record(launch_env) is None  # the agent never ran
    assert "github-pat" in proc.stderr
    assert f"tcg scan --history {repo}" in proc.stderr
    assert "--accept-findings" in proc.stderr
    assert token not in proc.stderr + proc.stdout
    (ev,) = gate_events(tcg_home)
    assert (ev["decision"], ev["reason"], ev["status"]) == ("block", "repo-findings", "findings")
    assert ev["exit_code"] == 126 and ev["findings"] >= 1
    assert any(r.startswith("github-pat") for r in ev["rules"])
    assert ev["policy"]["fingerprint"] and ev["policy"]["snapshot"]
    # Relaunch: the cached "findings" blocks again without a scan.
    proc = launch(["claude"], repo, launch_env)
    assert proc.returncode == 126
    ev2 = gate_events(tcg_home)[-1]
    assert (ev2["cache"], ev2["scanned"], ev2["reason"]) == ("hit", False, "repo-findings")
    assert_no_secret_written(tcg_home, [token])


def test_accept_findings_launches_and_is_recorded(secret_history_repo, launch_env, tcg_home):
    repo, token = secret_history_repo
    proc = launch(["--accept-findings", "claude", "--model", "x"], repo, launch_env)
    assert proc.returncode == 0, proc.stderr
    rec = agent_record(launch_env)
    assert rec is not None and user_args(rec) == ["--model", "x"]
    ev = gate_events(tcg_home)[-1]
    assert (ev["decision"], ev["reason"], ev["accepted"]) == ("allow", "findings-accepted", True)
    assert_no_secret_written(tcg_home, [token])


def test_an_agent_cannot_accept_findings(secret_history_repo, launch_env, tcg_home):
    repo, _ = secret_history_repo
    env = dict(launch_env, TCG_ACTOR="agent")
    proc = launch(["--accept-findings", "claude"], repo, env)
    assert proc.returncode == 126
    assert agent_record(launch_env) is None


def test_clean_repo_execs_on_the_untouched_tty(tmp_path, launch_env, tcg_home):
    """Under a real PTY: the agent keeps tcg's PID and owns the terminal on 0/1/2."""
    repo = make_repo(tmp_path / "repo")
    commit(repo, "main.py", "print('hi')\n")
    child = pexpect.spawn(TCG, ["launch", "claude", "-p", "--verbose", "--", "x y"], cwd=str(repo),
                          env=launch_env, timeout=120, encoding="utf-8")
    launcher_pid = child.pid
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    rec = agent_record(launch_env)
    assert rec is not None, child.before
    assert rec["pid"] == launcher_pid  # os.execve: same process, no wrapper
    assert rec["isatty"] == [True, True, True]
    assert len(set(rec["ttyname"])) == 1  # the very terminal pexpect gave tcg, no PTY in between
    assert user_args(rec) == ["-p", "--verbose", "--", "x y"]
    settings = rec["argv"][2]  # tcg's hooks, for this session only
    assert rec["argv"][1] == "--settings" and Path(settings).is_relative_to(tcg_home)
    assert "tcg.agents.claude" in Path(settings).read_text()
    assert os.path.basename(rec["argv"][0]) == "claude"
    env = rec["env"]
    assert env["TCG_ACTOR"] == "agent" and env["TCG_AGENT"] == "claude"
    prefix = env["CLAUDE_CODE_SHELL_PREFIX"]
    assert os.path.isabs(prefix) and os.access(prefix, os.X_OK)
    assert Path(prefix).is_relative_to(tcg_home)
    ev = gate_events(tcg_home)[-1]
    assert (ev["decision"], ev["reason"], ev["status"], ev["cache"]) == ("allow", "allowed", "clean", "miss")
    assert ev["session"] == env["TCG_SESSION"]  # the agent's commands correlate to the launch

    # Again: the cache-hit launch execs the same way.
    Path(launch_env["FAKE_AGENT_OUT"]).unlink()
    child = pexpect.spawn(TCG, ["launch", "claude"], cwd=str(repo), env=launch_env, timeout=120, encoding="utf-8")
    launcher_pid = child.pid
    child.expect(pexpect.EOF)
    child.close()
    rec = agent_record(launch_env)
    assert child.exitstatus == 0 and rec is not None
    assert rec["pid"] == launcher_pid and rec["isatty"] == [True, True, True]
    assert rec["env"]["CLAUDE_CODE_SHELL_PREFIX"] == prefix
    assert gate_events(tcg_home)[-1]["cache"] == "hit"


def test_cache_hit_on_relaunch_does_not_rescan(tmp_path, launch_env, tcg_home):
    repo = make_repo(tmp_path / "repo")
    commit(repo, "main.py", "print('hi')\n")
    t0 = time.perf_counter()
    assert launch(["claude"], repo, launch_env).returncode == 0
    miss_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    assert launch(["claude"], repo, launch_env).returncode == 0
    hit_s = time.perf_counter() - t0
    miss, hit = gate_events(tcg_home)[-2:]
    assert (miss["cache"], miss["scanned"]) == ("miss", True)
    assert (hit["cache"], hit["scanned"]) == ("hit", False)
    print(f"\nlaunch with scan: {miss_s * 1000:.0f} ms; relaunch (cache hit): {hit_s * 1000:.0f} ms "
          f"(gate {miss['duration_ms']} ms vs {hit['duration_ms']} ms)")
    # The cache holds only the listed metadata: no path, no value.
    (entry_file,) = (tcg_home / "cache" / "scan").glob("*.gate")
    entry = marshal.loads(entry_file.read_bytes().partition(b"\n")[2])  # MAC line, body
    assert set(entry) <= CACHE_FIELDS
    assert entry["agent"] == "claude" and entry["status"] == "clean"
    for f in (tcg_home / "cache").rglob("*"):  # the gate entry and the policy snapshots
        if f.is_file() and "detect" not in f.parts:
            data = f.read_bytes()
            assert os.fsencode(str(repo)) not in data and b"main.py" not in data, f
            assert oct(f.stat().st_mode & 0o777) == "0o600"


def test_edit_and_policy_change_invalidate_the_cache(tmp_path, launch_env, tcg_home):
    repo = make_repo(tmp_path / "repo")
    commit(repo, "app.py", "x = 1\n")
    assert launch(["claude"], repo, launch_env).returncode == 0
    token = github_pat(2)
    (repo / "app.py").write_text(f"x = '{token}'\n")  # an edit that adds a secret, same second
    proc = launch(["claude"], repo, launch_env)
    assert proc.returncode == 126, proc.stderr
    assert gate_events(tcg_home)[-1]["cache"] == "miss"
    (repo / "app.py").write_text("x = 1\n")
    assert launch(["claude"], repo, launch_env).returncode == 0
    assert gate_events(tcg_home)[-1]["cache"] == "miss"
    # A policy change (here: an extra scan category) changes the fingerprint: rescan.
    policy = tcg_home / "config" / "policy.toml"
    policy.parent.mkdir(parents=True, exist_ok=True)
    policy.write_text('[scan]\ncategories = ["secret", "pii"]\n')
    assert launch(["claude"], repo, launch_env).returncode == 0
    ev = gate_events(tcg_home)[-1]
    assert ev["cache"] == "miss" and ev["scanned"] is True
    assert launch(["claude"], repo, launch_env).returncode == 0
    assert gate_events(tcg_home)[-1]["cache"] == "hit"
    assert_no_secret_written(tcg_home, [token])


def test_without_git_a_repository_is_refused(tmp_path, launch_env, agent_bin, tcg_home):
    """The state key needs git: inside a repository without git on PATH the launch fails closed."""
    repo = make_repo(tmp_path / "repo")
    commit(repo, "a.py", "x = 1\n")
    env = dict(launch_env, PATH=str(agent_bin))  # the fake agents, no git
    proc = launch(["claude"], repo, env)
    assert proc.returncode == 126, proc.stderr
    assert "git is not installed" in proc.stderr and "hint:" in proc.stderr
    assert agent_record(launch_env) is None
    assert gate_events(tcg_home)[-1]["reason"] == "repo-scan-error"


def test_policy_can_allow_findings(secret_history_repo, launch_env, tcg_home):
    repo, _ = secret_history_repo
    policy = tcg_home / "config" / "policy.toml"
    policy.parent.mkdir(parents=True, exist_ok=True)
    policy.write_text('[launch]\non-findings = "allow"\n')
    assert launch(["claude"], repo, launch_env).returncode == 0
    ev = gate_events(tcg_home)[-1]
    assert (ev["decision"], ev["reason"]) == ("allow", "repo-findings")


def test_outside_a_repository_launches_without_scan(tmp_path, launch_env, tcg_home):
    plain = tmp_path / "plain"
    plain.mkdir()
    proc = launch(["codex", "exec", "hi"], plain, launch_env)
    assert proc.returncode == 0, proc.stderr
    ev = gate_events(tcg_home)[-1]
    assert (ev["reason"], ev["status"], ev["repo"], ev["scanned"]) == ("no-repository", "none", None, False)
    env = agent_record(launch_env)["env"]
    assert env["TCG_AGENT"] == "codex" and Path(env["BASH_ENV"]).is_file()


def test_unknown_agent_is_refused_with_a_hint(tmp_path, launch_env, tcg_home):
    proc = launch(["vim"], tmp_path, launch_env)
    assert proc.returncode == 126
    assert "not a known agent" in proc.stderr and "agents.known" in proc.stderr
    assert gate_events(tcg_home)[-1]["reason"] == "unknown-agent"


def test_missing_agent_is_127(tmp_path, launch_env, tcg_home):
    proc = launch(["qwen"], tmp_path, launch_env)
    assert proc.returncode == 127
    assert "qwen: command not found" in proc.stderr
    assert gate_events(tcg_home)[-1]["reason"] == "agent-not-found"


def test_tcg_shims_on_path_are_skipped(tmp_path, launch_env, agent_bin):
    """A `claude` shim that would re-enter `tcg launch` sits first on PATH: it is skipped."""
    shim_dir = tmp_path / "shims"
    shim_dir.mkdir()
    shim = shim_dir / "claude"
    shim.write_text(f"#!/bin/sh\n# tcg-launch-shim\nexec {TCG} launch claude \"$@\"\n")
    shim.chmod(0o755)
    env = dict(launch_env, PATH=f"{shim_dir}{os.pathsep}{launch_env['PATH']}")
    proc = launch(["claude"], tmp_path, env)
    assert proc.returncode == 0, proc.stderr
    assert Path(agent_record(launch_env)["argv"][0]).parent == agent_bin


def test_usage_errors():
    proc = subprocess.run([TCG, "launch"], capture_output=True, text=True)
    assert proc.returncode == 2
    proc = subprocess.run([sys.executable, "-m", "tcg", "launch", "--bogus", "claude"], capture_output=True, text=True)
    assert proc.returncode == 2


@pytest.mark.shell
def test_hook_function_routes_the_agent_through_the_gate(tmp_path, launch_env, tcg_home):
    """The bash hook's `claude` function runs `tcg launch claude`: wired, on the TTY."""
    import shutil

    if shutil.which("bash") is None:
        pytest.skip("bash not installed")
    hook = subprocess.run([str(Path(TCG).parent / "tcg_shell"), "init", "bash"], capture_output=True, text=True,
                          env=launch_env)
    assert hook.returncode == 0, hook.stderr
    hook_file = tmp_path / "hook.bash"
    hook_file.write_text(hook.stdout)
    repo = make_repo(tmp_path / "repo")
    commit(repo, "a.py", "x = 1\n")
    child = pexpect.spawn("bash", ["--norc", "--noprofile", "-c", f"source {hook_file}; claude -p 'a b'"],
                          cwd=str(repo), env=launch_env, timeout=120, encoding="utf-8")
    bash_pid = child.pid
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    rec = agent_record(launch_env)
    assert user_args(rec) == ["-p", "a b"] and rec["env"]["TCG_AGENT"] == "claude"
    assert rec["ppid"] == bash_pid  # bash ran `tcg launch`, which became the agent
    assert rec["isatty"] == [True, True, True]
    assert gate_events(tcg_home)[-1]["reason"] == "allowed"
