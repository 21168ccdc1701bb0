"""The policy file's schema: which keys a layer may set, of what kind and type, and
the parse + validation of one layer's TOML (errors name the file, line and a hint).

The kind of a key decides how layers merge (tcg.policy.merge, docs/policy.md):
decisions, protect lists, allow lists, settings, names, arrays of tables.
"""

from __future__ import annotations

import sys

from tcg.errors import PolicyError
from tcg.policy.reasons import REASONS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Kinds of keys. A schema key is a dotted path; "*" matches one segment.
DECISION = "decision"
PROTECT_LIST = "protect-list"
ALLOW_LIST = "allow-list"
SETTING = "setting"
TABLE_LIST = "table-list"
NAME = "name"
INBOUND_ACTION = "inbound-action"  # allow < warn < block (tcg.inbound.gate)
# The inbound gate's surfaces, kinds of finding and actions (weakest first). Defined here,
# where every command's policy load validates them, so that validation imports nothing;
# tcg.inbound.policy re-exports them.
INBOUND_SURFACES = ("web", "mcp-result", "file-read", "user-prompt", "clipboard")
INBOUND_KINDS = ("injection", "invisible", "drain")
INBOUND_ACTIONS = ("allow", "warn", "block")

SCHEMA: dict[str, tuple[str, type | tuple[type, ...]]] = {
    "policy.name": (NAME, str),
    "policy.version": (NAME, int),
    "decisions.*.*": (DECISION, str),
    "secret_stores.basenames": (PROTECT_LIST, str),
    "secret_stores.segments": (PROTECT_LIST, str),
    "secret_stores.paths": (PROTECT_LIST, str),
    "secret_stores.allow_basenames": (ALLOW_LIST, str),
    "secret_stores.listing_is_read": (SETTING, bool),
    "credential_dumps": (TABLE_LIST, dict),
    "secret_vars.names": (PROTECT_LIST, str),
    "secret_vars.allow_names": (ALLOW_LIST, str),
    "guard.files": (PROTECT_LIST, str),
    "guard.env": (PROTECT_LIST, str),
    "guard.allow_env": (ALLOW_LIST, str),
    "agents.known": (PROTECT_LIST, str),
    "launch.on-findings": (DECISION, str),
    "launch.on-partial": (DECISION, str),
    "launch.on-error": (DECISION, str),
    "launch.on-unmediated": (DECISION, str),
    "mcp.protected_resources": (PROTECT_LIST, str),
    "clipboard.interval": (SETTING, (int, float)),
    "clipboard.inspect-cap": (SETTING, int),
    "mask.terminal-hold-ms": (SETTING, int),
    "session.on-station-gone-human": (DECISION, str),
    "session.on-station-gone-agent": (DECISION, str),
    "session.verdict-timeout-ms": (SETTING, int),
    "scan.max-blob-bytes": (SETTING, int),
    "scan.allow_paths": (ALLOW_LIST, str),
    "scan.categories": (PROTECT_LIST, str),
    "detect.disabled_rules": (ALLOW_LIST, str),
    "sandbox.mechanism": (SETTING, str),
    "sandbox.on-unavailable": (SETTING, str),
    "sandbox.bwrap": (SETTING, str),
    "sandbox.allow_twins": (ALLOW_LIST, str),
    "sandbox.allow_env": (ALLOW_LIST, str),
    "sandbox.skip_dirs": (ALLOW_LIST, str),
    "sandbox.roots": (PROTECT_LIST, str),
    "sandbox.max-dirs": (SETTING, int),
    "entities.placeholder-write": (SETTING, str),
    "inbound.surfaces.*.*": (INBOUND_ACTION, str),
    "inbound.ml.model": (SETTING, str),
    "inbound.ml.threshold": (SETTING, (int, float)),
    "trash.copy-budget": (SETTING, int),
    "trash.max-entries": (SETTING, int),
    "channels.decisions.*": (DECISION, str),
    "channels.categories": (PROTECT_LIST, str),
    "events.max-bytes": (SETTING, int),
    "events.keep": (SETTING, int),
    "events.on-unwritable": (SETTING, str),
}
# Settings that take one of a few words: a typo must be an error, not a silent default.
SETTING_CHOICES: dict[str, tuple[str, ...]] = {
    "sandbox.mechanism": ("auto", "namespaces", "bwrap"),
    "sandbox.on-unavailable": ("block", "warn"),
    "events.on-unwritable": ("block", "warn"),
}
# Numeric settings with bounds (inclusive; None = unbounded).
SETTING_RANGES: dict[str, tuple[int, int | None]] = {
    "events.max-bytes": (65536, None),
    "events.keep": (1, 100),
}

# Fields an entry of an array of tables may have: "str" (a string) or "strs"
# (a string or a list of strings). A typo in a rule must be an error naming the
# file and line, not a rule that silently matches nothing. Keep in step with
# tcg/policy/dumprules.py compile_dump_rules (which re-checks without line numbers).
TABLE_FIELDS: dict[str, dict[str, str]] = {
    "credential_dumps": {
        "id": "str",
        "description": "str",
        "command": "strs",
        "args": "strs",
        "flags": "strs",
        "option": "strs",
        "option_values": "strs",
        "unless_first": "strs",
    },
}
TABLE_REQUIRED: dict[str, tuple[str, ...]] = {"credential_dumps": ("command",)}

_ACTORS = ("human", "agent")
# Decisions a policy file may name. relocate/snapshot only for the codes that carry
# what to move or save (ACTION_DECISIONS).
POLICY_DECISIONS = ("allow", "sanitize", "ask", "block")
ACTION_DECISIONS = {"delete-relocate": "relocate", "overwrite-snapshot": "snapshot", "git-snapshot": "snapshot"}



# Used only to point at the line of an error: patterns, compiled (and cached by re) on use.
_HEADER = r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$"
_KEYLINE = r"^\s*((?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*'))*)\s*="


def _norm_key(raw: str) -> str:
    import re
    parts = re.findall(r"[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*'", raw)
    return ".".join(p.strip("\"'") for p in parts)


def _line_of(text: str, key: str) -> int | None:
    """Best-effort line number of the dotted ``key`` in TOML text.

    Tracks ``[table]`` headers so ``decisions.human.x`` is not reported at the
    line of ``decisions.agent.x``; falls back to the last segment for inline tables.
    """
    import re
    table = ""
    for lineno, line in enumerate(text.splitlines(), start=1):
        m = re.match(_HEADER, line)
        if m:
            table = _norm_key(m.group(1))
            if table == key:
                return lineno
            continue
        m = re.match(_KEYLINE, line)
        if m:
            full = f"{table}.{_norm_key(m.group(1))}" if table else _norm_key(m.group(1))
            if full == key or key.startswith(full + "."):
                return lineno
    last = key.split(".")[-1]
    m = re.search(r"^\s*([\"']?)" + re.escape(last) + r"\1\s*=", text, re.M)
    if m:
        return text.count("\n", 0, m.start()) + 1
    return None


def _validate_entries(table: str, entries: list[dict[str, Any]], path: str, text: str) -> None:
    """Each ``[[table]]`` entry: a kebab-case id, and only known fields of the right type."""
    import re
    fields = TABLE_FIELDS.get(table)
    for index, entry in enumerate(entries):

        def bad(field: str, message: str, hint: str, index: int = index) -> PolicyError:
            line = _entry_line(text, table, index, field) if text else None
            return PolicyError(message, hint=hint, path=path, line=line)

        ident = entry.get("id")
        if not isinstance(ident, str) or not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", ident):
            raise bad("id", f"every [[{table}]] entry needs a kebab-case id", 'add id = "my-rule"')
        if fields is None:
            continue
        where = f"in [[{table}]] {ident!r}"
        for name in TABLE_REQUIRED.get(table, ()):
            if not entry.get(name):
                raise bad("id", f"{name} is missing {where}", f'add {name} = ["…"]')
        for name, value in entry.items():
            kind = fields.get(name)
            if kind is None:
                raise bad(name, f"unknown field {name!r} {where}", "fields are: " + ", ".join(fields))
            if kind == "strs":
                if not (isinstance(value, str) or (
                    isinstance(value, list) and all(isinstance(v, str) for v in value)
                )):
                    raise bad(name, f"{name} {where} must be a string or a list of strings",
                              f'write it as {name} = ["a", "b"]')
            elif not isinstance(value, str):
                raise bad(name, f"{name} {where} must be a string", f'write it as {name} = "…"')


def _entry_line(text: str, table: str, index: int, field: str | None) -> int | None:
    """Line of ``field`` in the ``index``-th ``[[table]]`` entry (or of its header)."""
    import re
    seen = -1
    header: int | None = None
    for lineno, line in enumerate(text.splitlines(), start=1):
        m = re.match(_HEADER, line)
        if m:
            if header is not None:
                break  # left the entry without finding the field
            if line.lstrip().startswith("[[") and _norm_key(m.group(1)) == table:
                seen += 1
                if seen == index:
                    header = lineno
            continue
        if header is not None and field:
            km = re.match(_KEYLINE, line)
            if km and _norm_key(km.group(1)) == field:
                return lineno
    return header if header is not None else _line_of(text, table)


def parse_toml(text: str, path: str) -> dict[str, Any]:
    import re
    if sys.version_info >= (3, 11):  # imported here: a policy snapshot hit never parses TOML
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        line: int | None = getattr(exc, "lineno", None)  # tomli >= 2.1 and Python 3.14+ have it
        m = re.search(r"line (\d+)", msg)
        if line is None and m:
            line = int(m.group(1))
        last = max(1, len(text.splitlines()))
        if (line is None and "end of document" in msg) or (line is not None and line > last):
            line = last  # "end of document" is the last line, not the empty one after it
        raise PolicyError(
            f"invalid TOML: {msg}",
            hint="fix the syntax at that line (TOML reference: https://toml.io)",
            path=path,
            line=line,
        ) from None


def _schema_kind(dotted: str) -> tuple[str, type | tuple[type, ...]] | None:
    if dotted in SCHEMA:
        return SCHEMA[dotted]
    parts = dotted.split(".")
    for pattern, kind in SCHEMA.items():
        pp = pattern.split(".")
        if len(pp) == len(parts) and all(a == "*" or a == b for a, b in zip(pp, parts, strict=False)):
            return kind
    return None


def _is_prefix(dotted: str) -> bool:
    """True when ``dotted`` is a table that contains schema keys."""
    parts = dotted.split(".")
    for pattern in SCHEMA:
        pp = pattern.split(".")
        if len(pp) > len(parts) and all(a == "*" or a == b for a, b in zip(pp, parts, strict=False)):
            return True
    return False


def validate(data: dict[str, Any], path: str, text: str = "") -> None:
    """Raise PolicyError naming file, line and a hint for the first problem found."""

    def fail(key: str, message: str, hint: str) -> None:
        raise PolicyError(message, hint=hint, path=path, line=_line_of(text, key) if text else None)

    def walk(node: dict[str, Any], prefix: str) -> None:
        for key, value in node.items():
            dotted = f"{prefix}.{key}" if prefix else key
            kind = _schema_kind(dotted)
            if kind is None:
                if isinstance(value, dict) and _is_prefix(dotted):
                    walk(value, dotted)
                    continue
                fail(dotted, f"unknown key {dotted!r}", "see docs/policy.md for the keys a policy may set")
                return
            k, typ = kind
            if k == DECISION:
                if dotted.startswith("decisions."):
                    _, actor, code = dotted.split(".")
                    if actor not in _ACTORS:
                        fail(dotted, f"unknown actor in {dotted!r}", "actors are: human, agent")
                    if code not in REASONS:
                        fail(
                            dotted,
                            f"unknown reason code {code!r} in {dotted!r}",
                            "the codes are listed in docs/reason-codes.md",
                        )
                code = dotted.rsplit(".", 1)[-1] if dotted.startswith("decisions.") else ""
                allowed = POLICY_DECISIONS + ((ACTION_DECISIONS[code],) if code in ACTION_DECISIONS else ())
                if not isinstance(value, str) or value.lower() not in allowed:
                    fail(
                        dotted,
                        f"{dotted} = {value!r} is not a decision",
                        "use one of: " + ", ".join(allowed),
                    )
            elif k in (PROTECT_LIST, ALLOW_LIST):
                if not isinstance(value, list) or not all(isinstance(v, typ) for v in value):
                    fail(dotted, f"{dotted} must be a list of strings", 'write it as ["a", "b"]')
            elif k == INBOUND_ACTION:
                _, _, surface, inbound_kind = dotted.split(".")
                if surface not in INBOUND_SURFACES or inbound_kind not in INBOUND_KINDS:
                    fail(dotted, f"unknown inbound surface or kind in {dotted!r}",
                         f"surfaces: {', '.join(INBOUND_SURFACES)}; kinds: {', '.join(INBOUND_KINDS)}")
                if not isinstance(value, str) or value.lower() not in INBOUND_ACTIONS:
                    fail(dotted, f"{dotted} = {value!r} is not an inbound action",
                         "use one of: " + ", ".join(INBOUND_ACTIONS))
            elif k == TABLE_LIST:
                if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
                    fail(dotted, f"{dotted} must be an array of tables", f"write entries as [[{dotted}]]")
                _validate_entries(dotted, value, path, text)
            else:
                if isinstance(value, bool) and typ is not bool:
                    fail(dotted, f"{dotted} has the wrong type", "see docs/policy.md")
                if not isinstance(value, typ):
                    fail(dotted, f"{dotted} has the wrong type ({type(value).__name__})", "see docs/policy.md")
                bounds = SETTING_RANGES.get(dotted)
                if bounds and (value < bounds[0] or (bounds[1] is not None and value > bounds[1])):
                    fail(dotted, f"{dotted} = {value!r} is out of range",
                         f"use a value from {bounds[0]}" + (f" to {bounds[1]}" if bounds[1] else " up"))
                choices = SETTING_CHOICES.get(dotted)
                if choices and value not in choices:
                    fail(dotted, f"{dotted} = {value!r} is not one of: {', '.join(choices)}",
                         f'write it as {dotted.rsplit(".", 1)[1]} = "{choices[0]}"')

    walk(data, "")

