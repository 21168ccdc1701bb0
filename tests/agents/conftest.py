"""Fixtures shared with the launcher's tests (fake agents on a temp PATH, compiled
detectors), and the real agent CLIs installed under tests/.npm."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.launcher.conftest import _compiled_detectors, _seed_detector_cache, agent_bin, launch_env  # noqa: F401

NPM_BIN = Path(__file__).resolve().parents[1] / ".npm" / "node_modules" / ".bin"


def installed_cli(command: str, package: str, version: str) -> Path:
    """The directory holding ``command`` at ``version`` (npm's .bin), or skip with how to install it."""
    path = NPM_BIN / command
    if not os.access(path, os.X_OK):
        pytest.skip(f"{package} not installed (npm install --prefix tests/.npm {package}@{version})")
    out = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=120)
    if out.returncode != 0 or version not in out.stdout:
        pytest.skip(f"{package}@{version} does not run here ({out.stdout.strip() or out.stderr.strip()[:200]})")
    return NPM_BIN
