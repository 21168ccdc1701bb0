"""Fault matrix, agent hooks: what arrives on the hook's stdin is broken
(empty, cut off, not an object, a field of the wrong type, invalid UTF-8,
nested past the parser's recursion limit, 50 MB) or the event log cannot be
written. Every case denies the tool call; none is a silent allow
(docs/reliability.md). A hook that crashes or hangs is stopped by Claude Code's
``onFailure: "block"``: tests/agents/test_claude_hooks_e2e.py runs that against
the real CLI."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tcg.agents.claude import ENTRY
from tests.faults.helpers import TIMEOUT

BASH_CALL = {"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/tmp",
             "tool_name": "Bash", "tool_input": {"command": "ls"}}


def hook(stdin: bytes, event: str = "PreToolUse", **env: str) -> subprocess.CompletedProcess:
    import os

    return subprocess.run([sys.executable, "-I", "-c", ENTRY, event], input=stdin, capture_output=True,
                          timeout=TIMEOUT, env={**os.environ, **env})


def denied(res: subprocess.CompletedProcess) -> str:
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny", out
    return out["permissionDecisionReason"]


@pytest.mark.parametrize("stdin", [
    b"",
    json.dumps(BASH_CALL).encode()[:40],  # the agent was cut off mid-write
    b"[1, 2]",
    b"null",
    b"\xff\xfe{}",
    b"[" * 100_000 + b"]" * 100_000,  # past the parser's recursion limit
    json.dumps({**BASH_CALL, "tool_input": {"command": ["cat", ".env"]}}).encode(),  # found by this matrix
    json.dumps({**BASH_CALL, "tool_input": "cat .env"}).encode(),
], ids=["empty", "cut-off", "array", "null", "bad-utf8", "nested", "command-list", "input-string"])
def test_malformed_hook_input_denies(stdin):
    reason = denied(hook(stdin))
    assert "internal-error" in reason or "invalid" in reason


def test_fifty_megabyte_hook_input_is_decided_not_crashed():
    call = {**BASH_CALL, "tool_input": {"command": "echo " + "a" * 50_000_000}}
    res = hook(json.dumps(call).encode())
    assert res.returncode == 0  # decided (allowed or denied), not killed by memory
    assert res.stdout == b"" or json.loads(res.stdout)


def test_a_well_formed_call_still_passes():
    res = hook(json.dumps(BASH_CALL).encode())
    assert res.returncode == 0 and res.stdout == b""


def test_event_log_unwritable_denies_an_allowed_tool_call(tcg_home):
    (tcg_home / "state" / "events.jsonl").mkdir(parents=True)  # EISDIR on open
    reason = denied(hook(json.dumps(BASH_CALL).encode()))
    assert "event-log-unwritable" in reason and "hint:" in reason
