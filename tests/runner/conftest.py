"""Runner tests start many station processes; each one loads the detector.

Compiling the hyperscan database takes ~0.5 s of CPU per cold TCG_HOME, so one
warm cache is built per session and copied into each test's hermetic TCG_HOME
(the detector re-verifies a cached database against the rules' examples on load).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def warm_detect_cache(tmp_path_factory):
    home = tmp_path_factory.mktemp("warm-tcg-home")
    old = os.environ.get("TCG_HOME")
    os.environ["TCG_HOME"] = str(home)
    try:
        from tcg.mask import masker_for
        from tcg.policy.load import load_policy

        masker_for(load_policy(include_repo=False), "strict")
    finally:
        if old is None:
            os.environ.pop("TCG_HOME", None)
        else:
            os.environ["TCG_HOME"] = old
    cache = home / "cache" / "detect"
    return cache if cache.is_dir() else None


@pytest.fixture(autouse=True)
def _detect_cache(warm_detect_cache, hermetic_home):
    if warm_detect_cache is not None:
        target = Path(os.environ["TCG_HOME"]) / "cache" / "detect"
        shutil.copytree(warm_detect_cache, target, dirs_exist_ok=True)
