"""How a restored value is written where an alias stood: escaping by context.

The alias is plain ASCII and safe anywhere; the real value may hold quotes,
backslashes, ``$`` or a newline. Its place is read from the text before it
(and the rest of its line): inside a JSON string, a YAML scalar, a shell word
(unquoted, '…', "…", $'…'), a quoted string literal in code, or plain text. A
value that cannot be written safely at its place gives None: the caller asks
instead of guessing.
"""

from __future__ import annotations

import json
import os
import re

CONTEXTS = ("plain", "json", "yaml", "shell", "code", "regex")
_EXT = {
    ".json": "json", ".jsonc": "json", ".json5": "json", ".ipynb": "json", ".jsonl": "json",
    ".yaml": "yaml", ".yml": "yaml",
    ".sh": "shell", ".bash": "shell", ".zsh": "shell", ".ksh": "shell", ".env": "shell",
    ".py": "code", ".js": "code", ".mjs": "code", ".cjs": "code", ".ts": "code", ".tsx": "code",
    ".jsx": "code", ".go": "code", ".java": "code", ".kt": "code", ".c": "code", ".h": "code",
    ".cc": "code", ".cpp": "code", ".hpp": "code", ".cs": "code", ".rs": "code", ".rb": "code",
    ".php": "code", ".swift": "code", ".scala": "code", ".toml": "code",
}


def context_for_path(path: str | None) -> str:
    """The escaping context of a file, by its name."""
    if not path:
        return "plain"
    name = os.path.basename(path).lower()
    if name.startswith(".env"):
        return "shell"
    return _EXT.get(os.path.splitext(name)[1], "plain")


def escape_for(context: str, before: str, value: str, after: str = "") -> str | None:
    """``value`` as it must be written at the end of ``before`` (None: not safely)."""
    if context == "json":
        return _json(before, value)
    if context == "yaml":
        return _yaml(before, value, after)
    if context == "shell":
        return _shell(before, value)
    if context == "code":
        return _code(before, value)
    if context == "regex":
        return re.escape(value)
    return value


# ------------------------------------------------------------ JSON


def _json_in_string(before: str) -> bool:
    inside = False
    i, n = 0, len(before)
    while i < n:
        c = before[i]
        if inside and c == "\\":
            i += 2
            continue
        if c == '"':
            inside = not inside
        i += 1
    return inside


def _json(before: str, value: str) -> str:
    if _json_in_string(before):
        return json.dumps(value, ensure_ascii=False)[1:-1]
    return value


# ------------------------------------------------------------ YAML

_YAML_PLAIN_BAD_START = set("-?:,[]{}#&*!|>'\"%@`")


def _yaml_quote_state(line: str) -> str:
    """'' (plain), '"' or "'" at the end of ``line`` (one line of YAML)."""
    state = ""
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if state == '"':
            if c == "\\":
                i += 2
                continue
            if c == '"':
                state = ""
        elif state == "'":
            if c == "'":
                if line[i + 1 : i + 2] == "'":
                    i += 2
                    continue
                state = ""
        elif c in "\"'" and (i == 0 or line[i - 1] in " \t:[{,-"):
            state = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            return "#"
        i += 1
    return state


def _yaml_plain_ok(value: str) -> bool:
    return bool(value) and "\n" not in value and value == value.strip() \
        and value[0] not in _YAML_PLAIN_BAD_START and ": " not in value and " #" not in value \
        and not value.endswith(":")


def _yaml(before: str, value: str, after: str) -> str | None:
    line = before.rsplit("\n", 1)[-1]
    state = _yaml_quote_state(line)
    if state == '"':
        return json.dumps(value, ensure_ascii=False)[1:-1]
    if state == "'":
        return None if "\n" in value else value.replace("'", "''")
    if state == "#":
        return value.replace("\n", " ")
    if _yaml_plain_ok(value):
        return value
    rest = after.split("\n", 1)[0]
    whole = re.search(r"(^|:\s|-\s)\s*$", line) and re.match(r"\s*(#.*)?$", rest)
    return json.dumps(value, ensure_ascii=False) if whole else None


# ------------------------------------------------------------ shell


def shell_state(before: str) -> str:
    """The quoting at the end of ``before``: N (unquoted), S ('…'), D ("…"), A ($'…')."""
    state = "N"
    i, n = 0, len(before)
    while i < n:
        c = before[i]
        if state == "N":
            if c == "\\":
                i += 2
                continue
            if c == "'":
                state = "S"
            elif c == '"':
                state = "D"
            elif c == "$" and before[i + 1 : i + 2] == "'":
                state = "A"
                i += 1
        elif state == "S":
            if c == "'":
                state = "N"
        elif state == "D":
            if c == "\\":
                i += 2
                continue
            if c == '"':
                state = "N"
        elif state == "A":
            if c == "\\":
                i += 2
                continue
            if c == "'":
                state = "N"
        i += 1
    return state


_SHELL_SAFE = re.compile(r"[\w@%+=:,./-]+\Z")


def _shell(before: str, value: str) -> str:
    state = shell_state(before)
    if state == "S":
        return value.replace("'", "'\\''")
    if state == "D":
        return re.sub(r'([\\"$`])', r"\\\1", value)
    if state == "A":
        return value.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n")
    if _SHELL_SAFE.match(value):
        return value
    return "'" + value.replace("'", "'\\''") + "'"


# ------------------------------------------------------------ code


def _code_state(line: str) -> str:
    state = ""
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if state:
            if c == "\\":
                i += 2
                continue
            if c == state:
                state = ""
        elif c in "\"'`":
            state = c
        i += 1
    return state


def _code(before: str, value: str) -> str:
    q = _code_state(before.rsplit("\n", 1)[-1])
    if not q:
        return value
    out = value.replace("\\", "\\\\").replace(q, "\\" + q).replace("\n", "\\n")
    if q == "`":
        out = out.replace("${", "\\${")
    return out
