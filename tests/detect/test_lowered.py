"""Confirmation of case-insensitive rules runs a lowered, case-sensitive pattern on a
lowered copy of the window (tcg.detect.regex.lowered_pattern). It must find exactly
what the rule's own (?i) regex finds: same starts, ends and value groups."""

from __future__ import annotations

import random
import re

import pytest

from tcg.detect import regex as rx
from tcg.detect.rule import load_rules

RULES = [r for r in load_rules() if re.compile(r.regex.encode()).flags & re.IGNORECASE]


def _texts(rule, seed):
    r = random.Random(seed)
    base = [ex.encode("utf-8") for ex in (*rule.examples_match, *rule.examples_no_match)]
    out = []
    for b in base:
        out.append(b)
        out.append(b.swapcase())
        out.append(bytes(c ^ 0x20 if c < 128 and chr(c).isalpha() and r.random() < 0.5 else c for c in b))
        out.append(b"x" + b + b"\n" + b.upper() + b" \xff\xc3\x28 " + b.lower())
        out.append(b"\n" + b + b"\n")
    return out


def test_case_insensitive_rules_exist():
    assert len(RULES) > 20


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_lowered_pattern_finds_the_same(rule):
    pat = rx.compile_bytes(rule.regex)
    low = rx.lowered_pattern(rule.regex)
    assert low is not None, "every packaged (?i) rule has a lowered form"
    groups = "value" in pat.groupindex
    for text in _texts(rule, hash(rule.id) & 0xFFFF):
        hay = text.lower()
        n = len(text)
        for pos in range(0, n, max(1, n // 7)):
            for end in (n, max(pos, n - 3)):
                # the engine lowers only [pos - 1, end): the same as lowering everything
                base = max(pos - 1, 0)
                a = pat.search(text, pos, end)
                b = low.search(hay[base:end], pos - base, end - base)
                assert (a is None) == (b is None), (rule.id, text, pos, end)
                if a is None:
                    continue
                assert a.span() == (b.start() + base, b.end() + base), (rule.id, text, pos)
                if groups:
                    ga, gb = a.span("value"), b.span("value")
                    assert ga == ((gb[0] + base, gb[1] + base) if gb[0] >= 0 else gb), (rule.id, text)


def test_case_sensitive_rules_have_no_lowered_form():
    assert rx.lowered_pattern(r"AKIA[0-9A-Z]{16}") is None
