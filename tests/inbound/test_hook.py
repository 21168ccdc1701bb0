"""tcg.inbound.hook: the verdict a hook adapter turns into its JSON."""

from __future__ import annotations

from tcg.events import EventLog
from tcg.inbound.hook import check_tool_output, surface_for_tool
from tests.inbound.vectors import MUST_FLAG


def test_surfaces_of_claude_tools():
    assert surface_for_tool("WebFetch") == surface_for_tool("WebSearch") == "web"
    assert surface_for_tool("Read") == "file-read"
    assert surface_for_tool("mcp__github__get_issue") == "mcp-result"
    assert surface_for_tool("Bash") is None


def test_warn_gives_context_and_keeps_the_text(engine, tcg_home):
    text = MUST_FLAG[0][1]
    v = check_tool_output(text, "web", log=EventLog(), engine=engine)
    assert not v.block and not v.replaced and v.text == text
    assert v.additional_context and v.banner_text == f"{v.additional_context}\n\n{text}"
    assert (tcg_home / "state" / "events.jsonl").exists()


def test_cut_is_a_replacement(engine):
    text = "\u0f40" * 5000
    v = check_tool_output(text, "file-read", engine=engine)
    assert v.replaced and not v.block and v.text.count("\u0f40") == 2000


def test_prompt_flood_blocks_with_a_reason(engine):
    v = check_tool_output("\u200b" * 10_000, "user-prompt", engine=engine)
    assert v.block and v.reason and "withheld" in v.reason and v.additional_context is None


def test_a_broken_log_does_not_change_the_verdict(engine):
    class Broken:
        def emit(self, *a, **k):
            raise OSError("disk full")

    v = check_tool_output(MUST_FLAG[0][1], "web", log=Broken(), engine=engine)
    assert v.additional_context
