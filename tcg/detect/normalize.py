"""Normalise obfuscated request text before matching (used by the MCP proxy).

A pure function, never applied silently inside ``Detector.find``: the caller
decides to match on the normalised form (e.g. a path argument that spells
``.env`` as ``%2e%65nv`` or ``\\u002eenv``). Offsets of the result do NOT map
back to the input; use it for decisions, not for masking.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

MAX_ROUNDS = 3
_JSON_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|\\x([0-9a-fA-F]{2})|\\([\"/\\bfnrt])")
_SIMPLE = {'"': '"', "/": "/", "\\": "\\", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _json_unescape(s: str) -> str:
    def sub(m: re.Match[str]) -> str:
        if m.group(1):
            return chr(int(m.group(1), 16))
        if m.group(2):
            return chr(int(m.group(2), 16))
        return _SIMPLE[m.group(3)]

    return _JSON_ESCAPE.sub(sub, s)


def normalize_for_match(s: str) -> str:
    """Undo percent-encoding and JSON/JS escapes (up to MAX_ROUNDS nested rounds),
    then turn backslashes into slashes (Windows-style or escaped path separators)."""
    for _ in range(MAX_ROUNDS):
        decoded = _json_unescape(unquote(s, errors="surrogateescape"))
        if decoded == s:
            break
        s = decoded
    return s.replace("\\", "/")
