"""Every test vector through the engine and through the gate's policy."""

from __future__ import annotations

import pytest

from tcg.inbound.gate import check
from tcg.inbound.inspect import DRAIN_BUDGET, inspect
from tests.inbound.vectors import DOCUMENTED_MISSES, MUST_FLAG, MUST_PASS


@pytest.mark.parametrize(("name", "text", "rule"), MUST_FLAG, ids=[v[0] for v in MUST_FLAG])
def test_must_flag(name, text, rule, engines):
    for eng_name, eng in engines.items():
        assert rule in inspect(eng, text).rules, f"[{eng_name}] {name}"


@pytest.mark.parametrize(("name", "text"), MUST_PASS + DOCUMENTED_MISSES,
                         ids=[v[0] for v in MUST_PASS + DOCUMENTED_MISSES])
def test_must_pass_and_pinned_misses(name, text, engines):
    for eng_name, eng in engines.items():
        assert not inspect(eng, text).flagged, f"[{eng_name}] {name}: {inspect(eng, text).rules}"


def test_where_each_hidden_payload_is_seen(engine):
    """The views do the work: each disguised vector is caught in the view built for it."""
    by_name = {n: t for n, t, _ in MUST_FLAG}
    expect = {"math-bold": "nfkc", "cyrillic-lookalikes": "skeleton", "tag-smuggled": "tags",
              "selector-smuggled": "variation-selectors", "url-percent": "percent",
              "url-plus": "percent"}
    for name, view in expect.items():
        assert view in inspect(engine, by_name[name]).where["en-override-prior"], name


@pytest.mark.parametrize(("name", "text", "rule"), MUST_FLAG, ids=[v[0] for v in MUST_FLAG])
def test_web_warns_and_delivers(name, text, rule, engine):
    out = check(text, "web", engine=engine)
    assert out.action == "warn" and out.warning and rule in out.rules
    if name == "tibetan-13000":
        assert out.cut == 11_000 and out.text.count("\u0f40") == DRAIN_BUDGET
        assert "removed" in out.text
    else:
        assert out.text == text and out.cut == 0


def test_user_prompt_blocks_only_flood_and_drain(engine):
    by_name = {n: t for n, t, _ in MUST_FLAG}
    for name in ("zero-width-flood", "tibetan-13000", "tibetan-960", "tag-smuggled"):
        out = check(by_name[name], "user-prompt", engine=engine)
        assert out.action == "block" and by_name[name] not in out.text, name
    for name in ("override", "russian", "chatml"):
        out = check(by_name[name], "user-prompt", engine=engine)
        assert out.action == "allow" and out.text == by_name[name] and out.warning is None, name


@pytest.mark.parametrize(("name", "text"), MUST_PASS, ids=[v[0] for v in MUST_PASS])
def test_clean_text_passes_every_surface(name, text, engine):
    for surface in ("web", "mcp-result", "file-read", "user-prompt", "clipboard"):
        out = check(text, surface, engine=engine)
        assert out.action == "pass" and out.text == text and out.warning is None
