"""macOS: a Seatbelt profile that denies reading secret stores, for ``sandbox-exec``.

Seatbelt matches paths by regular expression, so the policy's patterns are used as
they are — no walk of the disk is needed. The profile allows everything (tcg adds
a view, not a jail) and then denies reading and writing the *contents* of secret
stores (``file-read-data``, ``file-write*``); names and metadata stay visible, so
``ls -la ~/.ssh`` works. The policy's exceptions (``allow_basenames``: ``*.pub``,
``.env.example`` …) are allowed again after the denials: in a Seatbelt profile the
last matching rule wins. There are no masked twins on macOS: a store's read fails
with "Operation not permitted".

APFS is case-insensitive by default (``cat .ENV`` opens ``.env``), so every letter
becomes a ``[xX]`` class. This cannot run on the Linux CI; tests check the
generated text exactly.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

SANDBOX_EXEC = "/usr/bin/sandbox-exec"
_SPECIAL = set(".^$+(){}|\\")


def _letters(text: str) -> str:
    out = []
    for ch in text:
        if ch.isalpha():
            out.append(f"[{ch.lower()}{ch.upper()}]")
        elif ch in _SPECIAL:
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def glob_to_regex(glob: str, *, crosses_slash: bool) -> str:
    """An fnmatch glob as a case-insensitive POSIX ERE fragment (no anchors).
    ``*`` stays within one path component unless ``crosses_slash`` (policy paths)."""
    out: list[str] = []
    i = 0
    star = ".*" if crosses_slash else "[^/]*"
    while i < len(glob):
        ch = glob[i]
        if ch == "*":
            out.append(star)
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            end = glob.find("]", i + 1)
            if end == -1:
                out.append("\\[")
            else:
                body = glob[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        else:
            out.append(_letters(ch))
        i += 1
    return "".join(out)


def _quote(regex: str) -> str:
    """A regex as an SBPL ``#"…"`` literal (only ``"`` needs escaping there)."""
    return '#"' + regex.replace('"', '\\"') + '"'


def _string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def build_profile(basenames: Iterable[str], segments: Iterable[str], paths: Iterable[str],
                  allow_basenames: Iterable[str], literals: Iterable[str], home: str | None) -> str:
    """The profile text. ``paths`` may start with ``~`` (expanded with ``home``)."""
    deny: list[str] = []
    for name in basenames:
        deny.append(f"(regex {_quote('(^|/)' + glob_to_regex(name, crosses_slash=False) + '$')})")
    for seg in segments:
        deny.append(f"(regex {_quote('(^|/)' + glob_to_regex(seg, crosses_slash=False) + '/')})")
    for pattern in paths:
        if home and (pattern == "~" or pattern.startswith("~/")):
            pattern = home + pattern[1:]
        if any(c in pattern for c in "*?["):
            deny.append(f"(regex {_quote('^' + glob_to_regex(pattern, crosses_slash=True) + '$')})")
        else:
            deny.append(f"(literal {_string(pattern)})")
    for literal in literals:
        deny.append(f"(literal {_string(literal)})")
    allow = [f"(regex {_quote('(^|/)' + glob_to_regex(n, crosses_slash=False) + '$')})" for n in allow_basenames]
    lines = [
        "(version 1)",
        ";; tcg: the agent's view. Everything is allowed except the contents of secret stores.",
        "(allow default)",
    ]
    if deny:
        lines.append("(deny file-read-data file-write*")
        lines += [f"  {d}" for d in deny]
        lines[-1] += ")"
    if allow and deny:
        lines.append(";; exceptions (templates, public keys): the last matching rule wins")
        lines.append("(allow file-read-data file-write*")
        lines += [f"  {a}" for a in allow]
        lines[-1] += ")"
    return "\n".join(lines) + "\n"


def profile_for(policy: Any, home: str | None, key_file: str) -> str:
    """The profile for the effective policy (plus tcg's own key file)."""
    stores = policy.model.secret_stores  # the patterns match either case (glob_to_regex)
    return build_profile(stores.basenames, stores.segments, stores.paths, stores.allow_basenames, [key_file], home)


def wrap_argv(profile: str) -> Callable[[list[str]], list[str]]:
    """argv → ``sandbox-exec -p PROFILE argv…``."""

    def wrap(argv: list[str]) -> list[str]:
        return [SANDBOX_EXEC, "-p", profile, *argv]

    return wrap
