"""docs/rules.md names exactly which key names let a quoted value run to 2,048 characters
(the names of generic-secret-assignment) and which keep 512 (any other `…key` name): the
names it lists are read from the docs and checked against the detector, so the docs cannot
drift from the rules again."""

from __future__ import annotations

import random
import re
import string
from pathlib import Path

import pytest

from tcg.detect.engine import load_detector

DOCS = Path(__file__).resolve().parents[2] / "docs" / "rules.md"


def _listed_long_key_names() -> list[str]:
    text = " ".join(DOCS.read_text(encoding="utf-8").split())
    m = re.search(r"the key names (.*?) \(separators", text)
    assert m, "docs/rules.md no longer lists the key names of the 2,048 bound"
    names = [n for alt in re.findall(r"`([^`]+)`", m.group(1)) for n in alt.split("/")]
    assert len(names) >= 5
    return names


@pytest.fixture(scope="module")
def det():
    return load_detector()


def _long_value(n: int, seed: str) -> str:
    """A generated-looking value, the same on every run: a fresh random one of 2,000
    characters now and then spells an allow-listed word (`Key`, `fake`) and is rightly
    not reported."""
    rng = random.Random(f"{seed}:{n}")
    alphabet = string.ascii_letters + string.digits
    return "".join(rng.choice(alphabet) for _ in range(n))


@pytest.mark.parametrize("name", [*_listed_long_key_names(), "session_token", "client_secret"])
def test_listed_names_take_quoted_values_to_2048(det, name: str) -> None:
    value = _long_value(2000, name)
    text = f'{name} = "{value}"'
    assert any(text[f.start:f.end] == value for f in det.find(text)), name


@pytest.mark.parametrize("name", ["storage_key", "accountKey", "KEY"])
def test_other_key_names_stop_at_512(det, name: str) -> None:
    short, long_ = _long_value(500, name), _long_value(600, name)
    assert any(f'{name} = "{short}"'[f.start:f.end] == short for f in det.find(f'{name} = "{short}"'))
    assert not det.find(f'{name} = "{long_}"')
