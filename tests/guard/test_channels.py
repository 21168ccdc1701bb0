"""Outbound channels: `tcg check-span`, commit messages and pushes through the shell.
Tokens are made up at run time (never a known example value) and every file tcg
wrote is searched for them afterwards."""

from __future__ import annotations

import json
import os
import random
import string
import subprocess
from pathlib import Path

import pytest

from tcg.guard.channels import CHANNELS
from tests.guard.helpers import TCG, TIMEOUT, check, env_for, events, git, run_line, tcg

EXIT = {"allow": 0, "sanitize": 0, "ask": 3, "block": 2}


def token() -> str:
    rng = random.Random(os.urandom(8))
    return "ghp_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))


def span(channel: str, payload: bytes, *args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([TCG, "check-span", "--channel", channel, *args], input=payload, cwd=cwd,
                          capture_output=True, timeout=TIMEOUT, env=env_for("agent"))


def leaks(value: str) -> list[Path]:
    """Files under TCG_HOME (state, trash, cache, approvals) that hold ``value``."""
    root = Path(os.environ["TCG_HOME"])
    found = []
    for dirpath, _dirs, files in os.walk(root, followlinks=False):
        for f in files:
            p = Path(dirpath, f)
            if not p.is_symlink() and value.encode() in p.read_bytes():
                found.append(p)
    return found


@pytest.mark.parametrize("channel", sorted(CHANNELS))
def test_each_channel_decides_a_secret_its_own_way(channel, tmp_path):
    tok = token()
    payload = f"deploy with {tok} today\n".encode()
    proc = span(channel, payload, "--json", cwd=tmp_path)
    want = CHANNELS[channel]
    assert proc.returncode == EXIT[want], proc.stderr
    doc = json.loads(proc.stdout)
    assert (doc["decision"], doc["reason"], doc["channel"]) == (want, "outbound-secret", channel)
    (finding,) = doc["findings"]
    assert payload[finding["start"]:finding["end"]] == tok.encode()
    assert finding["placeholder"].startswith(f"<SECRET:{finding['rule']}:")
    assert tok not in proc.stdout.decode() and tok not in proc.stderr.decode()
    clean = span(channel, b"nothing to see here\n", cwd=tmp_path)
    assert clean.returncode == 0 and clean.stdout.startswith(b"ALLOW")
    assert not leaks(tok)
    rec = events("channel_decision")[-2]
    assert (rec["channel"], rec["decision"], rec["findings"], rec["payload_len"]) == (channel, want, 1, len(payload))


def test_an_unknown_channel_is_blocked_unscanned(tmp_path):
    proc = span("carrier-pigeon", b"perfectly harmless\n", "--json", cwd=tmp_path)
    assert proc.returncode == 2
    doc = json.loads(proc.stdout)
    assert (doc["decision"], doc["reason"], doc["findings"]) == ("block", "output-unscannable", [])


def test_sanitize_prints_the_payload_with_placeholders(tmp_path):
    tok = token()
    proc = span("llm-request", f"a\n{tok}\nb\n".encode(), "--sanitize", cwd=tmp_path)
    assert proc.returncode == 0
    assert tok.encode() not in proc.stdout
    assert proc.stdout.startswith(b"a\n<SECRET:") and proc.stdout.endswith(b">\nb\n")
    assert proc.stderr.startswith(b"SANITIZE")
    blocked = span("git-commit-message", f"{tok}\n".encode(), "--sanitize", cwd=tmp_path)
    assert blocked.returncode == 2 and blocked.stdout == b""


def test_the_policy_names_new_channels_and_can_tighten(tmp_path):
    policy = tmp_path / "policy.toml"
    policy.write_text('[channels.decisions]\nslack-message = "block"\nllm-request = "ask"\n')
    env = env_for("agent", TCG_POLICY=str(policy))
    tok = token().encode()
    for channel, code in (("slack-message", 2), ("llm-request", 3)):
        proc = subprocess.run([TCG, "check-span", "--channel", channel], input=tok, capture_output=True,
                              timeout=TIMEOUT, env=env)
        assert proc.returncode == code, (channel, proc.stdout, proc.stderr)


def test_policy_may_relocate_only_the_codes_that_carry_actions(tmp_path, repo):
    bad = tmp_path / "bad.toml"
    bad.write_text('[decisions.agent]\nsecret-store-read = "relocate"\n')
    proc = tcg("policy", "check", str(bad), cwd=tmp_path)
    assert proc.returncode == 2 and b"relocate" not in proc.stderr.split(b"use one of:")[-1]
    scoped = tmp_path / "scoped.toml"
    scoped.write_text('[decisions.human]\ndelete-relocate = "allow"\n')
    assert tcg("policy", "check", str(scoped), cwd=tmp_path).returncode == 0
    (repo / "build").mkdir()
    proc = subprocess.run([TCG, "check", "--json", "--actor", "human", "rm -rf build"], cwd=repo,
                          capture_output=True, env=env_for("human", TCG_POLICY=str(scoped)), timeout=TIMEOUT)
    doc = json.loads(proc.stdout)
    assert (proc.returncode, doc["decision"], doc["actions"]) == (0, "allow", [])


# ------------------------------------------------------------------ git commit

def test_a_commit_message_with_a_secret_is_blocked_before_it_runs(repo, tmp_path):
    tok = token()
    (repo / "f.txt").write_text("x\n")
    git(repo, "add", "f.txt")
    head = git(repo, "rev-parse", "HEAD")
    line = f'git commit -q -m "deploy key {tok}"'
    rc, verdict = check(line, repo)
    assert (rc, verdict["decision"], verdict["reason"]) == (2, "block", "outbound-secret")
    assert tok not in json.dumps(verdict)
    proc = run_line(line, repo)
    assert proc.returncode == 126 and tok.encode() not in proc.stderr
    assert git(repo, "rev-parse", "HEAD") == head
    msg = tmp_path / "msg.txt"
    msg.write_text(f"release\n\ntoken={tok}\n")
    rc, verdict = check(f"git commit -F {msg}", repo)
    assert (rc, verdict["reason"]) == (2, "outbound-secret")
    assert run_line('git commit -q -m "rm -rf old"', repo).returncode == 0
    assert not leaks(tok)


# ------------------------------------------------------------------ git push

@pytest.fixture
def remote(repo, tmp_path) -> Path:
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    git(repo, "remote", "add", "origin", str(bare))
    git(repo, "push", "-q", "origin", "main")
    return bare


def test_a_push_adding_a_token_is_blocked_and_the_remote_unchanged(repo, remote):
    tok = token()
    before = git(remote, "rev-parse", "main")
    (repo / "settings.py").write_text(f'TOKEN = "{tok}"\n')
    git(repo, "add", "settings.py")
    git(repo, "commit", "-q", "-m", "add settings")
    (repo / "more.txt").write_text("harmless\n")
    git(repo, "add", "more.txt")
    git(repo, "commit", "-q", "-m", "more")
    for line in ("git push origin main", "git push", "git push -q origin HEAD:main", "git push --all origin"):
        rc, verdict = check(line, repo)
        assert (rc, verdict["decision"], verdict["reason"]) == (2, "block", "outbound-secret"), (line, verdict)
        assert "settings.py" in verdict["reasons"][0]["detail"]
        proc = run_line(line, repo)
        assert proc.returncode == 126, (line, proc.stderr)
        assert git(remote, "rev-parse", "main") == before, line
    assert not leaks(tok)


def test_a_clean_push_goes_through(repo, remote):
    (repo / "ok.txt").write_text("fine\n")
    git(repo, "add", "ok.txt")
    git(repo, "commit", "-q", "-m", "ok")
    rc, verdict = check("git push -q origin main", repo)
    assert (rc, verdict["decision"]) == (0, "allow")
    assert run_line("git push -q origin main", repo).returncode == 0
    assert git(remote, "rev-parse", "main") == git(repo, "rev-parse", "main")


def test_a_push_that_only_removes_a_secret_is_allowed(repo, remote):
    tok = token()
    (repo / "settings.py").write_text(f'TOKEN = "{tok}"\n')
    git(repo, "add", "settings.py")
    git(repo, "commit", "-q", "-m", "leak")
    git(repo, "push", "-q", "origin", "main")  # already published (outside tcg)
    git(repo, "rm", "-q", "settings.py")
    git(repo, "commit", "-q", "-m", "remove the leak")
    rc, verdict = check("git push origin main", repo)
    assert (rc, verdict["decision"]) == (0, "allow"), verdict
