"""Shared detectors: building one compiles every rule, so build each engine once per session."""

from __future__ import annotations

import pytest

from tcg.detect.engine import Detector
from tcg.detect.hsdb import hyperscan_available
from tcg.detect.rule import load_rules

ENGINES = ["re"] + (["hyperscan"] if hyperscan_available() else [])


@pytest.fixture(scope="session")
def all_rules():
    return load_rules()


@pytest.fixture(scope="session")
def detectors(all_rules):
    """engine name -> Detector over all packaged rules."""
    return {engine: Detector.from_rules(all_rules, engine=engine) for engine in ENGINES}
