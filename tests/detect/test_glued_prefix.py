"""A vendor token glued to a word character is still found.

URL-encoding (``%3Dghp_…``), JSON's ``\\u003d`` escape and file names
(``backup_ghp_….tar``, ``xAKIA….csv``) put a letter, digit or ``_`` right before
a token, and a leading ``\\b`` made every such token invisible. Rules whose
matches start with a distinctive literal prefix therefore have no leading
``\\b`` (docs/rules.md, "Word boundaries"); these tests hold the rule data and
the terminal-mode anchors derived from it to that.
"""

from __future__ import annotations

import pytest

from tcg._lean.reparse import parser as _p
from tcg.detect.rule import load_rules
from tcg.mask.anchors import _prefixes, build_anchors

GHP = "ghp_" + "R7kQm2Xz9LpW4vNc8TyB3hJd6Fs1Ga5Ue0Yi"  # fake, valid shape
AKIA = "AKIA" + "QX7RZ2M4KD9PLW3T"  # fake, valid shape

# each spelling as it reaches the detector, and the rule that must report the token in it
SPELLINGS = [
    (f"ok%3D{GHP}%0A", "github-pat-classic", GHP),  # urllib.parse.quote("ok=…\n")
    (f'"ok\\u003d{GHP}"', "github-pat-classic", GHP),  # json.dumps with '=' escaped
    (f"backup_{GHP}.tar", "github-pat-classic", GHP),  # ls
    (f"x{AKIA}.csv", "aws-access-key-id", AKIA),  # ls
    (f"GET /cb?next=%2F%3Ftoken%3D{GHP} 200", "github-pat-classic", GHP),  # a logged URL
]
GLUE = ["x", "_", "0", "%3D", "\\u003d", "backup_"]
RULES = load_rules()


def _literal_starts(regex: str) -> set[bytes]:
    return {p for p, _ in _prefixes(_p.parse(regex.encode("utf-8")))}


@pytest.mark.parametrize("text,rule_id,value", SPELLINGS, ids=[s[0][:12] for s in SPELLINGS])
def test_token_after_a_word_character_is_found(detectors, text, rule_id, value):
    for engine, det in detectors.items():
        hits = [(f.rule_id, text.encode()[f.start:f.end]) for f in det.find(text)]
        assert (rule_id, value.encode()) in hits, engine


def _unbounded_rules() -> list:
    """Prefix-anchored rules without a leading \\b (the ones this policy changed)."""
    out = []
    for r in RULES:
        if r.category == "reference" or not r.regex.startswith("(?P<value>"):
            continue
        if any(len(p) >= 4 for p in _literal_starts(r.regex)):
            out.append(r)
    return out


def test_policy_covers_the_vendor_prefixes():
    ids = {r.id for r in _unbounded_rules()}
    assert {"github-pat-classic", "github-fine-grained-pat", "aws-access-key-id", "gitlab-pat",
            "slack-bot-token", "stripe-live-secret-key"} <= ids
    assert len(ids) >= 90


@pytest.mark.parametrize("rule", _unbounded_rules(), ids=lambda r: r.id)
def test_every_match_example_is_found_glued_to_a_word(rule, detectors):
    """Property over the rule data: each example's token, glued after any of GLUE, is reported
    by its rule with the same value (the body's length and charset still decide)."""
    det = detectors["re"]
    long_starts = tuple(p for p in _literal_starts(rule.regex) if len(p) >= 4)
    for ex in rule.examples_match:
        values = [ex.encode()[f.start:f.end] for f in det.find(ex, overlapping=True) if f.rule_id == rule.id]
        assert values
        if not values[0].startswith(long_starts):
            continue  # e.g. a folded (Cyrillic) spelling or a 3-byte branch that keeps its \b
        for glue in GLUE:
            text = (glue + values[0].decode() + " ok")
            for engine, d in detectors.items():
                got = [text.encode()[f.start:f.end] for f in d.find(text, overlapping=True) if f.rule_id == rule.id]
                assert values[0] in got, (engine, glue, rule.examples_match.index(ex))


def test_anchors_agree_with_the_rule_boundary():
    """Terminal mode holds ``backup_ghp_`` (no boundary in the rule) but not ``disk-`` for
    ``sk-`` (a 3-byte prefix keeps its boundary; glued, a partial anchor holds from 4 bytes)."""
    a = build_anchors(RULES)
    assert a.exact[b"ghp_"] is False and a.exact[b"AKIA"] is False
    assert a.exact[b"sk-"] is True
    assert a.hold_from(b"$ ls\r\nbackup_ghp_", 0) == len(b"$ ls\r\nbackup_")
    assert a.hold_from(b"$ ls\r\nxAKIA", 0) == len(b"$ ls\r\nx")
    assert a.hold_from(b"$ df /dev/disk-", 0) is None
    assert a.hold_from(b"$ echo x%3Dsk-p", 0) == len(b"$ echo x%3D")  # sk-proj- glued
    assert a.hold_from(b"$ echo x%3Dgh", 0) is None and a.hold_from(b"$ echo x%3Dghp", 0) is None


def test_short_prefixes_keep_their_boundary(detectors):
    legacy = "sk-" + "Ab3dEf6hIj9kLm2nOp5r" + "T3BlbkFJ" + "Zy8xWv5uTs2rQp9oNm6l"  # fake shape
    for det in detectors.values():
        assert "openai-legacy-key" in {f.rule_id for f in det.find("key " + legacy)}
        assert "openai-legacy-key" not in {f.rule_id for f in det.find("disk" + legacy)}

