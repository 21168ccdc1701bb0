"""Engines shared by the inbound tests (compiling the hyperscan prefilter takes seconds)."""

from __future__ import annotations

import pytest

from tcg.detect.hsdb import hyperscan_available
from tcg.inbound.engine import InboundEngine, _Compiled
from tcg.inbound.rules import load_rules

RULES = load_rules()
COMPILED = [_Compiled(i, r) for i, r in enumerate(RULES)]
EXAMPLES = [ex for r in RULES for ex in r.examples_match + r.examples_no_match]
ENGINES = ["re"] + (["hyperscan"] if hyperscan_available() else [])


@pytest.fixture(scope="session")
def engines() -> dict[str, InboundEngine]:
    """Both engines over the packaged rules (hyperscan only where its wheel imports)."""
    return {name: InboundEngine(RULES, engine=name) for name in ENGINES}


@pytest.fixture(scope="session")
def engine(engines) -> InboundEngine:
    """The engine surfaces use by default (hyperscan when available)."""
    return engines[ENGINES[-1]]
