"""The steps every agent hook event goes through, whatever the agent CLI.

An adapter (tcg.agents.claude, tcg.agents.qwen) parses its CLI's hook input
into a HookContext and a ToolCall, runs one of the functions below, and
renders the result in its CLI's reply format. Nothing here knows a CLI's JSON.

PreToolUse (``pre_tool_use``):
1. INPUT_TRANSFORMS, in order: each may return a complete replacement of the
   tool input (never a partial one: agents replace the whole input);
2. DECISION_STEPS on the (transformed) input, plus the OUTBOUND_CHANNELS step
   for the tool's channel (tcg.agents.tools.CHANNELS): reasons combined, the
   worst decision wins (tcg.policy.model.Verdict).
PostToolUse (``post_tool_use``): OUTPUT_TRANSFORMS in order, each on the
previous one's result, in the tool's own response shape.

Extension points (append an instance of a tcg.agents.base class; see
tcg/agents/__init__.py for what is planned): ``INPUT_TRANSFORMS``
(InputTransform), ``DECISION_STEPS`` (DecisionStep), ``OUTBOUND_CHANNELS``
(channel name → DecisionStep), ``OUTPUT_TRANSFORMS`` (OutputTransform).

This module and the modules the PreToolUse path imports keep to builtins and
tcg's own modules: the hook runs once per tool call and its budget is about
half an interpreter start (docs/agents.md), so no typing, json or re here.
"""

from __future__ import annotations

from tcg.agents.base import (
    DecisionStep,
    HookContext,
    InputTransform,
    OutputChange,
    OutputTransform,
    ToolCall,
)
from tcg.policy.model import Decision, Reason, Verdict

__all__ = ["DECISION_STEPS", "INPUT_TRANSFORMS", "OUTBOUND_CHANNELS", "OUTPUT_TRANSFORMS", "WITHHELD",
           "DecisionStep", "HookContext", "InputTransform", "OutputChange", "OutputTransform", "PostResult",
           "PreResult", "ToolCall", "post_tool_use", "pre_tool_use", "refusal", "refuses", "withheld"]


INPUT_TRANSFORMS: list[InputTransform] = []
DECISION_STEPS: list[DecisionStep] = []
OUTBOUND_CHANNELS: dict[str, DecisionStep] = {}
OUTPUT_TRANSFORMS: list[OutputTransform] = []


def _register_builtin_steps() -> None:
    """tcg's own steps (the modules are light to import: heavy work is lazy inside them)."""
    from tcg.agents import checks, outputs

    DECISION_STEPS.extend([checks.FileAccess(), checks.ShellLine(), checks.ProtectedResources()])
    OUTBOUND_CHANNELS.update({"web": checks.OutboundSecrets(), "mcp": checks.OutboundSecrets(),
                              "subagent": checks.OutboundSecrets()})
    OUTPUT_TRANSFORMS.append(outputs.MaskSecrets())


_register_builtin_steps()


# ------------------------------------------------------------------ running them


class PreResult:
    """The verdict, and the complete new input when a transform changed it (else None)."""

    __slots__ = ("updated_input", "verdict")

    def __init__(self, verdict: Verdict, updated_input: dict[str, object] | None):
        self.verdict = verdict
        self.updated_input = updated_input


def pre_tool_use(ctx: HookContext, call: ToolCall) -> PreResult:
    """Transform, then decide. Raises on internal failure: the adapter denies."""
    from tcg.agents.tools import channel_of

    updated = None
    for transform in INPUT_TRANSFORMS:
        new = transform.transform(ctx, call)
        if new is not None:
            if not isinstance(new, dict):
                raise TypeError(f"{transform.name} returned {type(new).__name__}, not a complete input")
            call = ToolCall(call.agent, call.tool, new, call.cwd)
            updated = new
    reasons: list[Reason] = []
    steps = list(DECISION_STEPS)
    channel = OUTBOUND_CHANNELS.get(channel_of(call.tool) or "")
    if channel is not None:
        steps.append(channel)
    for step in steps:
        reasons.extend(step.decide(ctx, call))
    return PreResult(Verdict.combine(reasons), updated)


class PostResult:
    """The response after every transform, and what they did."""

    __slots__ = ("changed", "context", "count", "rules", "value")

    def __init__(self, value: object, changed: bool, rules: set[str], count: int, context: list[str]):
        self.value = value
        self.changed = changed
        self.rules = rules
        self.count = count
        self.context = context


def post_tool_use(ctx: HookContext, call: ToolCall, response: object) -> PostResult:
    """Every output transform in order. Raises on internal failure: the adapter withholds."""
    value = response
    rules: set[str] = set()
    count = 0
    context: list[str] = []
    for transform in OUTPUT_TRANSFORMS:
        change = transform.transform(ctx, call, value)
        value = change.value
        rules |= change.rules
        count += change.count
        context.extend(change.context)
    return PostResult(value, value is not response, rules, count, context)


WITHHELD = "[withheld by tcg: this output could not be checked for secrets]"


def withheld(response: object) -> object:
    """``response`` with every string value replaced by WITHHELD: the same shape (an
    agent ignores a replacement that does not fit its tool's response), no content."""
    if isinstance(response, str):
        return WITHHELD
    if isinstance(response, list):
        return [withheld(v) for v in response]
    if isinstance(response, dict):
        return {k: withheld(v) for k, v in response.items()}
    return response


def deciding_detail(verdict: Verdict) -> tuple[str, str]:
    """(code, one-line detail) of the deciding reason."""
    deciding = verdict.deciding
    detail = deciding.detail if deciding is not None else ""
    return verdict.reason, " ".join(detail.split())


def refusal(verdict: Verdict) -> str:
    """The text an agent shows its model for a refused call: what and why, then the fix."""
    from tcg.policy.reasons import REASONS

    code, detail = deciding_detail(verdict)
    info = REASONS.get(code)
    fix = info.fix if info is not None else "ask the user"
    return f"tcg: blocked ({code}): {detail}\nhint: {fix}"


def refuses(verdict: Verdict) -> bool:
    """ASK is refused too: an agent's tool call has no human at hand to answer it."""
    return verdict.decision in (Decision.BLOCK, Decision.ASK)
