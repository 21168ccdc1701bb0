"""ASK for an agent: refused with a single-use code that only a person at a real
terminal outside the agent's process tree can approve (`tcg approve`, in a PTY)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pexpect
import pytest

from tcg.guard import approval
from tests.guard.helpers import BASH, TCG, check, env_for, events, run_line, tcg

LINE = "touch f && rm f"


def refused_code(cwd: Path, line: str = LINE) -> str:
    proc = run_line(line, cwd)
    assert proc.returncode == 126, proc.stderr
    m = re.search(rb"tcg approve (\d{4}-\d{4})", proc.stderr)
    assert m, proc.stderr
    return m.group(1).decode()


def approve_in_pty(code: str, answer: str, env: dict[str, str] | None = None, argv: list[str] | None = None,
                   cwd: Path | None = None) -> tuple[int, str]:
    env = env if env is not None else env_for("human")
    env.pop("TCG_ACTOR", None)
    cmd, args = (argv[0], argv[1:]) if argv else (TCG, ["approve", code])
    child = pexpect.spawn(cmd, args, env=env, cwd=str(cwd) if cwd else None, timeout=60, encoding="utf-8")
    seen = ""
    idx = child.expect(["approve it, once\\? \\[y/N\\] ", pexpect.EOF])
    seen += child.before or ""
    if idx == 0:
        child.sendline(answer)
        child.expect(pexpect.EOF)
        seen += child.before or ""
    child.close()
    return child.exitstatus, seen


def test_a_person_approves_once_in_their_own_terminal(tmp_path):
    code = refused_code(tmp_path)
    assert not (tmp_path / "f").exists()
    status, shown = approve_in_pty(code, "n", cwd=tmp_path)
    assert status == 1 and LINE in shown and "delete-compound" in shown
    assert refused_code(tmp_path) == code, "an open request keeps its code"
    status, _ = approve_in_pty(code, "y", cwd=tmp_path)
    assert status == 0
    assert events("approval")[-1]["action"] == "granted"
    proc = run_line(LINE, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert events("command_decision")[-1]["approval"] == "used"
    again = refused_code(tmp_path)
    assert again != code, "single use: the next run needs a new approval"
    assert approve_in_pty(code, "y", cwd=tmp_path)[0] == 1


def test_an_approval_is_for_that_line_in_that_directory(tmp_path):
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    code = refused_code(here)
    assert approve_in_pty(code, "y", cwd=here)[0] == 0
    assert run_line(LINE, there).returncode == 126
    assert run_line("touch g && rm g", here).returncode == 126
    assert run_line(LINE, here).returncode == 0


def test_approve_needs_a_terminal(tmp_path):
    code = refused_code(tmp_path)
    proc = subprocess.run([TCG, "approve", code], capture_output=True, stdin=subprocess.DEVNULL,
                          env=env_for("human"), timeout=60)
    assert proc.returncode == 1 and b"needs a terminal" in proc.stderr


def test_approve_refuses_inside_an_agent(tmp_path):
    code = refused_code(tmp_path)
    marked = env_for("human", TCG_AGENT="1")
    status, shown = approve_in_pty(code, "y", env=marked)
    assert status == 1 and "inside an agent" in shown
    # the agent clears its own variables, but its process still carries the marker
    status, shown = approve_in_pty(code, "y", env=marked,
                                   argv=[BASH, "-c", f"env -u TCG_AGENT {TCG} approve {code}; exit $?"])
    assert status == 1 and "process tree" in shown
    assert run_line(LINE, tmp_path).returncode == 126


def test_the_policy_refuses_tcg_approve_for_an_agent(tmp_path):
    rc, verdict = check("tcg approve 1234-5678", tmp_path, "agent")
    assert (rc, verdict["reason"]) == (2, "self-approval")
    rc, verdict = check("tcg approve 1234-5678", tmp_path, "human")
    assert rc == 0


def test_unknown_and_expired_codes(tmp_path, monkeypatch):
    assert tcg("approve", "not-a-code", cwd=tmp_path).returncode == 1
    monkeypatch.setattr(approval, "TTL_S", -1)
    ask = approval.AskRequest(command="x", cwd=str(tmp_path), reason="delete-compound", detail="d",
                              line_hash="0" * 32)
    code = approval.request(ask)
    with pytest.raises(approval.ApprovalError, match="expired"):
        approval.load(code)


def test_approve_refuses_an_agent_by_the_one_actor_rule():
    from tcg.guard.approval import caller_problem

    assert caller_problem({"TCG_ACTOR": " Agent "}, stdin_tty=True) is not None
    assert caller_problem({"TCG_AGENT": "claude"}, stdin_tty=True) is not None
