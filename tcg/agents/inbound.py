"""The inbound gate in an agent's own tools: what the model reads from the web, MCP
tools, files and the user's prompt (docs/inbound.md).

- InboundGate (PostToolUse output transform, after masking and aliasing: it
  judges what the model will read): WebFetch and WebSearch results (surface
  ``web``), Read (``file-read``) and MCP tools (``mcp-result``), as
  tcg.inbound.hook.surface_for_tool says; and what a shell tool (Bash,
  run_shell_command) printed, as ``file-read``: a command's output is mostly
  files and pages it prints (``cat``, ``curl``), the same text a Read returns. A warning goes beside the output as
  context for the model (Claude Code ``additionalContext``); text past the
  expensive-script budget is cut, and a ``block`` (or a failed check) replaces
  the text with the gate's note — never the unchecked text.
- check_prompt (UserPromptSubmit): surface ``user-prompt``; by default only an
  invisible-character flood or a drain blocks, an injection is recorded.

Every other tool's output is left alone without importing the gate: the
engine is loaded only for a text that can need it. Each check goes through
tcg.inbound.hook.check_tool_output, which records ``inbound_flagged`` events
(rule ids and counts, never the text).
"""

from __future__ import annotations

from tcg.agents.base import HookContext, OutputChange, OutputTransform, ToolCall
from tcg.agents.tools import SHELL_FIELDS

SHELL_OUTPUT_SURFACE = "file-read"  # what a shell tool printed is read like a file

# keys whose strings are the call's own data or a file's metadata, not content the model reads
METADATA = frozenset({"type", "filePath", "file_path", "url", "query", "codeText", "mediaType", "mimeType",
                      "base64", "originalFile"})

Path = tuple[object, ...]


def _leaves(node: object, path: Path = ()) -> list[tuple[Path, str]]:
    """(path, text) of every non-empty string the model reads in a response."""
    out: list[tuple[Path, str]] = []
    if isinstance(node, str):
        if node and not (path and path[-1] in METADATA):
            out.append((path, node))
    elif isinstance(node, dict):
        for k, v in node.items():
            out.extend(_leaves(v, (*path, k)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.extend(_leaves(v, (*path, i)))
    return out


def _replace(node: object, texts: dict[Path, str], path: Path = ()) -> object:
    """A copy of ``node`` with the strings at ``texts``' paths replaced."""
    if path in texts:
        return texts[path]
    if isinstance(node, dict):
        return {k: _replace(v, texts, (*path, k)) for k, v in node.items()}
    if isinstance(node, list):
        return [_replace(v, texts, (*path, i)) for i, v in enumerate(node)]
    return node


def _check(ctx: HookContext, text: str, surface: str, *, actor: str = "agent", record: bool = True):  # noqa: ANN202
    from tcg.events import EventLog
    from tcg.inbound.hook import check_tool_output

    return check_tool_output(text, surface, policy=ctx.policy, log=EventLog() if record else None,
                             event_surface=ctx.surface, actor=actor, session=ctx.session())


class InboundGate(OutputTransform):
    name = "inbound-gate"

    def transform(self, ctx: HookContext, call: ToolCall, response: object) -> OutputChange:
        from tcg.inbound.hook import surface_for_tool

        surface = surface_for_tool(call.tool) or (SHELL_OUTPUT_SURFACE if call.tool in SHELL_FIELDS else None)
        leaves = _leaves(response) if surface is not None else []
        if not leaves:
            return OutputChange(response)
        verdict = _check(ctx, "\n\n".join(text for _, text in leaves), surface)  # type: ignore[arg-type]
        outcome = verdict.outcome
        if not outcome.flagged:
            return OutputChange(response)
        rules = set(outcome.rules)
        if verdict.block:  # withheld (policy block, or the check failed): the note in place of the content
            texts = {path: "" for path, _ in leaves}
            texts[leaves[0][0]] = verdict.text
            return OutputChange(_replace(response, texts), rules, len(leaves), reason=outcome.reason())
        context = [verdict.additional_context] if verdict.additional_context else []
        if not verdict.replaced:
            return OutputChange(response, rules, 0, context, reason=outcome.reason())
        # cut past the expensive-script budget: each text as the gate cuts it (recorded once, above)
        texts = {}
        for path, text in leaves:
            one = _check(ctx, text, surface, record=False)  # type: ignore[arg-type]
            if one.block:
                return OutputChange(_replace(response, {p: (one.text if p == path else "") for p, _ in leaves}),
                                    rules, len(leaves), reason="inbound-error")
            if one.replaced:
                texts[path] = one.text
        return OutputChange(_replace(response, texts), rules, len(texts), context, reason=outcome.reason())


def check_prompt(ctx: HookContext, prompt: str):  # noqa: ANN201 - tcg.inbound.hook.HookVerdict or None
    """The user-prompt surface's verdict on a prompt (None for an empty one)."""
    if not prompt:
        return None
    return _check(ctx, prompt, "user-prompt", actor="human")
