"""The `tcg` group: help, version, unknown and not-yet-built commands."""

from __future__ import annotations

import pytest

from tcg import __version__
from tcg.cli import COMMANDS, main


def test_help_lists_the_built_commands(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in ("doctor", "events", "policy"):
        assert f"  {name} " in out


def test_version(capsys):
    assert main(["--version"]) == 0
    assert __version__ in capsys.readouterr().out


def test_unknown_command_is_a_usage_error(capsys):
    assert main(["no-such-command"]) == 2
    assert "No such command" in capsys.readouterr().err


def test_command_missing_from_this_build(capsys, monkeypatch):
    monkeypatch.setitem(COMMANDS, "ghost", "tcg.cli.ghost_never_built:ghost")
    assert main(["ghost"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("tcg: `tcg ghost` is not available in this build\nhint: ")
    assert main(["--help"]) == 0
    assert "ghost" not in capsys.readouterr().out


@pytest.mark.parametrize("args", [["policy", "show", "--bogus"], ["events", "--type"]])
def test_bad_options_exit_2(capsys, args):
    assert main(args) == 2
