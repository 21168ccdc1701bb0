"""How the runner tests start the station agent: the installed `tcg_shell run-line`."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

BIN = Path(sys.executable).parent
TCG_SHELL = str(BIN / "tcg_shell")
BASH = shutil.which("bash") or "/bin/bash"
ZSH = shutil.which("zsh")


def station(line: str, shell: str | None = BASH) -> list[str]:
    """argv that runs ``line`` through the station agent."""
    opts = ["--shell", shell] if shell else []
    return [TCG_SHELL, "run-line", *opts, line]


def station_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(extra)
    return env
