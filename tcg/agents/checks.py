"""PreToolUse decision steps: the same policy the shell applies, for an agent's own tools.

- FileAccess: paths a tool reads, writes or lists (tcg.agents.tools) go through
  tcg.policy.access.evaluate_access — the checks a command's file arguments get
  (secret stores, tcg's own files, guard files such as rc files and agent
  settings) with the policy's lists, never a copy of them.
- ShellLine: a shell tool's command line goes through evaluate_line, as
  `tcg_shell run-line` would decide it (the station still decides again when
  the command runs: this makes a refusal reach the model as a clean reason).
- ProtectedResources: MCP tool and sub-agent arguments, checked like an MCP
  request (tcg.mcp.check_request: the built-in minimum plus
  ``mcp.protected_resources``).
- OutboundSecrets: text leaving through a channel (web fetch/search, MCP,
  sub-agents) that holds a secret the detector finds → ``secret-in-request``.
- FileWriteChannel: the text a file tool writes, judged as the ``file-write``
  outbound channel (tcg.guard.channels): a secret is written as its
  placeholder (SANITIZE), or the write is refused (BLOCK/ASK), per policy.

Each step imports its heavy parts when it first has work (a Read of an
ordinary file loads no detector and no command-line parser).
"""

from __future__ import annotations

import os

from tcg.agents import tools
from tcg.agents.base import DecisionStep, HookContext, InputChange, InputTransform, ToolCall
from tcg.leanjson import strings_in
from tcg.policy.model import Reason


class FileAccess(DecisionStep):
    name = "file-access"

    def accesses(self, call: ToolCall) -> list[tuple[str, str, str]]:
        """(tool name, path or pattern, access) for everything ``call`` names."""
        out = []
        for field, access in tools.FILE_FIELDS.get(call.tool, ()):
            path = call.path(field)
            if path:
                out.append((call.tool, path, access))
        base = call.path("path") or call.cwd
        for field, access in tools.PATTERN_FIELDS.get(call.tool, ()):
            pattern = call.text(field)
            for one in _brace_alternatives(pattern) if pattern else ():
                target = _filter_target(base, one)
                if target is not None:
                    out.append((call.tool, target, access))
        for field, access in tools.LIST_FIELDS.get(call.tool, ()):
            items = call.input.get(field)
            for item in items if isinstance(items, list) else ():
                if isinstance(item, str) and item and not tools.is_trivial_pattern(item):
                    out.append((call.tool, item if os.path.isabs(item) else os.path.join(call.cwd, item), access))
        return out

    def decide(self, ctx: HookContext, call: ToolCall) -> list[Reason]:
        accesses = self.accesses(call)
        if not accesses:
            return []
        from tcg.policy.access import evaluate_access

        verdict = evaluate_access(ctx.policy, accesses, "agent", cwd=call.cwd, env=ctx.env)
        return list(verdict.reasons)


def _filter_target(base: str, pattern: str) -> str | None:
    """What a search filter stands for, as a path pattern the policy can judge: its
    literal directory parts (a protected segment such as ``.ssh`` counts wherever it
    is) and its file-name part; None for a filter that matches every file (``*``,
    ``**/*``, ``src/*``: the same files the search reads without one, whose output
    is masked)."""
    parts = [p for p in pattern.split("/") if p and p != "."]
    if not parts:
        return None
    literal_dirs = [p for p in parts[:-1] if not any(c in p for c in "*?[")]
    name = parts[-1]
    if tools.is_trivial_pattern(name):
        if not literal_dirs:
            return None
        name = "x"  # only the directories matter
    root = "" if pattern.startswith("/") else base
    return os.path.join(root or "/", *literal_dirs, name)


def _brace_alternatives(pattern: str) -> list[str]:
    """``*.{env,pem}`` → ``*.env``, ``*.pem`` (one level, as search tools' globs allow)."""
    start = pattern.find("{")
    end = pattern.find("}", start + 1)
    if start < 0 or end < 0:
        return [pattern]
    head, body, tail = pattern[:start], pattern[start + 1:end], pattern[end + 1:]
    return [head + alt + tail for alt in body.split(",")]


class ShellLine(DecisionStep):
    name = "shell-line"

    def decide(self, ctx: HookContext, call: ToolCall) -> list[Reason]:
        field = tools.SHELL_FIELDS.get(call.tool)
        line = call.text(field) if field else None
        if line is None:
            return []
        from tcg.decide.line import evaluate_line

        return list(evaluate_line(ctx.policy, line, "agent", cwd=call.cwd, env=ctx.env).reasons)


class ProtectedResources(DecisionStep):
    name = "protected-resources"

    def decide(self, ctx: HookContext, call: ToolCall) -> list[Reason]:
        if not tools.is_request_checked(call.tool):
            return []
        from pathlib import Path

        from tcg.mcp.check_request import RequestChecker

        blocked = RequestChecker.for_policy(ctx.policy, cwd=Path(call.cwd)).check(call.input)
        if blocked is None:
            return []
        return [Reason(blocked.reason, ctx.decision_for(blocked.reason),
                       f"{call.tool}: its arguments name a protected resource ({blocked.rule})", blocked.rule)]


def secret_rules(ctx: HookContext, texts: list[str]) -> list[str]:
    """Rule ids of the secrets the detector finds in ``texts`` (encoded ones too)."""
    from tcg.detect.engine import load_detector

    detector = load_detector(ctx.policy)
    found: set[str] = set()
    for text in texts:
        if text:
            found.update(f.rule_id for f in detector.find(text, decode=True) if f.category == "secret")
    return sorted(found)


class OutboundSecrets(DecisionStep):
    """A secret in what leaves through a channel is an exfiltration, whatever the URL."""

    name = "outbound-secrets"

    def decide(self, ctx: HookContext, call: ToolCall) -> list[Reason]:
        rules = secret_rules(ctx, strings_in(call.input))
        if not rules:
            return []
        channel = tools.channel_of(call.tool) or "outbound"
        return [Reason("secret-in-request", ctx.decision_for("secret-in-request"),
                       f"{call.tool}: its arguments ({channel}) carry a secret ({', '.join(rules)})", rules[0])]


# tool → where its written text is: ((field, …) of the input, or of each item of a list field)
WRITTEN_FIELDS: dict[str, tuple[str, ...]] = {
    "Write": ("content",), "Edit": ("new_string",), "NotebookEdit": ("new_source",),
    "write_file": ("content",), "edit": ("new_string",),
}
WRITTEN_LIST_FIELDS: dict[str, tuple[str, str]] = {"MultiEdit": ("edits", "new_string")}


class FileWriteChannel(InputTransform):
    """What a file tool writes is the ``file-write`` outbound channel
    (tcg.guard.channels.decide, the same decision `tcg check-span --channel
    file-write` gives): SANITIZE — the written text with every secret replaced by
    its placeholder (the complete input comes back); BLOCK or ASK — refused, the
    file untouched. Only the text that lands in the file is judged (an Edit's
    ``old_string`` is not written)."""

    name = "file-write-channel"

    def transform(self, ctx: HookContext, call: ToolCall) -> InputChange | None:
        places = self._texts(call)
        if not places:
            return None
        from tcg.guard.channels import decide, sanitize
        from tcg.policy.model import Decision

        new = dict(call.input)
        reasons: list[Reason] = []
        changed = False
        for path, text in places:
            verdict = decide("file-write", text, ctx.policy)
            if verdict.decision == Decision.ALLOW:
                continue
            rules = sorted({s.rule for s in verdict.spans})
            what = f"{call.tool}: the text it writes holds a secret ({', '.join(rules) or verdict.reason})"
            if verdict.decision == Decision.SANITIZE:
                data = text.encode("utf-8", "surrogateescape")
                _put(new, path, sanitize(data, verdict.spans).decode("utf-8", "surrogateescape"))
                changed = True
                reasons.append(Reason(verdict.reason, Decision.SANITIZE,
                                      what + "; it is written with the placeholder instead", rules[0] if rules else None))
            else:
                reasons.append(Reason(verdict.reason, verdict.decision,
                                      what + " (channel file-write)", rules[0] if rules else None))
        return InputChange(new if changed else None, reasons) if reasons else None

    @staticmethod
    def _texts(call: ToolCall) -> list[tuple[tuple[object, ...], str]]:
        out: list[tuple[tuple[object, ...], str]] = []
        for field in WRITTEN_FIELDS.get(call.tool, ()):
            value = call.input.get(field)
            if isinstance(value, str) and value:
                out.append(((field,), value))
        listed = WRITTEN_LIST_FIELDS.get(call.tool)
        if listed is not None:
            items = call.input.get(listed[0])
            for i, item in enumerate(items if isinstance(items, list) else ()):
                value = item.get(listed[1]) if isinstance(item, dict) else None
                if isinstance(value, str) and value:
                    out.append(((listed[0], i, listed[1]), value))
        return out


def _put(tool_input: dict[str, object], path: tuple[object, ...], value: str) -> None:
    """Set ``value`` at ``path`` in ``tool_input``, copying the containers on the way
    (the caller's input is never changed in place)."""
    if len(path) == 1:
        tool_input[path[0]] = value  # type: ignore[index]
        return
    field, index, key = path
    items = list(tool_input[field])  # type: ignore[index, call-overload]
    items[index] = {**items[index], key: value}  # type: ignore[call-overload, index, dict-item]
    tool_input[field] = items  # type: ignore[index]
