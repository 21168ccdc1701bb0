"""How the runner tests start the station agent.

With the real policy engine (tcg.policy.engine, issue 2) present, tests run the
installed `tcg_shell run-line`. Until it lands they run tests/runner/harness.py:
the same station code with a stand-in decision (allow, except lines holding
TCG-TEST-BLOCK). Tests that need real policy decisions skip with ``needs_engine``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
TCG_SHELL = str(BIN / "tcg_shell")
BASH = shutil.which("bash") or "/bin/bash"
ZSH = shutil.which("zsh")

HAS_ENGINE = importlib.util.find_spec("tcg.policy.engine") is not None
HAS_MASK = importlib.util.find_spec("tcg.mask") is not None

needs_engine = pytest.mark.skipif(
    not HAS_ENGINE, reason="tcg.policy.engine (issue 2) not landed yet: no real policy decisions"
)
needs_mask = pytest.mark.skipif(not HAS_MASK, reason="tcg.mask (issue 3) not landed yet")


def station(line: str, shell: str | None = BASH) -> list[str]:
    """argv that runs ``line`` through the station agent."""
    opts = ["--shell", shell] if shell else []
    if HAS_ENGINE:
        return [TCG_SHELL, "run-line", *opts, line]
    return [sys.executable, str(HERE / "harness.py"), *opts, line]


def station_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(extra)
    return env
