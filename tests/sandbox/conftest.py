from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.sandbox.world import World, build

TCG_SHELL = str(Path(sys.executable).parent / "tcg_shell")
BASH = shutil.which("bash") or "/bin/bash"


def sandbox_works() -> str | None:
    """None when this machine can build the view (else why not: tests skip)."""
    from tcg.sandbox.linux import supported

    why = supported()
    if why:
        return why
    r = subprocess.run(["unshare", "-Urm", "true"], capture_output=True) if shutil.which("unshare") else None
    if r is not None and r.returncode != 0 and os.geteuid() != 0:
        return "user namespaces are disabled here"
    return None


@pytest.fixture
def world(hermetic_home, tmp_path) -> World:
    return build(hermetic_home, tmp_path / "w")


def run_agent(world: World, line: str, *, env: dict[str, str] | None = None, timeout: float = 120,
              prefix: list[str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """``line`` through `tcg_shell run-line` as the agent would: stdin /dev/null, pipes."""
    return subprocess.run([*(prefix or []), TCG_SHELL, "run-line", "--shell", BASH, line], cwd=world.project,
                          env=env or world.env, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)


def run_plain(world: World, line: str, timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in world.env.items() if not k.startswith("TCG_")}
    return subprocess.run([BASH, "-c", line], cwd=world.project, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, timeout=timeout)
