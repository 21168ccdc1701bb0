"""Invariants over generated text: both engines find the same rules with the same counts,
and the gate always returns text it may deliver (never raises, never the raw text on
an error)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcg.detect.hsdb import hyperscan_available
from tcg.inbound.gate import check
from tcg.inbound.inspect import inspect
from tests.inbound.conftest import EXAMPLES, RULES

NOISE = st.text(alphabet=st.sampled_from(
    list("abcxyz ABC\n\t.,:;'ʻ’ʼ-_/%+#<|>[]()!0123") + list("аеорсхиклмнт") +
    ["\u200b", "\u200d", "\u00ad", "\U000e0041", "\ufe0f", "\u0f40", "𝐢", "ｉ", "\u00a0"]),
    max_size=40)
TEXTS = st.lists(st.one_of(st.sampled_from(EXAMPLES), NOISE), min_size=1, max_size=6).map("".join)


@pytest.mark.skipif(not hyperscan_available(), reason="hyperscan wheel not installed")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXTS)
def test_engines_agree(engines, text):
    hs, plain = inspect(engines["hyperscan"], text), inspect(engines["re"], text)
    assert hs.rules == plain.rules


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXTS, surface=st.sampled_from(["web", "mcp-result", "file-read", "user-prompt"]))
def test_gate_total(engine, text, surface):
    out = check(text, surface, engine=engine)
    assert out.action in ("pass", "allow", "warn", "block") and isinstance(out.text, str)
    if out.action == "block":
        assert out.text.startswith("[tcg:")


MATCHES = [(r.id, ex) for r in RULES for ex in r.examples_match]
WIDE = st.sampled_from(["\u00e9", "\u0436", "\u4e2d", "\U0001f600", "\u00a0", "\uff49", " ", "\n"])


@pytest.mark.skipif(not hyperscan_available(), reason="hyperscan wheel not installed")
def test_a_wide_character_prefix_moves_nothing(engines):
    """The ASCII literal database scans one byte per character, the UTF-8 one the
    UTF-8: text in other scripts before a phrase (byte offsets far from character
    offsets) must not move a candidate out of its window."""
    prefix = "Ниже — текст 中文 😀 façade.\n" * 3
    for rid, example in MATCHES:
        hs = inspect(engines["hyperscan"], prefix + example)
        assert rid in hs.rules, (rid, example)
        plain = inspect(engines["re"], prefix + example)
        assert (hs.rules, hs.where) == (plain.rules, plain.where), (rid, example)


@pytest.mark.skipif(not hyperscan_available(), reason="hyperscan wheel not installed")
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(match=st.sampled_from(MATCHES), prefix=st.text(alphabet=WIDE, max_size=30),
       inserts=st.lists(st.tuples(st.floats(0, 1), WIDE), max_size=3))
def test_engines_agree_with_wide_characters_around_and_inside_phrases(engines, match, prefix, inserts):
    """Multi-byte characters before a phrase and between the words of a pair of
    literal sets: both engines find the same rules, counts and views."""
    text = match[1]
    for where, ch in inserts:
        i = int(where * len(text))
        text = text[:i] + ch + text[i:]
    text = prefix + text
    hs, plain = inspect(engines["hyperscan"], text), inspect(engines["re"], text)
    assert (hs.rules, hs.where) == (plain.rules, plain.where)
