"""`tcg_shell` dispatcher: usage, unknown subcommands, a broken install."""

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


def test_missing_module_is_an_internal_error(capsys, monkeypatch):
    from tcg import router

    monkeypatch.setitem(router.SHELL_VERBS, "ghost", ("tcg.never_built_module", "main", 2))
    assert shell_entry.main(["ghost"]) == 2
    assert capsys.readouterr().err.startswith("tcg_shell: internal error: ModuleNotFoundError")


def test_hot_path_does_not_import_click():
    code = (
        "import sys; from tcg import shell_entry; shell_entry.main(['--help']);"
        "print('click' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip().endswith("False")


def test_plain_command_decision_imports_no_heavy_module():
    """`tcg_shell run-line true` decides and runs without re, enum, typing, the
    tree-sitter parser or the masker: each costs milliseconds on every command."""
    code = (
        "import sys; from tcg import shell_entry; rc = shell_entry.main(['run-line', 'true']);"
        "heavy = ('re', 'enum', 'typing', 'functools', 'dataclasses', 'pathlib', 'tree_sitter._binding',"
        " 'tcg.mask', 'tcg.detect.engine', 'click', 'signal');"
        "print(rc, sorted(m for m in heavy if m in sys.modules))"
    )
    runs = [subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=120,
                           stdin=subprocess.DEVNULL) for _ in range(2)]
    # the first run fills the start-up caches (policy snapshot, masked command line)
    assert runs[0].stdout.strip().splitlines()[-1].startswith("0 "), runs[0].stderr
    assert runs[1].stdout.strip().splitlines()[-1] == "0 []", runs[1].stderr
