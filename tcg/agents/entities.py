"""Business-entity aliases in an agent's own tools: the hook steps around tcg.entities.hooks.

The project's registered names (clients, people, projects; docs/entities.md)
reach the model as aliases (``CTXG_COMPANY_A``) and come back as the real names
in what the agent writes:

- RestoreAliases (PreToolUse input transform): alias → real in the complete
  tool input — Write/Edit/MultiEdit/NotebookEdit content (an Edit's
  ``old_string`` becomes the file's own bytes), Bash command lines (shell
  escaping), Read/Grep/Glob arguments. Something that only looks like an alias
  (unknown, miscased, glued to a word, an unclear ending) is asked about
  (``entity-alias-unclear``); a secret placeholder written back is refused
  (``placeholder-write``, unless ``entities.placeholder-write = "keep"``); a
  real registered name in the input of a tool that sends it off the machine
  (WebFetch, WebSearch, sub-agents, MCP tools) is refused
  (``entity-in-request``).
- AliasEntities (PostToolUse output transform): real → alias in every string
  of the tool's response, after the secrets are masked.
- glossary / prompt_entities: SessionStart's glossary (alias, type, hint —
  never a value) and the registered names a prompt holds.

Cost: a project without a registry costs a few stats (tcg.entities.stream.
entities_for imports nothing), and an input without anything alias-shaped
loads nothing. The registry is loaded once per hook call (``ctx.cache``). A
registry that exists but cannot be read is never treated as empty: every step
that needs it refuses (``entity-registry-invalid``).
"""

from __future__ import annotations

from tcg.agents import tools
from tcg.agents.base import (
    HookContext,
    InputChange,
    InputTransform,
    OutputChange,
    OutputTransform,
    ToolCall,
)
from tcg.leanjson import strings_in
from tcg.policy.model import Decision, Reason

# tools whose input leaves the machine or goes to another model: a real name there is refused
OUTBOUND = ("web", "mcp", "subagent")
# what the restore engine's problems become (tcg.entities.restore.REASONS)
PLACEHOLDER_PROBLEM = "placeholder"


class EntitiesUnavailable(Exception):
    """The project's registry exists but cannot be read: fail closed."""

    reason_code = "entity-registry-invalid"

    def __init__(self, why: str):
        super().__init__(why)
        self.message = f"the project's entity registry cannot be read ({why}); nothing is shown or written with real names"


def project_entities(ctx: HookContext) -> object | None:
    """The project's entities (tcg.entities.runtime.Entities), None when it has no
    registry. Loaded once per hook call; raises EntitiesUnavailable when the registry
    exists but cannot be read."""
    if "entities" not in ctx.cache:
        from tcg.entities.stream import entities_for

        try:
            ctx.cache["entities"] = entities_for(ctx.env, ctx.cwd)
        except Exception as exc:  # noqa: BLE001 - RegistryError, a damaged compiled file: fail closed
            raise EntitiesUnavailable(getattr(exc, "message", None) or type(exc).__name__) from None
    return ctx.cache["entities"]


def _read_file(path: str) -> str | None:
    """A file's text as the agent's file tools read it (UTF-8), None when it is not one."""
    import os

    try:
        if not os.path.isfile(path):
            return None
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError):
        return None


def _secret_spans(ctx: HookContext):  # noqa: ANN202 - a callable for tcg.entities.hooks
    """(start, end, placeholder) of every secret in a text, in characters, with the
    placeholders the masker prints — so an Edit whose old_string holds a placeholder
    copied from a masked Read finds its place."""

    def spans(text: str) -> list[tuple[int, int, str]]:
        from tcg.guard.channels import scan

        data = text.encode("utf-8", "surrogateescape")
        out = []
        for s in scan(data, ctx.policy):
            start = len(data[:s.start].decode("utf-8", "surrogateescape"))
            end = start + len(data[s.start:s.end].decode("utf-8", "surrogateescape"))
            out.append((start, end, s.placeholder))
        return out

    return spans


class RestoreAliases(InputTransform):
    name = "entity-aliases"

    def transform(self, ctx: HookContext, call: ToolCall) -> InputChange | None:
        from tcg.entities import has_alias_like

        outbound = tools.channel_of(call.tool) in OUTBOUND
        if not outbound and not any(has_alias_like(s) for s in strings_in(call.input, keys=False)):
            return None  # nothing alias-shaped: no registry needed
        try:
            ents = project_entities(ctx)
        except EntitiesUnavailable as exc:
            return InputChange(None, [Reason(exc.reason_code, Decision.BLOCK, f"{call.tool}: {exc.message}")])
        if ents is None:
            if outbound or not any("<SECRET:" in s or "<PII:" in s for s in strings_in(call.input, keys=False)):
                return None  # no registry: alias-shaped text is just text; placeholders still matter
        from tcg.entities.hooks import pre_tool_use

        placeholders = ctx.policy.model.launch.placeholder_write or "refuse"
        result = pre_tool_use(call.tool, call.input, ents, read_file=_read_file,  # type: ignore[arg-type]
                              secret_spans=_secret_spans(ctx), placeholders=placeholders)
        if result.action == "update":
            return InputChange(result.tool_input)
        if result.action == "unchanged":
            return None
        return InputChange(None, [self._reason(ctx, call, result, ents is None)])

    def _reason(self, ctx: HookContext, call: ToolCall, result: object, no_registry: bool) -> Reason:
        problems = getattr(result, "problems", [])
        kinds = sorted({p.reason for p in problems})
        text = str(getattr(result, "reason", "")).removeprefix("tcg: ")
        if getattr(result, "action", "") == "deny" and not problems:  # a real name leaving the machine
            return Reason("entity-in-request", ctx.decision_for("entity-in-request"), f"{call.tool}: {text}")
        if PLACEHOLDER_PROBLEM in kinds:
            placeholder = [p for p in problems if p.reason == PLACEHOLDER_PROBLEM][0]
            # not a policy decision: entities.placeholder-write ("keep") is the setting, and letting
            # this call through would also write its aliases unrestored
            return Reason("placeholder-write", Decision.BLOCK,
                          f"{call.tool}: {placeholder.token} is a masked secret: its value is never written "
                          "back; writing it would put the placeholder into the file instead of the secret",
                          PLACEHOLDER_PROBLEM)
        if no_registry:  # cannot happen (no registry: only placeholders are problems); fail closed anyway
            return Reason("entity-registry-invalid", Decision.BLOCK, f"{call.tool}: {text}")
        return Reason("entity-alias-unclear", ctx.decision_for("entity-alias-unclear"), f"{call.tool}: {text}",
                      ",".join(kinds) or None)


class AliasEntities(OutputTransform):
    name = "entity-aliases"

    def transform(self, ctx: HookContext, call: ToolCall, response: object) -> OutputChange:
        if response is None or isinstance(response, (bool, int, float)):
            return OutputChange(response)
        ents = project_entities(ctx)  # EntitiesUnavailable: the adapter withholds the output
        if ents is None:
            return OutputChange(response)
        from tcg.entities.hooks import post_tool_use

        new, count = post_tool_use(call.tool, response, ents)  # type: ignore[arg-type]
        if new is None:
            return OutputChange(response)
        return OutputChange(new, count=count, reason="entity-in-output")


def glossary(ctx: HookContext) -> str | None:
    """SessionStart's glossary (alias, type, hint: never a value), None without a
    registry. Raises EntitiesUnavailable."""
    ents = project_entities(ctx)
    if ents is None:
        return None
    from tcg.entities.hooks import session_start_context

    return session_start_context(ents)  # type: ignore[arg-type]


def prompt_entities(ctx: HookContext, prompt: str) -> list[str]:
    """The aliases of the registered entities a prompt names (sorted, each once).
    Raises EntitiesUnavailable."""
    ents = project_entities(ctx)
    if ents is None or not prompt:
        return []
    matcher = ents.matcher  # type: ignore[attr-defined]
    if not matcher:
        return []
    found = matcher.find_bytes(prompt.encode("utf-8", "surrogatepass"))
    return sorted({_alias_of(m.token) for m in found})


def _alias_of(token: str) -> str:
    """The alias of a replacement token (``CTXG_PERSON_1а`` → ``CTXG_PERSON_1``: the
    case ending is Cyrillic, the alias ASCII)."""
    end = 0
    while end < len(token) and token[end].isascii():
        end += 1
    return token[:end]
