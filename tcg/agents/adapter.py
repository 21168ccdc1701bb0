"""The hook entry shared by every agent CLI: parse, decide, reply — fail closed.

An agent CLI runs the hook for each event with a JSON object on stdin and
reads a JSON reply on stdout. HookAdapter parses the input into a
tcg.agents.pipeline ToolCall, runs the pipeline, records one ``hook_decision``
event, and renders the reply; a subclass per CLI (tcg.agents.claude,
tcg.agents.qwen) says what its CLI's replies look like. Any exception while
deciding becomes a refusal (PreToolUse: deny; PostToolUse: the response's
shape with no content; UserPromptSubmit: block), never a silent allow.
"""

from __future__ import annotations

import os
import sys

from tcg.agents.pipeline import (
    WITHHELD,
    HookContext,
    PostResult,
    ToolCall,
    post_tool_use,
    pre_tool_use,
    refusal,
    refuses,
    withheld,
)

Reply = tuple[dict[str, object] | None, int]


def session_context(policy: object) -> str:
    """One paragraph for the model: what tcg protects and how to work with it (no values)."""
    get = policy.get  # type: ignore[attr-defined]
    stores = [s for s in (get("secret_stores.basenames", []) or []) if "*" not in s][:6]
    dirs = list(get("secret_stores.segments", []) or [])[:4]
    names = ", ".join([*stores, *(f"~/{d}" for d in dirs)])
    return (
        "This session is protected by tcg. Reading secret stores (" + names + ", and the like) is "
        "refused, in shell commands and in your own file tools alike; secrets in any tool output "
        "reach you as placeholders such as <SECRET:github-pat:1a2b3c4d>, which stand for a value you "
        "cannot see; requests that would carry a secret out (web fetches and searches, MCP and "
        "sub-agent calls) are refused. Treat placeholders as opaque and never try to recover what "
        "they hide. When a task needs a real credential, use it through the program that owns it "
        "(its config loader or environment) or ask the user. A refusal starts with `tcg: blocked` "
        "and ends with a hint saying what to do instead."
    )


def hooks_block(events: tuple[str, ...], entry: object, python: str) -> dict[str, list[dict[str, object]]]:
    """A settings ``hooks`` block: ``entry(python, event)`` for each event, on every tool
    for the tool events (``"matcher": "*"``)."""
    out: dict[str, list[dict[str, object]]] = {}
    for event in events:
        matcher: dict[str, object] = {"matcher": "*"} if event in ("PreToolUse", "PostToolUse") else {}
        out[event] = [{**matcher, "hooks": [entry(python, event)]}]  # type: ignore[operator]
    return out


class HookAdapter:
    """One agent CLI's hook protocol. Subclasses set the names and override the replies."""

    agent = ""
    surface = ""
    events: tuple[str, ...] = ("PreToolUse", "PostToolUse", "UserPromptSubmit", "SessionStart")

    # ---------------------------------------------------------------- replies

    def deny(self, reason: str) -> dict[str, object]:
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                       "permissionDecisionReason": reason}}

    def updated_input(self, tool_input: dict[str, object]) -> dict[str, object]:
        """A complete replacement input, with no permission decision: the user's own
        permission rules still apply to it."""
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": tool_input}}

    def post_reply(self, call: ToolCall, response: object, result: PostResult) -> Reply:
        raise NotImplementedError

    def post_failure(self, response: object, text: str) -> Reply:
        raise NotImplementedError

    def prompt_block(self, reason: str) -> dict[str, object]:
        return {"decision": "block", "reason": reason}

    def session_reply(self, text: str) -> dict[str, object]:
        return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}

    # ---------------------------------------------------------------- events

    def tool_call(self, data: dict[str, object], cwd: str) -> ToolCall:
        tool = data.get("tool_name")
        tool_input = data.get("tool_input")
        if not isinstance(tool, str) or not isinstance(tool_input, dict):
            raise ValueError("the hook input has no tool_name or tool_input")
        return ToolCall(self.agent, tool, tool_input, cwd)

    def masked_detail(self, ctx: HookContext, detail: str) -> str:
        """A reason's detail as it may be recorded: strictly masked (a path could hold a secret)."""
        from tcg.mask import masker_for

        m = masker_for(ctx.policy, "strict")
        data = detail.encode("utf-8", "surrogateescape")
        return (m.feed(data) + m.flush()).decode("utf-8", "replace")

    def pre_tool(self, ctx: HookContext, data: dict[str, object]) -> Reply:
        call = self.tool_call(data, ctx.cwd)
        result = pre_tool_use(ctx, call)
        verdict = result.verdict
        refused = refuses(verdict)
        fields: dict[str, object] = {"tool": call.tool}
        if refused:
            fields["detail"] = self.masked_detail(ctx, verdict.deciding.detail if verdict.deciding else "")
        if result.updated_input is not None:
            fields["input_updated"] = True
        decision = "block" if refused else verdict.decision.value
        warning = ctx.emit("agent", decision, verdict.reason, verdict.rules, **fields)
        if refused:
            return self.deny(refusal(verdict) + (f"\n{warning}" if warning else "")), 0
        if warning is not None and _refuse_unlogged(ctx):  # never let a call run unlogged
            from tcg.policy.reasons import REASONS

            what = warning.split(": ", 2)[-1]
            return self.deny(f"tcg: blocked (event-log-unwritable): {what}\n"
                             f"hint: {REASONS['event-log-unwritable'].fix}"), 0
        if result.updated_input is not None:
            return self.updated_input(result.updated_input), 0
        return None, 0

    def post_tool(self, ctx: HookContext, data: dict[str, object]) -> Reply:
        call = self.tool_call(data, ctx.cwd)
        response = data.get("tool_response")
        result = post_tool_use(ctx, call, response)
        ctx.emit("agent", "sanitize" if result.changed else "allow",
                 "secret-in-output" if result.changed else "allowed", sorted(result.rules),
                 tool=call.tool, masked=result.count, withheld=False)
        return self.post_reply(call, response, result)

    def prompt_submit(self, ctx: HookContext, data: dict[str, object]) -> Reply:
        from tcg.agents.checks import secret_rules
        from tcg.policy.model import Decision
        from tcg.policy.reasons import REASONS

        prompt = data.get("prompt")
        rules = secret_rules(ctx, [prompt]) if isinstance(prompt, str) else []
        if not rules:
            ctx.emit("human", "allow", "allowed", [])
            return None, 0
        decision = ctx.policy.decision_for("human", "secret-in-prompt")
        if decision not in (Decision.BLOCK, Decision.ASK):
            ctx.emit("human", decision.value, "secret-in-prompt", rules)
            return None, 0
        ctx.emit("human", "block", "secret-in-prompt", rules)
        return self.prompt_block(
            f"tcg: blocked (secret-in-prompt): the prompt holds a secret ({', '.join(rules)}); nothing was sent"
            f"\nhint: {REASONS['secret-in-prompt'].fix}"), 0

    def session_start(self, ctx: HookContext, data: dict[str, object]) -> Reply:
        ctx.emit("human", "allow", "allowed", [], source=str(data.get("source") or ""))
        return self.session_reply(session_context(ctx.policy)), 0

    def handler(self, event: str):  # noqa: ANN201 - a bound method of this class
        return {"PreToolUse": self.pre_tool, "PostToolUse": self.post_tool,
                "UserPromptSubmit": self.prompt_submit, "SessionStart": self.session_start}.get(event)

    # ---------------------------------------------------------------- failing closed

    def failure(self, event: str, data: object, exc: BaseException) -> Reply:
        """The fail-closed reply for ``event`` when deciding failed (and its best-effort event)."""
        policy_error = type(exc).__name__ == "PolicyError"
        code = "policy-invalid" if policy_error else "internal-error"
        what = "the policy is invalid" if policy_error else f"tcg failed ({type(exc).__name__})"
        hint = ("run `tcg policy check` and fix the file and line it names" if policy_error
                else "rerun with TCG_DEBUG=1 and report it; `tcg doctor` checks the install")
        text = f"tcg: blocked ({code}): {what}\nhint: {hint}"
        try:
            ctx = HookContext(self.agent, event, self.surface, os.getcwd(), None, os.environ)
            ctx.emit("agent", "block", code, [], error=type(exc).__name__)
        except Exception:  # noqa: BLE001 - the reply below matters more than the record
            pass
        if event == "PreToolUse":
            return self.deny(text), 0
        if event == "PostToolUse":
            response = data.get("tool_response") if isinstance(data, dict) else None
            return self.post_failure(response, text)
        if event == "UserPromptSubmit":
            return self.prompt_block(text), 0
        sys.stderr.write(text + "\n")
        return None, (0 if event == "SessionStart" else 2)

    def run(self, event: str, raw: bytes, env: dict[str, str] | os._Environ[str]) -> Reply:
        """Decide one hook call: (reply object or None, exit code). Never raises."""
        data: object = None
        try:
            from tcg.leanjson import loads

            handler = self.handler(event)
            if handler is None:
                raise ValueError(f"unknown hook event {event!r}")
            data = loads(raw.decode("utf-8"))
            if not isinstance(data, dict):
                raise ValueError("the hook input is not a JSON object")
            cwd = data.get("cwd")
            session = data.get("session_id")
            ctx = HookContext(self.agent, event, self.surface, cwd if isinstance(cwd, str) and cwd else os.getcwd(),
                              session if isinstance(session, str) else None, env)
            return handler(ctx, data)
        except BaseException as exc:  # noqa: BLE001 - fail closed: every failure becomes a refusal
            if os.environ.get("TCG_DEBUG", "") not in ("", "0"):
                import traceback

                traceback.print_exc()
            return self.failure(event, data, exc)

    def main(self, argv: list[str]) -> int:
        """`tcg hook AGENT EVENT`: stdin JSON → stdout JSON. Exit 0 with a reply; 2 = block."""
        event = argv[0] if len(argv) == 1 else ""
        if not event:
            sys.stderr.write(f"usage: tcg hook {self.agent} EVENT   ({', '.join(self.events)}; "
                             "the agent CLI sends the event's JSON on stdin)\n")
            return 2
        try:
            raw = sys.stdin.buffer.read()
        except (OSError, ValueError):
            raw = b""
        reply, code = self.run(event, raw, os.environ)
        if reply is not None:
            from tcg.events import encode_record  # compact ASCII JSON, without importing json

            try:
                sys.stdout.buffer.write(encode_record(reply))
                sys.stdout.flush()
            except (OSError, ValueError):
                sys.stderr.write("tcg: blocked (internal-error): the hook could not write its reply\n")
                return 2
        return code


__all__ = ["WITHHELD", "HookAdapter", "Reply", "session_context", "withheld"]


def _refuse_unlogged(ctx: HookContext) -> bool:
    """``events.on-unwritable`` (default block): an allowed call whose event
    could not be written is refused rather than run unlogged."""
    try:
        return ctx.policy.get("events.on-unwritable", "block") != "warn"  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - no policy to ask: fail closed
        return True
