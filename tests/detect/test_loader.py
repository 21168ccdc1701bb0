"""Rule loading: every schema violation is a load error that names the rule id."""

from __future__ import annotations

import pytest

from tcg.detect.rule import RuleError, load_rules, parse_rules_text

GOOD = '''
[[rule]]
id = "demo-token"
category = "secret"
description = "demo"
regex = \'\'\'\\b(?P<value>dmo_[A-Za-z0-9]{20,30})\\b\'\'\'
keywords = ["dmo_"]
[rule.examples]
match = ["t=dmo_Ab3dEf6hIj9kLm2nOp5qRs", "dmo_Zy9xWv8uTs7rQp6oNm5lKj4i"]
no_match = ["dmo_short", "xdmo_Ab3dEf6hIj9kLm2nOp5qRs"]
'''


def _with(**changes):
    """GOOD with single lines replaced: key -> new 'key = value' line (None removes the line)."""
    lines = []
    for line in GOOD.splitlines():
        key = line.split(" = ")[0] if " = " in line else None
        if key in changes:
            if changes[key] is not None:
                lines.append(changes[key])
            continue
        lines.append(line)
    return "\n".join(lines)


def test_good_rule_loads():
    (rule,) = parse_rules_text(GOOD, "demo.toml")
    assert rule.id == "demo-token"
    assert rule.max_len == 4 + 30 and rule.min_len == 24
    assert rule.has_value_group and rule.keywords == ("dmo_",)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"id": 'id = "Demo_Token"'}, "kebab-case"),
        ({"category": 'category = "entity"'}, "reserved"),
        ({"category": 'category = "secrets"'}, "category must be one of"),
        ({"regex": "regex = '''dmo_[A-Z]+'''"}, "unbounded"),
        ({"regex": "regex = '''dmo_[A-Z]{4,}'''"}, "unbounded"),
        ({"regex": "regex = '''dmo_.*'''"}, "unbounded"),
        ({"regex": "regex = '''(?<=x)dmo_[A-Z]{4}'''"}, "lookahead/lookbehind"),
        ({"regex": "regex = '''dmo_(?![A-Z])[a-z]{4}'''"}, "lookahead"),
        ({"regex": "regex = '''(a)dmo_\\1'''"}, "backreference"),
        ({"regex": "regex = '''dmo_(?>[A-Z]{4})'''"}, "atomic"),
        ({"regex": "regex = '''dmo_[A-Z]{4}+'''"}, "possessive"),
        ({"regex": "regex = '''dmo_(?i:[A-Z]{4})'''"}, "scoped inline flags"),
        ({"regex": "regex = '''dmo_[A-Z]{4}(?i)'''"}, "does not compile"),
        ({"regex": "regex = '''dmo_[А-Я]{4}'''"}, "non-ASCII"),
        ({"regex": "regex = '''dmo_[A-Z'''"}, "does not compile"),
        ({"regex": "regex = '''x{0,3}'''"}, "empty string"),
        ({"regex": "regex = '''[a-z]{5000}'''"}, "exceeds"),
        ({"validator": None, "keywords": 'keywords = ["dmo_"]\nvalidator = "nope"'}, "unknown validator"),
        ({"keywords": 'keywords = ["dmo_"]\ncolour = "red"'}, "unknown key"),
        ({"keywords": 'keywords = ["dmo_"]\nentropy = 9.5'}, "entropy"),
        ({"keywords": 'keywords = ["dmo_"]\nmax_len = 3'}, "below the regex"),
        ({"keywords": 'keywords = ""'}, "keywords must be a list"),
        ({"description": None}, "description is required"),
        ({"no_match": 'no_match = ["dmo_short"]'}, "at least 2"),
    ],
)
def test_invalid_rule_is_rejected_naming_the_rule(change, message):
    text = _with(**change)
    with pytest.raises(RuleError) as err:
        parse_rules_text(text, "demo.toml")
    msg = str(err.value)
    assert message in msg
    assert "demo.toml" in msg
    if "id" not in change:
        assert "'demo-token'" in msg
    assert err.value.hint


def test_duplicate_ids_across_files_are_rejected(tmp_path):
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    a.write_text(GOOD)
    b.write_text(GOOD)
    with pytest.raises(RuleError, match="duplicate id .*a.toml"):
        load_rules([a, b])


def test_invalid_toml_and_stray_tables_are_rejected():
    with pytest.raises(RuleError, match="invalid TOML"):
        parse_rules_text("[[rule]\nid=", "x.toml")
    with pytest.raises(RuleError, match="only \\[\\[rule\\]\\]"):
        parse_rules_text("[settings]\na = 1\n", "x.toml")


def test_packaged_rules_load_and_are_bounded(all_rules):
    assert len(all_rules) >= 3
    assert len({r.id for r in all_rules}) == len(all_rules)
    for r in all_rules:
        assert 0 < r.max_len <= 4096, r.id


def test_rule_repr_holds_no_example_values(all_rules):
    for r in all_rules:
        text = repr(r)
        for ex in r.examples_match:
            assert ex not in text
