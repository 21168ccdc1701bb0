"""Shared helpers for the clipboard tests (fake tokens, a recording runner, shims)."""

from __future__ import annotations

import os
import secrets
import shutil
import stat
import string
import sys
from pathlib import Path

from tcg.clipboard.backends import run_tool

ALNUM = string.ascii_letters + string.digits


def fake_pat() -> str:
    """A random, realistically shaped (fake) GitHub classic PAT."""
    return "ghp_" + "".join(secrets.choice(ALNUM) for _ in range(36))


class RecordingRunner:
    """The real run_tool, with every argv recorded (and writes counted)."""

    def __init__(self):
        self.argvs: list[list[str]] = []

    def __call__(self, argv, **kw):
        self.argvs.append(list(argv))
        return run_tool(argv, **kw)

    @property
    def writes(self) -> int:
        return sum(1 for a in self.argvs if a[-1] in ("-i", "--input") or a[0] == "wl-copy")


def shim_dir(tmp_path: Path, body: str, name: str = "xclip") -> Path:
    """A directory holding an executable ``name`` whose Python body gets REAL (the real tool)."""
    d = tmp_path / "shim"
    d.mkdir(exist_ok=True)
    real = shutil.which(name)
    p = d / name
    p.write_text(f"#!{sys.executable}\nimport os, sys\nREAL = {real!r}\n{body}\n")
    p.chmod(p.stat().st_mode | stat.S_IXUSR)
    return d


def argv_logging_shim(tmp_path: Path, log: Path) -> Path:
    """xclip that appends its argv (one line) to ``log`` and execs the real xclip."""
    return shim_dir(tmp_path, (
        f"with open({str(log)!r}, 'a') as f:\n"
        "    f.write(repr(sys.argv[1:]) + '\\n')\n"
        "os.execv(REAL, [REAL] + sys.argv[1:])"
    ))


def path_with(d: Path) -> str:
    return f"{d}{os.pathsep}{os.environ.get('PATH', '')}"
