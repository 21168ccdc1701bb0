"""What the Claude Code hooks adapter calls for business entities: pure functions.

- :func:`session_start_context` — the glossary (alias, type, hint; never a
  value) to add to the model's context at SessionStart (startup, resume, clear,
  compact), so the aliases keep their meaning after compaction;
- :func:`pre_tool_use` — alias -> real on what the agent is about to do: the
  complete ``tool_input`` in, the complete ``tool_input`` out (``updatedInput``
  replaces the whole input), or ask / deny;
- :func:`post_tool_use` — real -> alias on what a tool returns, in the tool's
  own response shape (``updatedToolOutput``).

Nothing here reads or writes anything but what it is handed: the file an Edit
changes is read through ``read_file``, secrets in it are located through
``secret_spans`` (the adapter's masker), so the functions are tested without a
Claude Code process. docs/entities.md describes how the adapter calls them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tcg.entities import has_alias_like
from tcg.entities.contexts import context_for_path
from tcg.entities.objects import alias_object, alias_string
from tcg.entities.restore import PLACEHOLDER, Problem, restore_text
from tcg.leanjson import strings_in

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from tcg.entities.runtime import Entities

    ReadFile = Callable[[str], str | None]
    SecretSpans = Callable[[str], list[tuple[int, int, str]]]

# tools whose input leaves the machine or goes to another model: aliases stay
# aliases there, and a real value in the input is refused
OUTBOUND_TOOLS = ("WebFetch", "WebSearch", "Task", "Agent")
PATH_KEYS = ("file_path", "path", "notebook_path")


@dataclass
class PreResult:
    """``action``: "unchanged" (nothing to do), "update" (use ``tool_input``),
    "ask" or "deny" (``reason`` says why; it never holds a value)."""

    action: str
    tool_input: dict[str, object] | None = None
    reason: str = ""
    restored: int = 0
    problems: list[Problem] = field(default_factory=list)


# ------------------------------------------------------------ SessionStart


def session_start_context(ents: Entities | None) -> str | None:
    """The glossary text for SessionStart's ``additionalContext`` (None: nothing
    registered). Hints are aliased too, in case one names an entity."""
    if ents is None or not ents.glossary:
        return None
    lines = [
        "tcg: business names in this project (clients, people, projects) reach you as aliases "
        "such as CTXG_COMPANY_A or CTXG_PERSON_1. Use the aliases exactly as written — in code, "
        "files, commands and prose; in Russian text you may add a case ending directly after one "
        "(CTXG_PERSON_1а, CTXG_COMPANY_Aой). tcg writes the real names back into files and "
        "commands. When you edit a file, the text to replace (old_string) must not hold an alias "
        "(the file holds the real name there, and it is matched before tcg sees the edit): quote "
        "the text around it; the replacement text may use aliases. Never guess, spell out or ask "
        "for the real names. Glossary:",
    ]
    for g in ents.glossary:
        hint = alias_string(ents.matcher, g.hint)[0] if g.hint else ""
        lines.append(f"- {g.alias} ({g.type})" + (f": {hint}" if hint else ""))
    return "\n".join(lines)


# ------------------------------------------------------------ PostToolUse


def post_tool_use(tool_name: str, tool_response: object, ents: Entities | None
                  ) -> tuple[object | None, int]:
    """(the response with every registered entity aliased, or None when nothing
    changed; spans replaced). The shape is kept: only strings change."""
    if ents is None or not ents.matcher:
        return None, 0
    out: object
    if isinstance(tool_response, str):
        out, n = alias_string(ents.matcher, tool_response)
    else:
        out, n = alias_object(ents.matcher, tool_response)
    return (out, n) if n else (None, 0)


# ------------------------------------------------------------ PreToolUse


def pre_tool_use(tool_name: str, tool_input: dict[str, object], ents: Entities | None, *,
                 read_file: ReadFile | None = None, secret_spans: SecretSpans | None = None,
                 placeholders: str = "refuse") -> PreResult:
    """Alias -> real in ``tool_input`` (a dict as Claude Code sends it)."""
    if not isinstance(tool_input, dict):
        return PreResult("unchanged")
    if tool_name in OUTBOUND_TOOLS or tool_name.startswith("mcp__"):
        return _outbound(tool_input, ents)
    if not any(isinstance(v, str) and has_alias_like(v) for v in strings_in(tool_input, keys=False)):
        return PreResult("unchanged")
    new = dict(tool_input)
    problems: list[Problem] = []
    restored = 0

    def put(key: str, res: object) -> None:
        nonlocal restored
        new[key] = res.text  # type: ignore[attr-defined]
        problems.extend(res.problems)  # type: ignore[attr-defined]
        restored += res.count  # type: ignore[attr-defined]

    for key in PATH_KEYS:  # a path may hold an alias (a directory named after a client)
        v = tool_input.get(key)
        if isinstance(v, str) and has_alias_like(v):
            put(key, restore_text(v, ents, placeholders="keep"))
    path = next((new[k] for k in PATH_KEYS if isinstance(new.get(k), str)), None)
    ctx = context_for_path(path)  # type: ignore[arg-type]
    if tool_name == "Bash":
        if isinstance(tool_input.get("command"), str):
            put("command", restore_text(tool_input["command"], ents, context="shell",  # type: ignore[arg-type]
                                        placeholders=placeholders))
    elif tool_name == "Write":
        content = tool_input.get("content")
        if isinstance(content, str):
            old = read_file(path) if read_file and path else None  # type: ignore[arg-type]
            spell = _spellings_in(old, content, ents, secret_spans) if old else None
            put("content", restore_text(content, ents, context=ctx, placeholders=placeholders,
                                        spellings=spell))
    elif tool_name == "Edit":
        current = read_file(path) if read_file and path else None  # type: ignore[arg-type]
        edit, probs, n = _restore_edit(tool_input, current, ents, ctx, secret_spans, placeholders)
        new.update(edit)
        problems += probs
        restored += n
    elif tool_name == "MultiEdit":
        current = read_file(path) if read_file and path else None  # type: ignore[arg-type]
        edits = tool_input.get("edits")
        if isinstance(edits, list):
            out_edits = []
            for e in edits:
                if not isinstance(e, dict):
                    out_edits.append(e)
                    continue
                edit, probs, n = _restore_edit(e, current, ents, ctx, secret_spans, placeholders)
                merged = {**e, **edit}
                out_edits.append(merged)
                problems += probs
                restored += n
                if current is not None and isinstance(merged.get("old_string"), str):
                    current = _apply(current, merged)
            new["edits"] = out_edits
    elif tool_name == "NotebookEdit":
        src = tool_input.get("new_source")
        if isinstance(src, str):
            cctx = "plain" if tool_input.get("cell_type") == "markdown" else "code"
            put("new_source", restore_text(src, ents, context=cctx, placeholders=placeholders))
    elif tool_name == "Grep":
        for key in ("pattern", "glob", "path"):
            v = tool_input.get(key)
            if key != "path" and isinstance(v, str) and has_alias_like(v):
                # a restored name is literal text inside the agent's regular expression
                put(key, restore_text(v, ents, placeholders="keep",
                                      context="regex" if key == "pattern" else "plain"))
    else:  # Read, Glob, LS and anything else: strings as they are
        for key, v in tool_input.items():
            if key not in PATH_KEYS and isinstance(v, str) and has_alias_like(v):
                put(key, restore_text(v, ents, placeholders="keep"))
    if problems:
        return PreResult("ask" if all(p.reason != "placeholder" for p in problems) else "deny",
                         None, _reason(problems), restored, problems)
    if not restored:
        return PreResult("unchanged")
    return PreResult("update", new, "", restored)


def _reason(problems: list[Problem]) -> str:
    first = problems[0].message()
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    if any(p.reason == "placeholder" for p in problems):
        return (f"tcg: {first}{more}. Writing it would put the placeholder into the file instead of "
                "the secret; leave the line that holds the secret unchanged, or ask the user to edit it.")
    return (f"tcg: {first}{more}. Only the aliases tcg gave (exactly as written, e.g. "
            "CTXG_COMPANY_A) are turned back into real names; confirm, or rewrite with the exact alias.")


def _outbound(tool_input: dict[str, object], ents: Entities | None) -> PreResult:
    """Aliases are not restored for tools whose input leaves the machine; a real
    registered value in their input is refused."""
    if ents is None or not ents.matcher:
        return PreResult("unchanged")
    for s in strings_in(tool_input, keys=False):
        if isinstance(s, str) and ents.matcher.find_bytes(s.encode("utf-8", "surrogatepass")):
            return PreResult("deny", None, "tcg: the input names a registered business entity; "
                             "this tool sends it off the machine. Use its alias instead.")
    return PreResult("unchanged")


# ------------------------------------------------------------ Edit: the file's own bytes


@dataclass
class _Masked:
    """A file's text as the model saw it (aliases and placeholders), with a map back."""

    text: str
    spans: list[tuple[int, int, int, int, str]]  # masked start/end, raw start/end, token

    def to_raw(self, ms: int, me: int) -> tuple[int, int] | None:
        """Raw offsets of masked [ms, me), or None when a boundary cuts a token."""
        rs, re_ = self._raw(ms), self._raw(me)
        return None if rs is None or re_ is None else (rs, re_)

    def _raw(self, x: int) -> int | None:
        shift = 0
        for a, b, ra, rb, _tok in self.spans:
            if x < a:
                return x - shift
            if x == a:
                return ra
            if x < b:
                return None
            if x == b:
                return rb
            shift = b - rb
        return x - shift


def _masked_view(raw: str, ents: Entities | None, secret_spans: SecretSpans | None) -> _Masked:
    reps: list[tuple[int, int, str]] = []
    if ents is not None and ents.matcher:
        reps += [(m.start, m.end, m.token) for m in ents.matcher.find_text(raw)]
    if secret_spans is not None:
        secrets = secret_spans(raw)
        reps = [r for r in reps if not any(s < r[1] and r[0] < e for s, e, _ in secrets)] + list(secrets)
    reps.sort()
    out: list[str] = []
    spans: list[tuple[int, int, int, int, str]] = []
    pos = 0
    mpos = 0
    for s, e, tok in reps:
        if s < pos:
            continue
        out.append(raw[pos:s])
        mpos += s - pos
        spans.append((mpos, mpos + len(tok), s, e, tok))
        out.append(tok)
        mpos += len(tok)
        pos = e
    out.append(raw[pos:])
    return _Masked("".join(out), spans)


def _restore_edit(edit: dict[str, object], current: str | None, ents: Entities | None, ctx: str,
                  secret_spans: SecretSpans | None, placeholders: str
                  ) -> tuple[dict[str, object], list[Problem], int]:
    old, new = edit.get("old_string"), edit.get("new_string")
    out: dict[str, object] = {}
    problems: list[Problem] = []
    count = 0
    prefix = ""
    spell: dict[str, list[str]] = {}
    if isinstance(old, str) and has_alias_like(old):
        located = None
        if current is not None:
            mv = _masked_view(current, ents, secret_spans)
            at = mv.text.find(old)
            if at >= 0:
                located = mv.to_raw(at, at + len(old))
        if located is not None:
            rs, re_ = located
            out["old_string"] = current[rs:re_]  # type: ignore[index]
            prefix = current[:rs]  # type: ignore[index]
            for a, b, ra, rb, tok in mv.spans:
                if a >= at and b <= at + len(old):
                    spell.setdefault(tok, []).append(current[ra:rb])  # type: ignore[index]
            count += sum(len(v) for v in spell.values())
        else:
            res = restore_text(old, ents, context=ctx, placeholders="keep")
            out["old_string"] = res.text
            problems += res.problems
            count += res.count
    elif isinstance(old, str) and current is not None:
        at = current.find(old)
        prefix = current[:at] if at >= 0 else ""
    if isinstance(new, str) and has_alias_like(new):
        # the model's own placeholders copied from old_string stand for secrets
        # the file holds at the same place: still never written back
        res = restore_text(new, ents, context=ctx, prefix=prefix, placeholders=placeholders,
                           spellings={k: v for k, v in spell.items() if not PLACEHOLDER.match(k)})
        out["new_string"] = res.text
        problems += res.problems
        count += res.count
    return out, problems, count


def _apply(current: str, edit: dict[str, object]) -> str:
    old, new = edit.get("old_string"), edit.get("new_string")
    if not isinstance(old, str) or not isinstance(new, str) or not old:
        return current
    return current.replace(old, new) if edit.get("replace_all") else current.replace(old, new, 1)


def _spellings_in(old: str, content: str, ents: Entities | None, secret_spans: SecretSpans | None
                  ) -> dict[str, list[str]] | None:
    """For Write over an existing file: tokens the file spells one way only keep
    that spelling (a file that writes ПЕТРОВ keeps ПЕТРОВ)."""
    mv = _masked_view(old, ents, None)
    seen: dict[str, set[str]] = {}
    for _a, _b, ra, rb, tok in mv.spans:
        seen.setdefault(tok, set()).add(old[ra:rb])
    out = {}
    for tok, spellings in seen.items():
        if len(spellings) == 1:
            out[tok] = [next(iter(spellings))] * content.count(tok)
    return out or None
