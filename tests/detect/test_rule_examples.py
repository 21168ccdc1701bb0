"""The one table test: every rule's examples.match / examples.no_match, on both engines.

A match example must produce a candidate of THIS rule (before overlap
resolution, so a longer rule elsewhere cannot mask a broken one); a no_match
example must produce none. Both engines must return identical findings.
"""

from __future__ import annotations

import pytest

from tcg.detect.hsdb import hyperscan_available
from tcg.detect.rule import load_rules

RULES = load_rules()


def _ids(det, text):
    return {f.rule_id for f in det.find(text, overlapping=True)}


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_rule_examples(rule, detectors):
    for engine, det in detectors.items():
        for ex in rule.examples_match:
            assert rule.id in _ids(det, ex), f"[{engine}] match example #{rule.examples_match.index(ex)} not found"
        for ex in rule.examples_no_match:
            assert rule.id not in _ids(det, ex), f"[{engine}] no_match example #{rule.examples_no_match.index(ex)} matched"


@pytest.mark.skipif(not hyperscan_available(), reason="hyperscan wheel not installed")
def test_engines_identical_on_examples(detectors):
    hs, plain = detectors["hyperscan"], detectors["re"]
    for rule in RULES:
        for ex in rule.examples_match + rule.examples_no_match:
            for kw in ({}, {"overlapping": True}, {"decode": True}):
                assert hs.find(ex, **kw) == plain.find(ex, **kw), f"{rule.id}: engines differ ({kw})"
