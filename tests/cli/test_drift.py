"""One actor rule, one grammar per verb, one internal-error code: the entries agree.

Each test here failed before the entries shared the router (tcg/router.py), the
actor rule (tcg.events.actor_from_env) and the error handler (tcg.errors).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tcg import shell_entry
from tcg.cli import main
from tcg.errors import ExitCode


def _events(tcg_home):
    path = tcg_home / "state" / "events.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_check_takes_the_agent_from_tcg_agent_as_run_line_does(tmp_path, monkeypatch, capsys):
    """The launcher marks an agent with TCG_AGENT; check and run-line read one rule."""
    (tmp_path / ".env").write_text("API_KEY=x\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TCG_ACTOR", raising=False)
    monkeypatch.setenv("TCG_AGENT", "claude")
    assert main(["check", "cat .env"]) == ExitCode.BLOCKED_CHECK
    assert "(agent)" in capsys.readouterr().out
    assert shell_entry.main(["check", "cat .env"]) == ExitCode.BLOCKED_CHECK
    run = subprocess.run([sys.executable, "-m", "tcg.shell_entry", "run-line", "cat .env"],
                         capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert run.returncode == ExitCode.BLOCKED, run.stderr
    monkeypatch.delenv("TCG_AGENT")
    assert main(["check", "cat .env"]) == ExitCode.OK  # a human: sanitized, runs
    assert "(human)" in capsys.readouterr().out


@pytest.mark.parametrize("args", [["a", "b"], ["--bogus", "x"], ["--bogus"], [], ["--actor"],
                                  ["--actor", "robot", "true"]])
def test_check_has_one_grammar_and_one_usage_code(args, capsys):
    """`tcg check a b` and `tcg check --bogus` exit alike: 1, as `tcg_shell check` does
    (2 would read as BLOCK)."""
    assert main(["check", *args]) == ExitCode.ERROR
    err = capsys.readouterr().err
    assert err.startswith("tcg check: ") and "hint: " in err
    assert shell_entry.main(["check", *args]) == ExitCode.ERROR
    from tcg.cli.app import cli

    assert cli.main(args=["check", *args], standalone_mode=False) == ExitCode.ERROR


def test_check_help_is_rendered_by_click(capsys):
    assert main(["check", "--help"]) == 0
    assert "--actor human|agent" in capsys.readouterr().out


def test_unexpected_crash_in_scan_is_not_findings(tmp_path, monkeypatch, capsys, tcg_home):
    """CI reads 1 as "secrets found": a crash exits 2 and is logged, with the class only."""
    from tcg.scan import command

    def crash(*args, **kwargs):
        raise RuntimeError("detail that may hold data")

    monkeypatch.setattr(command, "run", crash)
    rc = main(["scan", str(tmp_path)])
    assert rc == ExitCode.INTERNAL and rc != ExitCode.FINDINGS
    err = capsys.readouterr().err
    assert err.startswith("tcg: internal error: RuntimeError\nhint: ")
    assert "detail that may hold data" not in err
    events = [e for e in _events(tcg_home) if e["event"] == "internal_error"]
    assert events and events[-1]["command"] == "tcg scan" and events[-1]["error"] == "RuntimeError"
    assert events[-1]["exit_code"] == ExitCode.INTERNAL
    assert "detail that may hold data" not in (tcg_home / "state" / "events.jsonl").read_text()


def test_unexpected_crash_in_check_fails_closed(monkeypatch, capsys):
    import tcg.policy.load

    def crash(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(tcg.policy.load, "load_policy", crash)
    assert main(["check", "true"]) == ExitCode.BLOCKED_CHECK
    assert shell_entry.main(["check", "true"]) == ExitCode.BLOCKED_CHECK
    assert "internal error: RuntimeError" in capsys.readouterr().err


def test_unexpected_crash_in_a_click_command_is_internal(monkeypatch, capsys, tcg_home):
    import tcg.cli.events as events_cli

    def crash(*args, **kwargs):
        raise ValueError("boom")

    monkeypatch.setattr(events_cli.events, "callback", crash)
    assert main(["events"]) == ExitCode.INTERNAL
    assert "internal error: ValueError" in capsys.readouterr().err
    assert any(e["event"] == "internal_error" and e["command"] == "tcg events" for e in _events(tcg_home))


@pytest.mark.parametrize("args", [["--bogus"], ["--channel"]])
def test_check_span_usage_error_is_not_block(args, capsys):
    """2 is BLOCK for check-span as for check: its usage errors exit 1 too."""
    assert main(["check-span", *args]) == ExitCode.ERROR


@pytest.mark.parametrize("entry", [
    lambda: shell_entry.main(["run-line", "true"]),
    lambda: main(["shell-run-line", "true"]),
    lambda: main(["run", "--", "true"]),
])
def test_unexpected_crash_in_the_station_fails_closed(entry, monkeypatch, capsys, tcg_home):
    """The station has no second error handler: a crash exits 126 (as if blocked: the
    command's own 1 would read as "ran and failed") through the one handler, logged."""
    from tcg.runner.station import Station

    def crash(*args, **kwargs):
        raise RuntimeError("detail that may hold data")

    monkeypatch.setattr(Station, "run_line", crash)
    monkeypatch.setattr(Station, "run_argv", crash)
    assert entry() == ExitCode.BLOCKED
    err = capsys.readouterr().err
    assert "internal error: RuntimeError\nhint: " in err and "detail" not in err
    assert any(e["event"] == "internal_error" and e["exit_code"] == ExitCode.BLOCKED for e in _events(tcg_home))


@pytest.mark.parametrize("verb,args", [("mask", ["--bogus"]), ("scan", ["a", "b", "c", "--bogus"]),
                                       ("run", []), ("shell-run-line", ["--bogus", "x"])])
def test_one_grammar_for_the_routed_verbs(verb, args, capsys):
    """The router and the click command give a verb's bad arguments one answer."""
    from tcg.cli.app import cli
    from tcg.errors import run_with_error_handler

    rc = main([verb, *args])
    routed = capsys.readouterr()
    assert rc == ExitCode.USAGE and routed.out == "" and routed.err
    rc2 = run_with_error_handler(lambda: cli.main(args=[verb, *args], prog_name="tcg", standalone_mode=False))
    assert (rc2, capsys.readouterr()) == (rc, routed)


def test_an_invalid_policy_on_the_run_line_path_is_recorded(tmp_path, monkeypatch, capsys, tcg_home):
    """run-line refuses on an invalid policy and records a policy_error with the file
    and line only, never what the file holds."""
    token = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    bad = tmp_path / "policy.toml"
    bad.write_text(f'[scan]\nnote = "{token}\n')
    monkeypatch.setenv("TCG_POLICY", str(bad))
    assert shell_entry.main(["run-line", "true"]) == ExitCode.BLOCKED
    records = _events(tcg_home)
    errors = [e for e in records if e["event"] == "policy_error"]
    assert len(errors) == 1 and (errors[0]["policy_path"], errors[0]["policy_line"]) == (str(bad), 2)
    assert errors[0]["surface"] == "shell" and errors[0]["reason"] == "policy-invalid"
    assert any(e["event"] == "command_decision" and e["reason"] == "policy-invalid" for e in records)
    assert token not in (tcg_home / "state" / "events.jsonl").read_text()
