"""docs/rules-catalogue.md names every rule id, and only existing ones."""

from __future__ import annotations

import re
from pathlib import Path

from tcg.detect.rule import load_rules

DOC = Path(__file__).resolve().parents[2] / "docs" / "rules-catalogue.md"
ROW = re.compile(r"^\| `([a-z0-9-]+)` \| (secret|pii|reference) \|", re.M)


def _doc_rows() -> dict[str, str]:
    return dict(ROW.findall(DOC.read_text(encoding="utf-8")))


def test_every_rule_is_in_the_catalogue() -> None:
    rows = _doc_rows()
    missing = sorted(r.id for r in load_rules() if r.id not in rows)
    assert not missing, (f"rule ids missing from {DOC.name}: {missing}; "
                         "run .venv/bin/python scripts/rules_catalogue.py")


def test_catalogue_has_no_stale_ids_and_categories_agree() -> None:
    rules = {r.id: r.category for r in load_rules()}
    rows = _doc_rows()
    stale = sorted(set(rows) - set(rules))
    assert not stale, f"{DOC.name} lists ids that are not rules: {stale}"
    wrong = sorted(i for i, cat in rows.items() if rules[i] != cat)
    assert not wrong, f"{DOC.name} has the wrong category for: {wrong}"


def test_row_pattern_reads_the_generated_format() -> None:
    # guards the two tests above against passing vacuously on a reformatted doc
    assert len(_doc_rows()) >= 150
