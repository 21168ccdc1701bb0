"""``[[credential_dumps]]`` rules: compiled from the policy at load, matched against
a command's arguments by the policy engine (fields documented in docs/policy.md)."""

from __future__ import annotations

from tcg.errors import PolicyError
from tcg.policy.glob import fnmatchcase
from tcg.record import Record

TYPE_CHECKING = False  # typing costs import time on every mediated command
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from tcg.policy.cmdline import Word


class DumpRule(Record, fields="id commands args flags option option_values unless_first description",
               defaults=((), (), (), (), (), "")):
    """One ``[[credential_dumps]]`` entry (fields documented in docs/policy.md)."""

    __slots__ = ()
    id: str
    commands: tuple[str, ...]
    args: tuple[str, ...]
    flags: tuple[str, ...]
    option: tuple[str, ...]
    option_values: tuple[str, ...]
    unless_first: tuple[str, ...]
    description: str


_DUMP_FIELDS = {"id", "command", "args", "flags", "option", "option_values", "unless_first", "description"}


def _str_list(entry: dict[str, Any], key: str, rule_id: str) -> tuple[str, ...]:
    value = entry.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise PolicyError(
            f"[[credential_dumps]] {rule_id!r}: {key} must be a string or a list of strings",
            hint=f'write it as {key} = ["a", "b"]',
        )
    return tuple(value)


def compile_dump_rules(entries: Iterable[dict[str, Any]]) -> tuple[DumpRule, ...]:
    rules: list[DumpRule] = []
    for entry in entries:
        rid = str(entry.get("id", "?"))
        unknown = set(entry) - _DUMP_FIELDS
        if unknown:
            raise PolicyError(
                f"[[credential_dumps]] {rid!r}: unknown field {sorted(unknown)[0]!r}",
                hint="fields are: " + ", ".join(sorted(_DUMP_FIELDS)),
            )
        commands = _str_list(entry, "command", rid)
        if not commands:
            raise PolicyError(f"[[credential_dumps]] {rid!r} needs a command", hint='add command = ["tool"]')
        rules.append(
            DumpRule(
                id=rid,
                commands=commands,
                args=_str_list(entry, "args", rid),
                flags=_str_list(entry, "flags", rid),
                option=_str_list(entry, "option", rid),
                option_values=_str_list(entry, "option_values", rid),
                unless_first=_str_list(entry, "unless_first", rid),
                description=str(entry.get("description", "")),
            )
        )
    return tuple(rules)


def dump_matches(rule: DumpRule, args: tuple[Word, ...]) -> bool:
    vals = [w.value for w in args]
    positional = [v for v in vals if not v.startswith("-")]
    if rule.unless_first:
        if not positional or positional[0] in rule.unless_first:
            return False
    if rule.args:
        it = iter(v.lower() for v in positional)
        for want in rule.args:
            if not any(_glob(v, want.lower()) for v in it):
                return False
    if rule.flags and not any(_has_flag(vals, f) for f in rule.flags):
        return False
    if rule.option:
        found = False
        for i, v in enumerate(vals):
            for opt in rule.option:
                value: str | None = None
                if v == opt and i + 1 < len(vals):
                    value = vals[i + 1]
                elif v.startswith(opt + "="):
                    value = v[len(opt) + 1 :]
                elif len(opt) == 2 and v.startswith(opt) and len(v) > 2 and not opt.startswith("--"):
                    value = v[2:].lstrip("=")
                if value is not None and (
                    not rule.option_values
                    or any(fnmatchcase(value.lower(), p.lower()) for p in rule.option_values)
                ):
                    found = True
        if not found:
            return False
    return True


def _glob(value: str, pattern: str) -> bool:
    """fnmatch plus one level of ``{a,b}`` alternatives (policy data uses them): the
    first ``{…}`` group that holds no other brace is expanded."""
    close = pattern.find("}")
    while close >= 0:
        open_ = pattern.rfind("{", 0, close)
        if open_ >= 0:
            return any(
                fnmatchcase(value, pattern[:open_] + alt + pattern[close + 1 :])
                for alt in pattern[open_ + 1 : close].split(",")
            )
        close = pattern.find("}", close + 1)
    return fnmatchcase(value, pattern)


def _has_flag(vals: list[str], flag: str) -> bool:
    for v in vals:
        if v == flag or v.startswith(flag + "="):
            return True
        if len(flag) == 2 and flag[0] == "-" and flag[1] != "-" and v.startswith("-") and not v.startswith("--"):
            if flag[1] in v[1:] and v[1:].isalpha():
                return True
    return False
