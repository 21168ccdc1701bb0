"""The `file-write` outbound channel (docs/guard.md) in an agent's file tools, through
`tcg hook claude|qwen PreToolUse` run as the CLIs run it: the text a Write, Edit,
MultiEdit or NotebookEdit writes is judged like `tcg check-span --channel file-write`;
a secret in it is written as its placeholder (default), or the write refused when the
policy says so; Qwen Code, which ignores a rewritten input, gets a refusal."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tcg.agents import qwen
from tests.agents.test_claude_hook import denial, events, pre
from tests.helpers.leaks import assert_no_secret_written
from tests.launcher.conftest import github_pat

TOKEN = github_pat(71)


def updated(reply: dict | None) -> dict:
    assert reply is not None, "the hook let the secret through unchanged"
    out = reply["hookSpecificOutput"]
    assert "permissionDecision" not in out, reply
    return out["updatedInput"]


@pytest.mark.parametrize(("tool", "tool_input", "field"), [
    ("Write", {"file_path": "{p}/deploy.sh", "content": f"export GH_TOKEN={TOKEN}\necho ok\n"}, ("content",)),
    ("Edit", {"file_path": "{p}/deploy.sh", "old_string": "echo ok", "new_string": f"echo {TOKEN}",
              "replace_all": False}, ("new_string",)),
    ("MultiEdit", {"file_path": "{p}/deploy.sh", "edits": [{"old_string": "a", "new_string": "b"},
                                                          {"old_string": "c", "new_string": f"t={TOKEN}"}]},
     ("edits", 1, "new_string")),
    ("NotebookEdit", {"notebook_path": "{p}/n.ipynb", "new_source": f"tok = '{TOKEN}'"}, ("new_source",)),
])
def test_a_secret_is_written_as_its_placeholder(tool, tool_input, field, tmp_path, tcg_home):
    raw = json.loads(json.dumps(tool_input).replace("{p}", str(tmp_path)))
    got = updated(pre(tool, raw, tmp_path)[0])
    value = got
    for key in field:
        value = value[key]
    assert TOKEN not in json.dumps(got) and "<SECRET:github-pat" in value
    assert set(got) == set(raw)  # the complete input comes back
    untouched = {k: v for k, v in raw.items() if k != field[0]}
    assert {k: got[k] for k in untouched} == untouched
    ev = events(tcg_home)[-1]
    assert (ev["decision"], ev["reason"], ev["input_updated"]) == ("sanitize", "outbound-secret", True)
    assert_no_secret_written(tcg_home, [TOKEN])


def test_a_write_without_a_secret_is_left_alone(tmp_path):
    assert pre("Write", {"file_path": str(tmp_path / "a.txt"), "content": "hello\n"}, tmp_path)[0] is None


def test_the_policy_can_refuse_the_write(tmp_path, tcg_home):
    policy = tcg_home / "config" / "policy.toml"
    policy.parent.mkdir(parents=True, exist_ok=True)
    policy.write_text('[channels.decisions]\nfile-write = "block"\n', encoding="utf-8")
    target = tmp_path / "deploy.sh"
    reason = denial(pre("Write", {"file_path": str(target), "content": f"GH_TOKEN={TOKEN}\n"}, tmp_path)[0])
    assert reason is not None and reason.startswith("tcg: blocked (outbound-secret)") and "hint:" in reason
    assert TOKEN not in reason and not target.exists()
    assert_no_secret_written(tcg_home, [TOKEN])


def test_qwen_code_cannot_rewrite_so_the_write_is_refused(tmp_path, tcg_home):
    """Qwen Code 0.24.4 ignores updatedInput: running the call unrewritten would write the secret."""
    entry = qwen.hook_entry(sys.executable, "PreToolUse")
    data = {"session_id": "s", "cwd": str(tmp_path), "hook_event_name": "PreToolUse", "tool_name": "write_file",
            "tool_input": {"file_path": str(tmp_path / "a.sh"), "content": f"GH_TOKEN={TOKEN}\n"}}
    argv = shlex.split(str(entry["command"]))
    proc = subprocess.run(argv, input=json.dumps(data).encode(), cwd=tmp_path, env=dict(os.environ),
                          capture_output=True, timeout=120)
    reply = json.loads(proc.stdout.decode())
    reason = reply["hookSpecificOutput"]["permissionDecisionReason"]
    assert reply["hookSpecificOutput"]["permissionDecision"] == "deny", reply
    assert reason.startswith("tcg: blocked (input-not-rewritable)") and TOKEN not in reason
    assert events(tcg_home)[-1]["reason"] == "input-not-rewritable"


def test_an_edits_old_string_is_not_judged(tmp_path: Path):
    """An Edit's old_string is not written: a secret only there (copied from the file) is no reason."""
    reply = pre("Edit", {"file_path": str(tmp_path / "a"), "old_string": f"t={TOKEN}", "new_string": "t=$GH_TOKEN"},
                tmp_path)[0]
    assert reply is None
