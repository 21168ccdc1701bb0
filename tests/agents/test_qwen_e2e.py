"""The REAL Qwen Code CLI (0.24.4) through `tcg launch qwen`, offline.

A local stand-in for the Chat Completions API scripts the model's tool calls
and keeps every request body. Measured here: `run_shell_command` runs
`bash -c CMD`, so BASH_ENV routes it through the station; the in-process
tools (read_file, grep_search, write_file, web_fetch, …) go through tcg's
hooks, which `tcg launch qwen` wires with a generated system settings file.
Skipped when the CLI is not installed
(`npm install --prefix tests/.npm @qwen-code/qwen-code@0.24.4`).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.agents.conftest import installed_cli
from tests.agents.fake_openai import FakeChat, call, text
from tests.helpers.leaks import assert_no_secret_written
from tests.launcher.conftest import TCG, github_pat

QWEN_VERSION = "0.24.4"
ENV_VALUE = "hunter2-" + "Mk3" * 6
NOTES_TOKEN = github_pat(51)
URL_TOKEN = github_pat(52)  # written by the scripted model itself


@pytest.fixture
def qwen_bin() -> Path:
    return installed_cli("qwen", "@qwen-code/qwen-code", QWEN_VERSION)


def test_qwen_codes_tools_are_mediated(qwen_bin, tmp_path, hermetic_home, tcg_home):
    work = tmp_path / "work"
    work.mkdir()
    (work / ".env").write_text(f"DB_PASSWORD={ENV_VALUE}\n")
    (work / "notes.txt").write_text(f"token {NOTES_TOKEN}\n")
    (work / "harmless.txt").write_text("nothing secret here\n")
    qwen_settings = hermetic_home / ".qwen" / "settings.json"
    turns = [
        call("read_file", {"file_path": str(work / ".env")}, "q_read_env"),
        call("read_file", {"file_path": str(work / "notes.txt")}, "q_read_notes"),
        call("read_file", {"file_path": str(work / "harmless.txt")}, "q_read_ok"),
        call("run_shell_command", {"command": "cat .env"}, "q_sh_env"),
        call("run_shell_command", {"command": "cat notes.txt"}, "q_sh_notes"),
        call("run_shell_command", {"command": "echo hello; exit 3"}, "q_sh_exit"),
        call("grep_search", {"pattern": "token", "path": str(work)}, "q_grep"),
        call("write_file", {"file_path": str(qwen_settings), "content": "{}"}, "q_write"),
        call("web_fetch", {"url": f"https://example.org/?t={URL_TOKEN}", "prompt": "x"}, "q_fetch"),
        text("done"),
    ]
    with FakeChat(turns) as api:
        env = {"PATH": f"{qwen_bin}{os.pathsep}/usr/bin{os.pathsep}/bin", "HOME": str(hermetic_home),
               "TCG_HOME": str(tcg_home), "OPENAI_API_KEY": "dummy", "OPENAI_BASE_URL": f"{api.url}/v1",
               "OPENAI_MODEL": "qwen-test", "LANG": "C.UTF-8", "SHELL": "/bin/bash",
               "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1"}
        proc = subprocess.run([TCG, "launch", "qwen", "--yolo", "--auth-type", "openai", "-m", "qwen-test",
                               "use the tools"], cwd=work, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]
        out = api.outputs()
        for i, body in enumerate(api.bodies):
            assert ENV_VALUE not in body and NOTES_TOKEN not in body, f"request {i} carried a planted secret"

    def refused(call_id: str, code: str) -> None:
        assert f"tcg: blocked ({code})" in out[call_id], out[call_id]

    refused("q_read_env", "secret-store-read")
    assert "<SECRET:github-pat" in out["q_read_notes"] and "tcg masked 1 secret" in out["q_read_notes"]
    assert "nothing secret here" in out["q_read_ok"] and "tcg" not in out["q_read_ok"]  # a harmless Read works
    refused("q_sh_env", "secret-store-read")
    assert "<SECRET:github-pat" in out["q_sh_notes"] and "Exit Code: 0" in out["q_sh_notes"]
    assert "hello" in out["q_sh_exit"] and "Exit Code: 3" in out["q_sh_exit"]  # a harmless command, its status
    assert "<SECRET:github-pat" in out["q_grep"]
    refused("q_write", "guard-tamper")
    refused("q_fetch", "secret-in-request")
    assert not qwen_settings.exists()
    events = [json.loads(x) for x in (tcg_home / "state" / "events.jsonl").read_text().splitlines()]
    gate = [e for e in events if e["event"] == "launch_gate"][-1]
    assert gate["wired"] == ["env", "bash-env", "zdotdir", "qwen-hooks"]
    hooks = [e for e in events if e["event"] == "hook_decision"]
    assert {e["surface"] for e in hooks} == {"qwen-hooks"} and {e["session"] for e in hooks} == {gate["session"]}
    shell = [e for e in events if e["event"] == "command_decision" and "notes.txt" in (e.get("command") or "")]
    assert shell and shell[-1]["actor"] == "agent"  # the shell tool ran through the station
    assert_no_secret_written(tcg_home, [ENV_VALUE, NOTES_TOKEN, URL_TOKEN])
