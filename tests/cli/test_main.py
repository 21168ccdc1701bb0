"""The `tcg` group: help, version, unknown commands, a broken install."""

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


def test_a_missing_command_module_is_an_internal_error(capsys, monkeypatch):
    """A broken install is reported, never hidden from --help."""
    monkeypatch.setitem(COMMANDS, "ghost", "tcg.cli.ghost_never_built:ghost")
    assert main(["ghost"]) == 2
    assert capsys.readouterr().err.startswith("tcg: internal error: ModuleNotFoundError\nhint: ")
    assert main(["--help"]) == 2  # the listing reports it too, rather than leave it out
    assert "internal error: ModuleNotFoundError" in capsys.readouterr().err


@pytest.mark.parametrize("args", [["policy", "show", "--bogus"], ["events", "--type"]])
def test_bad_options_exit_2(capsys, args):
    assert main(args) == 2
