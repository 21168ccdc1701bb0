"""The docs keep up with the code: every reason code, command, event type and policy key is
documented (sqlite-utils' tests/test_docs.py does the same for its CLI)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tcg.cli import COMMANDS
from tcg.events import EVENT_TYPES
from tcg.policy.load import SCHEMA
from tcg.policy.reasons import REASONS

DOCS = Path(__file__).resolve().parent.parent / "docs"


def headings(name: str, level: str) -> list[str]:
    text = (DOCS / name).read_text(encoding="utf-8")
    return re.findall(rf"^{level} (\S+)\s*$", text, re.M)


def test_required_docs_exist():
    for name in ("install.md", "policy.md", "reason-codes.md", "cli.md", "events.md"):
        assert (DOCS / name).is_file(), name


@pytest.mark.parametrize("code", sorted(REASONS))
def test_reason_code_is_documented(code):
    assert code in headings("reason-codes.md", "##"), f"add a '## {code}' section to docs/reason-codes.md"


def test_every_documented_reason_code_exists():
    stray = [h for h in headings("reason-codes.md", "##") if h not in REASONS]
    assert not stray, f"docs/reason-codes.md documents codes the code does not have: {stray}"


def test_reason_sections_have_meaning_and_fix():
    text = (DOCS / "reason-codes.md").read_text(encoding="utf-8")
    sections = re.split(r"^## ", text, flags=re.M)[1:]
    for section in sections:
        code = section.split("\n", 1)[0].strip()
        assert "**Meaning.**" in section and "**Fix.**" in section, code


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_command_is_documented(command):
    text = (DOCS / "cli.md").read_text(encoding="utf-8")
    assert re.search(rf"^## tcg {re.escape(command)}\b", text, re.M), (
        f"add a '## tcg {command}' section to docs/cli.md"
    )


@pytest.mark.parametrize("event", sorted(EVENT_TYPES))
def test_event_type_is_documented(event):
    assert event in headings("events.md", "###"), f"add a '### {event}' section to docs/events.md"


@pytest.mark.parametrize("key", sorted(SCHEMA))
def test_policy_key_is_documented(key):
    """Each key appears in docs/policy.md under its table: `[table]` heading, then `key`."""
    text = (DOCS / "policy.md").read_text(encoding="utf-8")
    table, _, leaf = key.rpartition(".")
    if table.startswith("decisions"):
        assert "[decisions.agent]" in text and "[decisions.human]" in text
        return
    start = text.find(f"### `[{table}]`") if table else -1
    if start == -1:
        start = text.find(f"### `[[{leaf}]]`")
        assert start != -1, f"add a section for [{table or leaf}] to docs/policy.md"
        return
    end = text.find("\n### ", start + 1)
    section = text[start : end if end != -1 else None]
    assert f"`{leaf}`" in section, f"document `{leaf}` under [{table}] in docs/policy.md"


def test_every_default_decision_is_in_the_policy_reference():
    from tcg.policy.load import load_policy

    text = (DOCS / "policy.md").read_text(encoding="utf-8")
    decisions = load_policy(include_repo=False).model.identity.decisions
    for actor, codes in decisions:
        for code, value in codes:
            row = re.search(rf"^\| `{re.escape(code)}` \| `(\w+)` \| `(\w+)` \|$", text, re.M)
            assert row, f"add `{code}` to the decisions table in docs/policy.md"
            assert row.group(1 if actor == "agent" else 2) == value, (actor, code)


def test_the_docs_hold_no_secret_tcg_would_flag(hermetic_home):
    """The docs describe formats and samples in words: `tcg scan` of a repository that
    vendors them stays clean (the launch gate of bench/hot_paths.py scans exactly that),
    and no doc page carries a credential-shaped value someone could mistake for a real one."""
    from tcg.detect.engine import load_detector

    detector = load_detector(None, categories=["secret"])
    found = []
    for page in sorted(DOCS.rglob("*.md")):
        data = page.read_bytes()
        for f in detector.find_bytes(data):
            line = data.count(b"\n", 0, f.start) + 1
            found.append(f"{page.relative_to(DOCS)}:{line}: {f.rule_id}")
    assert not found, "docs hold values tcg flags as secrets:\n" + "\n".join(found)
