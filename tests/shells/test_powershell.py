"""PowerShell with a real `pwsh`: the hook parses and loads silently under
StrictMode, its quoting holds, and — on Linux and macOS, driven in tmux like
the bash/zsh tests — a session decides each line before PSReadLine accepts it.

`pwsh` is not installed on the project's Linux test machine: these tests skip
there, with a message, and run on the Linux, macOS and Windows runners of
.github/workflows/shells.yml.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from tcg.shells.shells import SHELLS, Features

PWSH = shutil.which("pwsh")
pytestmark = pytest.mark.skipif(PWSH is None, reason="pwsh (PowerShell 7) is not installed here; "
                                "these tests run on the CI runners of .github/workflows/shells.yml")
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def render(python: str = sys.executable, **kw) -> str:
    f = dict(python=python, session=True, launch=False, agents=("claude", "qwen-code"))
    f.update(kw)
    return SHELLS["pwsh"]().render(Features(**f))


def pwsh(script: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([PWSH, "-NoLogo", "-NoProfile", "-NonInteractive", "-Command", script],
                          capture_output=True, text=True, timeout=120, **kw)


def test_hook_parses_and_loads_silently_under_strict_mode(tmp_path):
    hook = tmp_path / "hook.ps1"
    hook.write_text(render())
    r = pwsh(f"Set-StrictMode -Version Latest; $ErrorActionPreference = 'Stop'; . '{hook}'; "
             "Get-Command claude, qwen-code | ForEach-Object Name")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["claude", "qwen-code"] and r.stderr == ""


@pytest.mark.parametrize("value", ["C:\\Users\\O\u2019Brien\\py.exe", "it's", "\u2018a\u201b $x `y"])
def test_quoted_values_read_back_exactly(tmp_path, value):
    hook = tmp_path / "hook.ps1"
    hook.write_text(render(python=value), encoding="utf-8")
    r = pwsh(f". '{hook}'; [Console]::Out.Write($global:_tcg_py)")
    assert r.stdout == value


@pytest.mark.skipif(sys.platform == "win32" or shutil.which("tmux") is None,
                    reason="the interactive PowerShell session test drives tmux (Linux, macOS)")
def test_session_decides_lines_before_psreadline_accepts_them(tmp_path, tcg_home):
    from tests.helpers.waiting import wait_for

    from .tmux import Pane

    home = tmp_path / "home"
    profile = home / ".config" / "powershell" / "Microsoft.PowerShell_profile.ps1"
    profile.parent.mkdir(parents=True)
    profile.write_text("function prompt { 'PS> ' }\n" + render())
    work = tmp_path / "work"
    work.mkdir()
    pane = Pane("bash", work, home, session=False, argv=[PWSH, "-NoLogo"], wait_prompt=False)
    try:
        pane.wait_screen("PS> ", timeout=180)
        pane.line("$env:TCG_SESSION.Length > s.txt", wait=False)
        wait_for(lambda: (work / "s.txt").exists(), 60, "s.txt")
        pane.line(f"Write-Output '{TOKEN}'", wait=False)
        screen = pane.wait_screen("<SECRET:github-pat-classic:")
        pane.line(f"Get-Content '{tcg_home / 'state' / 'key'}'", wait=False)
        screen = pane.wait_screen("tcg: blocked (self-protection)")
        pane.line("$LASTEXITCODE > rc.txt", wait=False)
        wait_for(lambda: (work / "rc.txt").exists() and "126" in (work / "rc.txt").read_text("utf-16", "ignore")
                 + (work / "rc.txt").read_text("utf-8", "ignore"), 60, "rc.txt")
        assert TOKEN not in screen
    finally:
        pane.close()
