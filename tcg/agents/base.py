"""What a hook step sees and what it is: the tool call, the hook's context, and the
base classes of the pipeline's extension points (tcg.agents.pipeline runs them).

Kept apart from the pipeline so steps (tcg.agents.checks, tcg.agents.outputs,
and other features' steps) import these without importing the pipeline that
registers them. Builtins and tcg's own modules only: this is on the per-call
PreToolUse path (docs/agents.md).
"""

from __future__ import annotations

import os

from tcg.policy.model import Decision, Reason


class ToolCall:
    """One tool call: the agent, the tool's name, its input (a JSON object), the cwd."""

    __slots__ = ("agent", "cwd", "input", "tool")

    def __init__(self, agent: str, tool: str, tool_input: dict[str, object], cwd: str):
        self.agent = agent
        self.tool = tool
        self.input = tool_input
        self.cwd = cwd

    def text(self, field: str) -> str | None:
        """A string field of the input, or None when it is absent (or null).

        A field that is there with another type (a command as a list, a path as
        a number) raises ValueError: the hook denies a malformed call instead of
        letting it through unchecked."""
        value = self.input.get(field)
        if value is None or isinstance(value, str):
            return value
        raise ValueError(f"the tool input's {field!r} is a {type(value).__name__}, not a string")

    def path(self, field: str) -> str | None:
        """A path field, absolute (relative ones are taken from the call's cwd)."""
        value = self.text(field)
        if not value:
            return None
        if value.startswith("~") or os.path.isabs(value):
            return value
        return os.path.join(self.cwd, value)


class HookContext:
    """What one hook process knows: the agent, the event, the environment, and the
    policy (loaded on first use, through its snapshot, for the call's cwd)."""

    def __init__(self, agent: str, event: str, surface: str, cwd: str, session: str | None,
                 env: dict[str, str] | os._Environ[str]):
        self.agent = agent
        self.event = event
        self.surface = surface
        self.cwd = cwd
        self.agent_session = session  # the agent's own session id (only ever stored keyed)
        self.env = env
        self._policy: object = None
        self.cache: dict[str, object] = {}  # what steps load once per hook call (tcg.agents.entities)

    @property
    def policy(self):  # noqa: ANN201 - tcg.policy.load.Policy (imported lazily)
        """The effective policy for the call's cwd. PolicyError when it is invalid."""
        if self._policy is None:
            from tcg.policy.load import load_policy

            self._policy = load_policy(cwd=self.cwd, environ=self.env)
        return self._policy

    def decision_for(self, code: str) -> Decision:
        return self.policy.decision_for("agent", code)

    def session(self) -> str:
        """tcg's session: the launch's (TCG_SESSION), else a keyed hash of the agent's own
        session id (events of one agent session group together), else a fresh one."""
        inherited = self.env.get("TCG_SESSION")
        if inherited:
            return inherited
        from tcg.events import new_session_id

        if self.agent_session:
            try:
                from tcg.digest import keyed_blake2b
                from tcg.keyhash import load_or_create_key

                # a label, not a value's fingerprint: keyed BLAKE2b (no OpenSSL load per tool call)
                return keyed_blake2b(load_or_create_key(), self.agent_session.encode("utf-8", "surrogateescape"),
                                     b"tcg session id")[:16]
            except Exception:  # noqa: BLE001 - no key: a fresh id (the events still record)
                return new_session_id()
        return new_session_id()

    def emit(self, actor: str, decision: str, reason: str, rules: list[str] | tuple[str, ...],
             **fields: object) -> str | None:
        """One ``hook_decision`` event. Returns a warning when it could not be recorded
        (the decision stands; the adapter tells the agent)."""
        from tcg.events import EventLog

        try:
            ref = self._policy.ref() if self._policy is not None else None  # type: ignore[attr-defined]
            EventLog().emit("hook_decision", surface=self.surface, actor=actor, decision=decision, reason=reason,
                            rules=list(rules), policy=ref, session=self.session(), agent=self.agent,
                            hook_event=self.event, **fields)
        except Exception as exc:  # noqa: BLE001 - EventLogError, OSError: said, the decision stands
            return f"tcg: warning: the decision was not recorded: {getattr(exc, 'message', type(exc).__name__)}"
        return None


class InputChange:
    """What an input transform found: a complete replacement input (None: keep it) and
    reasons (a refusal, or the record of what it changed)."""

    __slots__ = ("input", "reasons")

    def __init__(self, tool_input: dict[str, object] | None = None, reasons: list[Reason] | None = None):
        self.input = tool_input
        self.reasons = reasons or []


class InputTransform:
    """PreToolUse: return a complete replacement of ``call.input`` (a dict, or an
    InputChange that may carry reasons too), or None to keep it."""

    name = "input-transform"

    def transform(self, ctx: HookContext, call: ToolCall) -> dict[str, object] | InputChange | None:
        raise NotImplementedError


class DecisionStep:
    """PreToolUse: the reasons (possibly none) this step finds in ``call``."""

    name = "decision-step"

    def decide(self, ctx: HookContext, call: ToolCall) -> list[Reason]:
        raise NotImplementedError


class OutputChange:
    """What an output transform did: the (possibly new) value, the rules applied, how
    many spans it changed, text for the model (never a secret value), and the reason
    code that names what it did (for the event; None when it did nothing)."""

    __slots__ = ("context", "count", "reason", "rules", "value")

    def __init__(self, value: object, rules: set[str] | None = None, count: int = 0,
                 context: list[str] | None = None, reason: str | None = None):
        self.value = value
        self.rules = rules or set()
        self.count = count
        self.context = context or []
        self.reason = reason


class OutputTransform:
    """PostToolUse: transform a tool's response (in its own shape)."""

    name = "output-transform"

    def transform(self, ctx: HookContext, call: ToolCall, response: object) -> OutputChange:
        raise NotImplementedError
