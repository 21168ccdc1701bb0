"""``fnmatch.fnmatchcase`` without ``re`` for the patterns policies use.

fnmatch translates every pattern to a regular expression, and importing ``re``
(with enum, functools and collections behind it) costs ~6 ms: more than a third
of what a mediated command may add. Policy patterns are almost all ``*`` and
``?`` globs (``.env.*``, ``*_TOKEN``, ``id_rsa*``), which match with plain string
operations; a pattern with a ``[…]`` class still goes to fnmatch. The result is
identical to ``fnmatch.fnmatchcase`` for every name and pattern
(tests/policy/test_glob.py checks it with hypothesis).
"""

from __future__ import annotations

__all__ = ["fnmatchcase"]


def fnmatchcase(name: str, pattern: str) -> bool:
    """True when ``name`` matches the shell-style ``pattern`` (case-sensitive;
    ``*`` and ``?`` match any character, ``/`` and newlines included)."""
    if "[" in pattern:
        import fnmatch

        return fnmatch.fnmatchcase(name, pattern)
    if "*" not in pattern:
        return len(name) == len(pattern) and _at(name, 0, pattern)
    parts = pattern.split("*")
    first, last = parts[0], parts[-1]
    end = len(name) - len(last)
    if end < len(first) or not _at(name, 0, first) or not _at(name, end, last):
        return False
    pos = len(first)
    for seg in parts[1:-1]:  # leftmost placement of each middle part is always safe
        if seg:
            i = _find(name, seg, pos, end)
            if i < 0:
                return False
            pos = i + len(seg)
    return True


def _at(name: str, i: int, seg: str) -> bool:
    """``seg`` (``?`` = any one character) matches ``name`` at offset ``i``."""
    if "?" not in seg:
        return name.startswith(seg, i) and i + len(seg) <= len(name)
    if i + len(seg) > len(name):
        return False
    return all(c == "?" or name[i + k] == c for k, c in enumerate(seg))


def _find(name: str, seg: str, start: int, end: int) -> int:
    """Leftmost offset >= start where ``seg`` matches and ends by ``end``; -1 if none."""
    if "?" not in seg:
        return name.find(seg, start, end)
    for i in range(start, end - len(seg) + 1):
        if _at(name, i, seg):
            return i
    return -1
