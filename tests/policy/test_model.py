"""Decision order, worst(), verdicts (DESIGN §4)."""

from __future__ import annotations

import pytest

from tcg.policy.model import Decision, Reason, Verdict, worst


def test_order():
    order = [Decision.ALLOW, Decision.SANITIZE, Decision.ASK, Decision.RELOCATE, Decision.SNAPSHOT,
             Decision.BLOCK]
    assert sorted(reversed(order)) == order
    assert Decision.ALLOW < Decision.SANITIZE < Decision.ASK < Decision.BLOCK
    assert Decision.BLOCK > Decision.ASK and Decision.ASK >= Decision.ASK


def test_worst():
    assert worst([]) is Decision.ALLOW
    assert worst([Decision.SANITIZE, Decision.BLOCK, Decision.ASK]) is Decision.BLOCK
    assert worst(iter([Decision.SANITIZE, Decision.ALLOW])) is Decision.SANITIZE


def test_parse():
    assert Decision.parse("BLOCK") is Decision.BLOCK
    with pytest.raises(ValueError, match="unknown decision 'maybe'"):
        Decision.parse("maybe")


def test_verdict_combines_and_names_the_deciding_reason():
    reasons = [
        Reason("credential-dump", Decision.SANITIZE, "prints credentials", rule="env"),
        Reason("secret-store-read", Decision.BLOCK, "reads .env", rule="dotenv"),
        Reason("unresolved-path", Decision.BLOCK, "cat $F"),
    ]
    v = Verdict.combine(reasons)
    assert v.decision is Decision.BLOCK
    assert v.reason == "secret-store-read"
    assert v.deciding is reasons[1]
    assert v.rules == ("dotenv", "env")
    empty = Verdict.combine([])
    assert (empty.decision, empty.reason, empty.deciding) == (Decision.ALLOW, "allowed", None)


def test_comparing_with_other_types_is_an_error():
    with pytest.raises(TypeError):
        assert Decision.ALLOW < "block"
