"""End to end with the REAL Claude Code CLI, offline: the Bash tool's shell prefix.

`tcg launch claude -p …` against a local stand-in for the Messages API: the
scripted Bash tool calls run through CLAUDE_CODE_SHELL_PREFIX → the station,
and the NEXT request body (what a provider would receive) is checked: `cat
.env` arrives as the policy refusal (from tcg's PreToolUse hook, before the
shell), `cat notes.txt` masked, `echo hello` unchanged; the user's own hook
commands run through the prefix too. tests/agents/test_claude_hooks_e2e.py
covers the other tools. Skipped when the CLI is not installed; install it with

    npm install --prefix tests/.npm --no-audit --no-fund --ignore-scripts @anthropic-ai/claude-code@2.1.328

(tests/.npm is gitignored; the platform package carries the native `claude`
binary, so the postinstall is not needed). TCG_CLAUDE_BIN names another binary.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers.leaks import assert_no_secret_written
from tests.launcher.conftest import TCG, commit, github_pat, make_repo
from tests.launcher.fake_anthropic import FakeAnthropic, text_turn, tool_turn

CLAUDE_VERSION = "2.1.328"
NPM_DIR = Path(__file__).resolve().parents[1] / ".npm"
ENV_VALUE = "hunter2-" + "Xw4" * 6


def claude_binary() -> Path | None:
    override = os.environ.get("TCG_CLAUDE_BIN")
    if override:
        return Path(override) if os.access(override, os.X_OK) else None
    for rel in ("node_modules/@anthropic-ai/claude-code-linux-x64/claude",
                "node_modules/@anthropic-ai/claude-code-linux-arm64/claude"):
        p = NPM_DIR / rel
        if os.access(p, os.X_OK):
            return p
    return None


@pytest.fixture
def claude_bin(tmp_path) -> Path:
    binary = claude_binary()
    if binary is None:
        pytest.skip(f"Claude Code CLI not installed (npm install --prefix {NPM_DIR} "
                    f"@anthropic-ai/claude-code@{CLAUDE_VERSION})")
    d = tmp_path / "claude-bin"
    d.mkdir()
    (d / "claude").symlink_to(binary)
    try:
        out = subprocess.run([str(d / "claude"), "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        pytest.skip("the Claude Code binary does not run here")
    if out.returncode != 0:
        pytest.skip("the Claude Code binary does not run here")
    return d


def test_real_claude_code_tool_calls_are_mediated(claude_bin, tmp_path, hermetic_home, tcg_home):
    repo = make_repo(tmp_path / "project")
    commit(repo, "README.md", "a project\n")
    (repo / ".env").write_text(f"DB_PASSWORD={ENV_VALUE}\n")
    token = github_pat(11)
    (repo / "notes.txt").write_text(f"token for deploys: {token}\n")
    # A user-level PreToolUse hook: Claude Code runs hook commands through the same prefix,
    # and they must keep working (stdin carries the hook's JSON input).
    hook_out = tmp_path / "hook-input.json"
    settings = hermetic_home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": f"cat >> {hook_out}"}]}]}}))
    turns = [
        tool_turn("toolu_env", "cat .env"),
        tool_turn("toolu_notes", "cat notes.txt"),
        tool_turn("toolu_echo", "echo hello"),
        text_turn("all done"),
    ]
    with FakeAnthropic(turns) as api:
        env = {
            "PATH": f"{claude_bin}{os.pathsep}{os.environ['PATH']}",
            "HOME": str(hermetic_home),
            "TCG_HOME": str(tcg_home),
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": "dummy",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "SHELL": "/bin/bash",
            "SHLVL": "1",
            "IS_SANDBOX": "1",
            "LANG": "C.UTF-8",
        }
        # The repo holds the planted secrets (untracked): the gate finds them, and the
        # human launching this test accepts them explicitly.
        proc = subprocess.run(
            [TCG, "launch", "--accept-findings", "claude", "-p", "run the three commands",
             "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"],
            cwd=repo, env=env, capture_output=True, text=True, timeout=180,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert api.main_calls >= 4, (api.main_calls, proc.stdout[-2000:], proc.stderr[-2000:])

        def result_text(tool_id: str) -> str:
            blocks = api.tool_result_bodies(tool_id)
            assert blocks, f"no tool_result for {tool_id}"
            return json.dumps(blocks[-1]["content"])

        env_result = result_text("toolu_env")
        assert "blocked (secret-store-read)" in env_result and ENV_VALUE not in env_result, env_result
        notes_result = result_text("toolu_notes")
        assert "<SECRET:github-pat" in notes_result, notes_result
        echo_result = result_text("toolu_echo")
        assert "hello" in echo_result and "blocked" not in echo_result, echo_result

        hook_input = hook_out.read_text()
        assert hook_input.count('"hook_event_name":"PreToolUse"') + hook_input.count('"hook_event_name": "PreToolUse"') == 3
        everything = "\n".join(api.bodies) + proc.stdout + proc.stderr
        assert ENV_VALUE not in everything
        assert token not in everything
    events = [json.loads(x) for x in (tcg_home / "state" / "events.jsonl").read_text().splitlines()]
    gate = [e for e in events if e["event"] == "launch_gate"]
    assert gate[-1]["reason"] == "findings-accepted" and "claude-shell-prefix" in gate[-1]["wired"]
    hooks = [e for e in events if e["event"] == "hook_decision" and e["hook_event"] == "PreToolUse"]
    assert [e["decision"] for e in hooks if e["tool"] == "Bash"] == ["block", "allow", "allow"]
    agent_cmds = [e for e in events if e["event"] == "command_decision" and e["actor"] == "agent"]
    assert sum("notes.txt" in (e.get("command") or "") for e in agent_cmds) == 1  # ran through the station
    assert all(e["session"] == gate[-1]["session"] for e in agent_cmds + hooks)
    # The hook commands reached the station too (through the prefix), and ran.
    assert sum("hook-input.json" in (e.get("command") or "") for e in agent_cmds) == 3
    assert_no_secret_written(tcg_home, [ENV_VALUE, token])
