"""The hook entry shared by every agent CLI: parse, decide, reply — fail closed.

An agent CLI runs the hook for each event with a JSON object on stdin and
reads a JSON reply on stdout. HookAdapter parses the input into a
tcg.agents.pipeline ToolCall, runs the pipeline, records one ``hook_decision``
event, and renders the reply; a subclass per CLI (tcg.agents.claude,
tcg.agents.qwen) says what its CLI's replies look like. Any exception while
deciding becomes a refusal (PreToolUse: deny; PostToolUse: the response's
shape with no content; UserPromptSubmit: block), never a silent allow.

PreToolUse decisions, as replied:
- BLOCK → deny, with the reason and a hint;
- ASK on a shell command (the delete-guard's ``git push --force-with-lease``,
  ``delete-compound`` …) → deny with a single-use `tcg approve` code: the
  station runs the line once a person approved it in their own terminal
  (tcg.guard.approval); a CLI's own permission prompt cannot be the approval,
  since the station decides the line again when it runs;
- ASK on anything else (an unclear alias, a file-write channel set to ask) →
  the CLI's own ``ask``: a person answers in the CLI's prompt; in Claude
  Code's ``-p`` mode that is a refusal whose reason the model reads (measured
  with 2.1.328), so the explanation is always in the reason;
- RELOCATE/SNAPSHOT on a shell command → allowed when the CLI's shell runs
  through the station, which moves or saves the targets first; refused when it
  does not (hooks installed without `tcg launch`): nothing would be saved;
- a changed input → the complete new input (``updatedInput``), or a refusal
  for a CLI that ignores rewritten inputs.
"""

from __future__ import annotations

import os
import sys

from tcg.agents.pipeline import (
    WITHHELD,
    HookContext,
    PostResult,
    ToolCall,
    asking_text,
    deciding_detail,
    post_tool_use,
    pre_tool_use,
    refusal,
    refuses,
    withheld,
)

Reply = tuple[dict[str, object] | None, int]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

    from tcg.policy.model import Verdict


def session_context(policy: object) -> str:
    """One paragraph for the model: what tcg protects and how to work with it (no values)."""
    protected = policy.model.secret_stores  # type: ignore[attr-defined]
    stores = [s for s in protected.basenames if "*" not in s][:6]
    dirs = list(protected.segments)[:4]
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
    can_ask = False  # the CLI asks a person on a PreToolUse "ask" (else: deny)
    can_rewrite_input = True  # the CLI runs a PreToolUse updatedInput (else: deny what needs one)

    def shell_via_station(self, env: dict[str, str] | os._Environ[str]) -> bool:
        """Does the CLI's shell tool run through the station (`tcg launch` wired it)?"""
        return False

    # ---------------------------------------------------------------- replies

    def deny(self, reason: str) -> dict[str, object]:
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                       "permissionDecisionReason": reason}}

    def ask(self, reason: str) -> dict[str, object]:
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask",
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
        from tcg.agents.tools import SHELL_FIELDS
        from tcg.policy.model import Decision

        call = self.tool_call(data, ctx.cwd)
        result = pre_tool_use(ctx, call)
        verdict = result.verdict
        shell = call.tool in SHELL_FIELDS
        if verdict.decision in (Decision.RELOCATE, Decision.SNAPSHOT) and shell \
                and not self.shell_via_station(ctx.env):
            verdict = _unguarded(verdict)
        fields: dict[str, object] = {"tool": call.tool}
        if result.updated_input is not None:
            fields["input_updated"] = True
        if verdict.decision == Decision.ASK and shell:
            return self.shell_ask(ctx, call, verdict, fields)
        if refuses(verdict):
            fields["detail"] = self.masked_detail(ctx, deciding_detail(verdict)[1])
            asking = verdict.decision == Decision.ASK and self.can_ask
            warning = ctx.emit("agent", "ask" if asking else "block", verdict.reason, verdict.rules, **fields)
            text = (asking_text(verdict) if asking else refusal(verdict)) + (f"\n{warning}" if warning else "")
            return (self.ask(text) if asking else self.deny(text)), 0
        if result.updated_input is not None and not self.can_rewrite_input:
            why = deciding_detail(verdict)[1] or f"{call.tool}: tcg has to rewrite this call's input"
            fields["detail"] = self.masked_detail(ctx, why)
            warning = ctx.emit("agent", "block", "input-not-rewritable", verdict.rules, **fields)
            return self.deny(_not_rewritable(self.agent, why) + (f"\n{warning}" if warning else "")), 0
        warning = ctx.emit("agent", verdict.decision.value, verdict.reason, verdict.rules, **fields)
        if warning is not None:  # an agent's call never runs unlogged (events.on-unwritable is for a person's lines)
            from tcg.policy.reasons import REASONS

            what = warning.split(": ", 2)[-1]
            return self.deny(f"tcg: blocked (event-log-unwritable): {what}\n"
                             f"hint: {REASONS['event-log-unwritable'].fix}"), 0
        if result.updated_input is not None:
            return self.updated_input(result.updated_input), 0
        return None, 0

    def shell_ask(self, ctx: HookContext, call: ToolCall, verdict: Verdict, fields: dict[str, object]) -> Reply:
        """An ASK on a shell command: let an approved line through (the station, or
        here when there is none, uses the approval up), else refuse with a code."""
        import os as _os

        from tcg.agents.tools import SHELL_FIELDS
        from tcg.guard import approval
        from tcg.keyhash import KeyedHasher

        line = call.text(SHELL_FIELDS[call.tool]) or ""
        cwd = _os.path.realpath(call.cwd)
        code, detail = deciding_detail(verdict)
        station = self.shell_via_station(ctx.env)
        if approval.consume(line, cwd, ctx.env, use=not station) is not None:
            ctx.emit("agent", "allow", code, verdict.rules, approval="used" if not station else "pending",
                     **fields)
            return None, 0
        masked = self.masked_detail(ctx, detail)
        ask = approval.AskRequest(command=self.masked_detail(ctx, line), cwd=cwd, reason=code, detail=masked,
                                  line_hash=approval.line_hash(line, cwd, KeyedHasher.for_install().key))
        number = approval.request(ask, ctx.env)
        warning = ctx.emit("agent", "block", code, verdict.rules, detail=masked, approval="requested",
                           **fields)
        return self.deny(approval.refusal_text(code, detail, number) + (f"\n{warning}" if warning else "")), 0

    def post_tool(self, ctx: HookContext, data: dict[str, object]) -> Reply:
        call = self.tool_call(data, ctx.cwd)
        response = data.get("tool_response")
        result = post_tool_use(ctx, call, response)
        ctx.emit("agent", "sanitize" if result.changed else "allow",
                 result.reason if result.changed or result.context else "allowed",
                 sorted(result.rules), tool=call.tool, masked=result.counts.get("secret-in-output", 0),
                 entities=result.counts.get("entity-in-output", 0), warned=bool(result.context), withheld=False)
        return self.post_reply(call, response, result)

    def prompt_submit(self, ctx: HookContext, data: dict[str, object]) -> Reply:
        from tcg.agents.checks import secret_rules
        from tcg.agents.entities import prompt_entities
        from tcg.policy.model import Decision
        from tcg.policy.reasons import REASONS

        prompt = data.get("prompt")
        prompt = prompt if isinstance(prompt, str) else ""
        rules = secret_rules(ctx, [prompt]) if prompt else []
        code, what = "secret-in-prompt", f"the prompt holds a secret ({', '.join(rules)})"
        if not rules:
            rules = prompt_entities(ctx, prompt)
            code, what = "entity-in-prompt", f"the prompt names a registered business entity ({', '.join(rules)})"
        if rules:
            decision = ctx.policy.decision_for("human", code)
            if decision in (Decision.BLOCK, Decision.ASK):
                ctx.emit("human", "block", code, rules)
                return self.prompt_block(f"tcg: blocked ({code}): {what}; nothing was sent\nhint: {REASONS[code].fix}"), 0
            ctx.emit("human", decision.value, code, rules)
        from tcg.agents.inbound import check_prompt

        verdict = check_prompt(ctx, prompt)
        if verdict is not None and verdict.block:
            ctx.emit("human", "block", verdict.outcome.reason(), sorted(verdict.outcome.rules))
            return self.prompt_block(f"tcg: blocked ({verdict.outcome.reason()}): {verdict.reason}"), 0
        if not rules:
            ctx.emit("human", "allow", "allowed", [])
        if verdict is not None and verdict.additional_context:
            return self.prompt_context(verdict.additional_context), 0
        return None, 0

    def prompt_context(self, text: str) -> dict[str, object] | None:
        return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": text}}

    def session_start(self, ctx: HookContext, data: dict[str, object]) -> Reply:
        from tcg.agents.entities import EntitiesUnavailable, glossary

        text = session_context(ctx.policy)
        reason = "allowed"
        try:
            names = glossary(ctx)
        except EntitiesUnavailable as exc:
            names = (f"tcg: {exc.message}. Until it is repaired, tcg refuses every tool call that would "
                     "need it; tell the user (`tcg entity list` shows what is wrong).")
            reason = exc.reason_code
        if names:
            text = f"{text}\n\n{names}"
        ctx.emit("human", "block" if reason != "allowed" else "allow", reason, [],
                 source=str(data.get("source") or ""), glossary=bool(names) and reason == "allowed")
        return self.session_reply(text), 0

    def handler(self, event: str):  # noqa: ANN201 - a bound method of this class
        return {"PreToolUse": self.pre_tool, "PostToolUse": self.post_tool,
                "UserPromptSubmit": self.prompt_submit, "SessionStart": self.session_start}.get(event)

    # ---------------------------------------------------------------- failing closed

    def failure(self, event: str, data: object, exc: BaseException) -> Reply:
        """The fail-closed reply for ``event`` when deciding failed (and its best-effort event)."""
        from tcg.policy.reasons import REASONS

        policy_error = type(exc).__name__ == "PolicyError"
        own = getattr(exc, "reason_code", None)  # a step's own failure (tcg.agents.entities)
        code = "policy-invalid" if policy_error else own if own in REASONS else "internal-error"
        what = ("the policy is invalid" if policy_error else str(getattr(exc, "message", "")) if code != "internal-error"
                else f"tcg failed ({type(exc).__name__})")
        hint = ("run `tcg policy check` and fix the file and line it names" if policy_error
                else REASONS[code].fix if code != "internal-error"
                else "rerun with TCG_DEBUG=1 and report it; `tcg doctor` checks the install")
        text = f"tcg: blocked ({code}): {what}\nhint: {hint}"
        try:
            ctx = HookContext(self.agent, event, self.surface, os.getcwd(), None, os.environ)
            if policy_error:
                from tcg.events import record_policy_error

                record_policy_error(exc, surface=self.surface, actor="agent", session=ctx.session(),
                                    agent=self.agent, hook_event=event)
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

    def exit(self, argv: list[str]) -> NoReturn:
        """Run main and leave at once with its code, without the interpreter's teardown
        (freeing every loaded module costs 2–3 ms, a sixth of a hook call). Safe here:
        the reply is flushed below, the event was written with os.write on a closed
        descriptor, and tcg registers no atexit work on this path. An exception that
        escapes main (it never raises) takes the ordinary way out: a traceback and
        exit 1, which Claude Code's ``onFailure: "block"`` turns into a refusal."""
        code = self.main(argv)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                code = code or 2  # a reply that may not have arrived: block
        os._exit(code)

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


def _unguarded(verdict: Verdict) -> Verdict:
    """A RELOCATE/SNAPSHOT shell command whose CLI does not run it through the
    station: nothing would move it into the trash or save it first, so refuse."""
    from tcg.policy import model

    code, detail = deciding_detail(verdict)
    return model.Verdict(model.Decision.BLOCK, (model.Reason(code, model.Decision.BLOCK, (
        f"{detail}; this agent's shell commands do not run through tcg's station here, so nothing would be "
        "saved first (start the agent with `tcg launch`, or move the files with `tcg trash -- PATH…` first)")),))


def _not_rewritable(agent: str, why: str) -> str:
    from tcg.policy.reasons import REASONS

    return (f"tcg: blocked (input-not-rewritable): {why}; {agent} cannot run a rewritten tool input, so the "
            f"call is refused\nhint: {REASONS['input-not-rewritable'].fix}")


__all__ = ["WITHHELD", "HookAdapter", "Reply", "session_context", "withheld"]

