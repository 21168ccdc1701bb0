"""Per-shell escapers for every value the generator inserts into a hook.

The rules per shell are listed in docs/shells.md ("Every inserted value is
escaped"); the round-trip vectors live in tests/shells/test_generator.py. Each
function either returns text that the target shell reads back as exactly the
input, or raises QuotingError — never a best effort.
"""

from __future__ import annotations

import re

from tcg.errors import TcgError

# PowerShell treats all five as single quotes (CharTraits.cs IsSingleQuote);
# EscapeSingleQuotedStringContent doubles each one in place.
PS_SINGLE_QUOTES = "'\u2018\u2019\u201a\u201b"
_PS_QUOTE_RE = re.compile("[" + PS_SINGLE_QUOTES + "]")

# cmd.exe has no general escape at the prompt: data containing these is refused.
CMD_FORBIDDEN = set('%!^&|<>"()')
_CMD_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]+$")


class QuotingError(TcgError):
    """A value cannot be represented safely in the target shell."""


def _no_nul(value: str) -> None:
    if "\x00" in value:
        raise QuotingError(
            "value contains a NUL byte, which no shell variable or argv can hold",
            hint="remove the NUL from the path or setting",
        )


def posix_quote(value: str) -> str:
    """bash/zsh/dash: one single-quoted word; ``'`` becomes ``'\\''``.

    Unlike shlex.quote, every value is quoted (also ``-rf``), so the output is
    one shape that tests can reason about; bytes pass through unchanged.
    """
    _no_nul(value)
    return "'" + value.replace("'", "'\\''") + "'"


def powershell_quote(value: str) -> str:
    """PowerShell verbatim string with all five single-quote characters doubled."""
    _no_nul(value)
    return "'" + _PS_QUOTE_RE.sub(lambda m: m.group(0) * 2, value) + "'"


def cmd_check(value: str, *, what: str = "value") -> str:
    """Return ``value`` if cmd.exe can carry it inside ``"…"`` verbatim, else raise."""
    _no_nul(value)
    bad = sorted({c for c in value if c in CMD_FORBIDDEN or ord(c) < 0x20 or ord(c) == 0x7F})
    if bad:
        shown = " ".join(repr(c) for c in bad)
        raise QuotingError(
            f"{what} contains characters cmd.exe cannot carry safely: {shown}",
            hint="install tcg under a path without % ! ^ & | < > \" ( ) or control characters",
        )
    if value.endswith("\\"):
        raise QuotingError(
            f"{what} ends with a backslash, which would escape the closing quote in cmd.exe",
            hint="remove the trailing backslash",
        )
    return value


def cmd_quote(value: str, *, what: str = "value") -> str:
    """A path for a DOSKEY macro body: ``"…"`` after cmd_check; ``$`` doubled for DOSKEY."""
    return '"' + cmd_check(value, what=what).replace("$", "$$") + '"'


def cmd_name(value: str) -> str:
    """A DOSKEY macro name: letters, digits, ``_ . -`` only."""
    if not _CMD_NAME_RE.match(value):
        raise QuotingError(
            f"macro name {value!r} is not a plain word",
            hint="agent and reader names must match [A-Za-z0-9_.-]+",
        )
    return value
