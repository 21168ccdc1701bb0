"""One handler maps errors to exit codes and two-line messages (docs/cli.md)."""

from __future__ import annotations

import pytest

from tcg.errors import ExitCode, PolicyError, TcgError, UsageError, run_with_error_handler


def raiser(exc: BaseException):
    def f():
        raise exc

    return f


def test_tcg_error_maps_to_its_code_with_a_hint(capsys):
    rc = run_with_error_handler(raiser(TcgError("the thing broke", hint="do this", exit_code=7)))
    assert rc == 7
    assert capsys.readouterr().err == "tcg: the thing broke\nhint: do this\n"


def test_prog_name_and_no_hint(capsys):
    assert run_with_error_handler(raiser(TcgError("plain")), prog="tcg_shell") == ExitCode.ERROR
    assert capsys.readouterr().err == "tcg_shell: plain\n"


def test_subclass_codes(capsys):
    assert run_with_error_handler(raiser(UsageError("bad usage"))) == 2
    err = PolicyError("unknown key 'x'", hint="see docs/policy.md", path="/p.toml", line=4)
    assert run_with_error_handler(raiser(err)) == 2
    assert capsys.readouterr().err.endswith("tcg: /p.toml:4: unknown key 'x'\nhint: see docs/policy.md\n")


def test_unexpected_error_is_internal_without_traceback(capsys):
    rc = run_with_error_handler(raiser(ZeroDivisionError("secret-ish detail")))
    err = capsys.readouterr().err
    assert rc == ExitCode.INTERNAL != ExitCode.FINDINGS
    assert err.startswith("tcg: internal error: ZeroDivisionError\nhint: ")
    assert "Traceback" not in err
    assert "secret-ish detail" not in err  # the message may carry data; only the type is shown


@pytest.mark.parametrize("exc", [ZeroDivisionError("boom"), TcgError("known")])
def test_traceback_only_with_tcg_debug(capsys, monkeypatch, exc):
    monkeypatch.setenv("TCG_DEBUG", "1")
    run_with_error_handler(raiser(exc))
    assert "Traceback (most recent call last)" in capsys.readouterr().err
    monkeypatch.setenv("TCG_DEBUG", "0")
    run_with_error_handler(raiser(exc))
    assert "Traceback" not in capsys.readouterr().err


def test_keyboard_interrupt_is_130(capsys):
    assert run_with_error_handler(raiser(KeyboardInterrupt())) == 130
    assert "Traceback" not in capsys.readouterr().err


def test_return_values():
    assert run_with_error_handler(lambda: None) == 0
    assert run_with_error_handler(lambda: 3) == 3


def test_broken_pipe_is_quiet(capsys, monkeypatch):
    import sys

    monkeypatch.setattr(sys, "stdout", sys.stdout)  # restored after the handler swaps it
    assert run_with_error_handler(raiser(BrokenPipeError())) == 0
    assert capsys.readouterr().err == ""
