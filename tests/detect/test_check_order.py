"""The value checks run cheapest first (a file of rejected candidates, one a line, paid for
every check on each), and their order must not change a single decision: each check is a
pure function of the value, so the result is their conjunction, whatever the order. These
properties hold the reordered code to that conjunction, on values shaped like the ones that
reach the checks (hex keys with a stray letter, separators, runs, sequences, identifiers)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from tcg.detect import regex as rx
from tcg.detect import validators as v
from tcg.detect.engine import Detector
from tcg.detect.entropy import shannon_entropy
from tcg.detect.rule import load_rules

_PIECES = st.sampled_from([
    b"0123456789abcdef", b"abcd1234", b"a1b2c3", b"xxxx", b"AAAA", b"-", b"_", b".", b"=", b"g",
    b"Key", b"example", b"EXAMPLE", b"Sample", b"111-22-3333", b"NONE", b"${X}", b"sk-proj-", b"test_", b"9876", b"ZZZZZZ", b"/", b":",
])
_TOKEN_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-+/.=~:"
VALUES = st.one_of(
    st.text(alphabet=_TOKEN_ALPHABET, max_size=80).map(str.encode),
    st.text(alphabet="0123456789abcdefgX", min_size=14, max_size=64).map(str.encode),
    st.lists(st.one_of(_PIECES, st.text(alphabet=_TOKEN_ALPHABET, max_size=6).map(str.encode)),
             max_size=12).map(b"".join),
)
_SEPARATORS = re.compile(rb"[-_.:/+ ]")


def _not_placeholder_reference(value: bytes) -> bool:
    core = value.strip(b"=")
    if not core or v._periodic(core) or v._sequential(core) or v._sequential(_SEPARATORS.sub(b"", core)):
        return False
    run = re.search(rb"([A-Za-z0-9])\1{5,}", core)
    if run is not None and (run.end() - run.start()) * 3 >= len(core):
        return False
    return len(re.findall(rb"([A-Za-z0-9])\1{3}", core)) < 2


@settings(max_examples=1500, deadline=None)
@given(VALUES)
def test_token_like_is_the_conjunction_of_its_checks(value: bytes) -> None:
    assert v.not_placeholder(value) == _not_placeholder_reference(value)
    assert v.token_like(value) == (len(value.strip(b"=")) >= 8 and _not_placeholder_reference(value)
                                   and not v._edited_hex(value))


# every rule with an allow-list, its patterns searched one by one as the reference
_GENERIC = Detector.from_rules([r for r in load_rules() if r.allow_patterns], engine="re")


@settings(max_examples=600, deadline=None)
@given(VALUES)
def test_value_ok_is_the_conjunction_of_its_checks(value: bytes) -> None:
    for c in _GENERIC._compiled:
        one_by_one = [rx.compile_bytes(p) for p in c.rule.allow_patterns]
        expected = (bool(value) and value not in c.allow_values
                    and not any(p.search(value) for p in one_by_one)
                    and (c.entropy is None or shannon_entropy(value) >= c.entropy)
                    and (c.validator is None or c.validator(value)))
        assert _GENERIC._value_ok(c, value) == expected, c.rule.id
