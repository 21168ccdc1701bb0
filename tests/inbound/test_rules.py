"""Inbound rules as data: the loader refuses bad rules, every rule's examples hold on
both engines, and hyperscan prefilters every packaged rule."""

from __future__ import annotations

import pytest

from tcg.detect.hsdb import hyperscan_available
from tcg.inbound.inspect import inspect
from tcg.inbound.prefilter import MAX_RARITY, rarity
from tcg.inbound.rules import FAMILIES, InboundRuleError, parse_rules_text
from tests.inbound.conftest import RULES


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_rule_examples(rule, engines):
    for name, eng in engines.items():
        for ex in rule.examples_match:
            assert rule.id in inspect(eng, ex).rules, f"[{name}] match example not found: {ex!r}"
        for ex in rule.examples_no_match:
            assert rule.id not in inspect(eng, ex).rules, f"[{name}] no_match example matched: {ex!r}"


def test_families_and_languages_covered():
    """Each phrase family exists in English, Russian and Uzbek (role markers and
    markdown exfiltration are language-free)."""
    have = {(r.family, r.language) for r in RULES}
    for family in FAMILIES:
        if family in ("role-marker", "markdown-exfiltration"):
            assert any(f == family for f, _ in have), family
            continue
        for lang in ("en", "ru", "uz"):
            assert (family, lang) in have, f"no {lang} rule for {family}"


@pytest.mark.skipif(not hyperscan_available(), reason="hyperscan wheel not installed")
def test_every_rule_is_prefiltered(engines):
    """No packaged rule falls back to a whole-view re pass (that would cost seconds on
    a 5 MB result): each has literal sets, and the database covers its examples."""
    assert set(engines["hyperscan"].hyperscan_rules) == {r.id for r in RULES}
    for rule in RULES:
        for alt in rule.prefilter:
            assert rarity(alt[0]) <= MAX_RARITY or (len(alt) == 2 and rarity(alt[1]) <= MAX_RARITY)


def _rule(**over):
    raw = {"id": "x-rule", "family": "instruction-override", "language": "en",
           "description": "d", "regex": r"\bignore\s{1,3}this\b",
           "examples": {"match": ["ignore this"], "no_match": ["keep this"]}}
    raw.update(over)
    lines = ["[[rule]]"]
    for k, v in raw.items():
        if k == "examples":
            lines.append(f"examples.match = {v['match']!r}".replace("'", '"'))
            lines.append(f"examples.no_match = {v['no_match']!r}".replace("'", '"'))
        elif isinstance(v, list):
            lines.append(f"{k} = [" + ", ".join(f"'''{x}'''" for x in v) + "]")
        else:
            lines.append(f"{k} = '''{v}'''")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(("over", "message"), [
    ({"id": "Bad_Id"}, "kebab-case"),
    ({"family": "nope"}, "family must be"),
    ({"language": "pt"}, "language must be"),
    ({"regex": r"ignore.*"}, "bounded"),
    ({"regex": r"(?:x)?"}, "empty string"),
    ({"regex": r"(unclosed"}, "does not compile"),
    ({"regex": r"(?<=\w{20})x"}, "lookaround"),
    ({"allow": ["(bad"]}, "allow pattern"),
    ({"examples": {"match": [], "no_match": ["a"]}}, "examples.match"),
])
def test_loader_refuses(over, message):
    with pytest.raises(InboundRuleError) as exc:
        parse_rules_text(_rule(**over), "t.toml")
    assert message in exc.value.message and "x-rule" in exc.value.message or "Bad_Id" in exc.value.message


def test_loader_accepts_and_expands_macros():
    (rule,) = parse_rules_text(_rule(regex=r"ko{ap}rsatma{w2}bajar"), "t.toml")
    assert "{ap}" not in rule.regex and "ʻ" in rule.regex
    assert rule.prefilter, "a rule with literals gets a prefilter"
