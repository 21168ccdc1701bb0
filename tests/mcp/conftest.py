"""MCP proxy test fixtures: every test gets a hermetic TCG_HOME, but the compiled
detector database (cache, no secrets) is copied in from one warm copy so each
proxy start does not recompile it (2 s per start on the loaded CI machine)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def _warm_detect_cache(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("warm-tcg-home")
    subprocess.run([sys.executable, "-c", "from tcg.detect.engine import load_detector; load_detector()"],
                   env={**os.environ, "TCG_HOME": str(home)}, check=True, timeout=300)
    return home / "cache" / "detect"


@pytest.fixture(autouse=True)
def _detect_cache(hermetic_home, _warm_detect_cache) -> None:
    if _warm_detect_cache.is_dir():
        shutil.copytree(_warm_detect_cache, Path(os.environ["TCG_HOME"]) / "cache" / "detect",
                        dirs_exist_ok=True)
