"""Decision order, worst(), verdicts (docs/policy.md)."""

from __future__ import annotations

import pytest

from tcg.policy.model import Decision, Reason, Verdict, worst


def test_order():
    order = [Decision.ALLOW, Decision.SANITIZE, Decision.RELOCATE, Decision.SNAPSHOT, Decision.ASK,
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


def test_decision_behaves_like_an_enum_without_importing_enum():
    import copy
    import pickle
    import subprocess
    import sys

    assert [d.value for d in Decision] == ["allow", "sanitize", "relocate", "snapshot", "ask", "block"]
    assert len(Decision) == 6 and Decision("ask") is Decision.ASK and Decision(Decision.ASK) is Decision.ASK
    assert Decision.BLOCK.name == "BLOCK" and Decision.BLOCK.value == "block"
    assert repr(Decision.ASK) == "<Decision.ASK: 'ask'>" and str(Decision.ASK) == "Decision.ASK"
    assert pickle.loads(pickle.dumps(Decision.SANITIZE)) is Decision.SANITIZE
    assert copy.deepcopy({"d": Decision.BLOCK})["d"] is Decision.BLOCK
    assert {Decision.ASK: 1}[Decision("ask")] == 1
    with pytest.raises(ValueError, match="not a valid Decision"):
        Decision("maybe")
    with pytest.raises(ValueError):
        Decision(None)
    with pytest.raises(AttributeError):
        Decision.ASK.value = "block"
    with pytest.raises(TypeError):
        _ = Decision.ASK < 3
    probe = "import sys, tcg.policy.model; print('enum' in sys.modules)"
    out = subprocess.run([sys.executable, "-I", "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr
