"""`tcg_shell` dispatcher: usage, unknown subcommands, parts not built yet."""

from __future__ import annotations

import subprocess
import sys

from tcg import shell_entry


def test_usage(capsys):
    assert shell_entry.main([]) == 2
    assert capsys.readouterr().err.startswith("usage: tcg_shell")
    assert shell_entry.main(["--help"]) == 0
    assert capsys.readouterr().out.startswith("usage: tcg_shell")


def test_unknown_subcommand(capsys):
    assert shell_entry.main(["frobnicate"]) == 2
    assert "unknown subcommand 'frobnicate'" in capsys.readouterr().err


def test_missing_module_is_a_clear_error(capsys, monkeypatch):
    monkeypatch.setitem(shell_entry.SUBCOMMANDS, "ghost", ("tcg.never_built_module", "main"))
    assert shell_entry.main(["ghost"]) == 1
    assert capsys.readouterr().err.startswith("tcg_shell: `tcg_shell ghost` is not available")


def test_hot_path_does_not_import_click():
    code = (
        "import sys; from tcg import shell_entry; shell_entry.main(['--help']);"
        "print('click' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip().endswith("False")
