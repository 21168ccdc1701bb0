"""The inbound gate for agent hooks (Claude Code PostToolUse / UserPromptSubmit).

One call per tool result or prompt: :func:`check_tool_output` returns a
:class:`HookVerdict` that says, in the hook's own terms, what to send back —
no JSON shapes here (those belong to the hook adapter, which knows each tool's
response shape). docs/inbound.md "Agent hooks" shows the wiring.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tcg.inbound.gate import Outcome, check, emit

#: Claude Code tools whose output is gated, by surface (an ``mcp__server__tool`` is
#: ``mcp-result``); Bash output is the shell runner's business, not the gate's
TOOL_SURFACES = {"WebFetch": "web", "WebSearch": "web", "Read": "file-read"}


def surface_for_tool(tool_name: str) -> str | None:
    """The inbound surface of a Claude Code tool, or None when its output is not gated."""
    if tool_name.startswith("mcp__"):
        return "mcp-result"
    return TOOL_SURFACES.get(tool_name)


@dataclass(frozen=True)
class HookVerdict:
    """What a hook does with one text.

    - ``block``: refuse (UserPromptSubmit: block the prompt with ``reason``;
      PostToolUse: replace the output with ``text``, which is the note);
    - ``additional_context``: the warning for the model, when the hook can add
      context (PostToolUse ``additionalContext``);
    - ``text``: the content to deliver; ``replaced`` is True when it differs from
      the input (cut past the budget, withheld), so the hook must send it as
      ``updatedToolOutput``;
    - ``banner_text``: ``text`` with the warning in front, for a hook that can
      only replace the output (no ``additionalContext``)."""

    outcome: Outcome
    block: bool
    reason: str | None
    additional_context: str | None
    text: str
    replaced: bool
    banner_text: str


def check_tool_output(text: str, surface: str, *, policy: Any = None, log: Any = None,
                      event_surface: str = "cli", actor: str = "agent",
                      session: str | None = None, engine: Any = None) -> HookVerdict:
    """Gate ``text`` (a tool result or a prompt) for ``surface``; record the event in
    ``log`` (an EventLog) when one is given. Never raises: a failure is a block."""
    outcome = check(text, surface, policy=policy, engine=engine)
    if log is not None:
        try:
            emit(log, outcome, surface=event_surface, actor=actor, policy=policy, session=session)
        except Exception:  # noqa: BLE001 - the verdict stands without its event
            pass
    block = outcome.action in ("block", "error")
    return HookVerdict(
        outcome=outcome, block=block, reason=outcome.text if block else None,
        additional_context=outcome.warning if outcome.action == "warn" else None,
        text=outcome.text, replaced=outcome.text != text, banner_text=outcome.with_banner(),
    )
