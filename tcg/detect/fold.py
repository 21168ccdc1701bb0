"""Homoglyph and width folding for rules with ``fold = true``.

The fold is a one-to-one character map (so str offsets in the folded text are
offsets in the original): NFKC for every character whose NFKC form is a single
ASCII character (full-width forms, mathematical alphanumerics, circled and
super/subscript digits...), plus a confusables map of Cyrillic and Greek
letters that look like Latin ones. The engine folds only the regions around
non-ASCII 4 KB blocks (tcg.detect.engine.Detector._scan_folded).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# Cyrillic and Greek letters that render like Latin letters or digits.
CONFUSABLES: dict[str, str] = {
    # Cyrillic capitals
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P",
    "С": "C", "Т": "T", "Х": "X", "У": "Y", "Ѕ": "S", "І": "I", "Ј": "J", "Ԛ": "Q", "Ԝ": "W",
    "З": "3", "Ү": "Y",
    # Cyrillic small
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "ѕ": "s",
    "і": "i", "ј": "j", "һ": "h", "ԁ": "d", "ԛ": "q", "ԝ": "w", "к": "k",
    # Greek capitals
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M",
    "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
    # Greek small
    "ο": "o", "ν": "v", "ι": "i", "κ": "k", "ρ": "p", "τ": "t", "υ": "u", "χ": "x",
}


# The 256-code-point blocks that hold characters whose NFKC form is one ASCII
# character (measured over U+00A0..U+1FFFF); scanning only these keeps the
# one-time table build at a few ms instead of ~200 ms.
_NFKC_BLOCKS = tuple((b, b + 0x100) for b in (
    0x0000, 0x0100, 0x0200, 0x0300, 0x0400, 0x0500, 0x1D00, 0x1F00, 0x2000, 0x2100, 0x2400,
    0x2C00, 0xA700, 0xFB00, 0xFE00, 0xFF00, 0x10700, 0x1D400, 0x1D500, 0x1D600, 0x1D700,
    0x1F100, 0x1FB00,
))


@lru_cache(maxsize=1)
def fold_table() -> dict[int, str]:
    """The code point -> ASCII character map used by str.translate (built once)."""
    table: dict[int, str] = {}
    for cp in (c for lo, hi in _NFKC_BLOCKS for c in range(max(lo, 0xA0), hi)):
        ch = chr(cp)
        nf = unicodedata.normalize("NFKC", ch)
        if len(nf) == 1 and nf.isascii() and nf.isprintable() and nf != " ":
            table[cp] = nf
    for k, v in CONFUSABLES.items():
        table[ord(k)] = v
    return table


@lru_cache(maxsize=1)
def foldable() -> re.Pattern[str]:
    """Matches any character fold() changes: text without one folds to itself,
    and the search is much cheaper than translating (a dict lookup per character)."""
    cps = sorted(fold_table())
    ranges: list[tuple[int, int]] = []
    for cp in cps:
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1] = (ranges[-1][0], cp)
        else:
            ranges.append((cp, cp))
    body = "".join(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
                   for a, b in ranges)
    return re.compile(f"[{body}]")


def fold(text: str) -> str:
    """Fold ``text`` (same length, same offsets)."""
    return text.translate(fold_table())


def keyword_precheck(keywords: list[str]) -> re.Pattern[str] | None:
    """A regex over ORIGINAL text that matches wherever one of ``keywords`` (lowercase)
    would occur, case-insensitively, in the folded text. None = cannot tell (no keywords).

    Lets the engine skip folding a region of, say, Russian prose that cannot hold a
    fold rule's keyword: each keyword character becomes the class of every character
    that folds (and ASCII-lowercases) to it.
    """
    if not keywords:
        return None
    table = fold_table()
    pre: dict[str, set[str]] = {}
    for cp, ascii_ch in table.items():
        pre.setdefault(ascii_ch.lower(), set()).add(chr(cp))
    trie: dict = {}
    for kw in keywords:
        node = trie
        for ch in kw:
            node = node.setdefault(ch, {})
        node[""] = {}

    def cls(ch: str) -> str:
        chars = set() if ord(ch) in table else {ch, ch.upper()}
        chars |= pre.get(ch, set())
        return "[" + "".join(re.escape(c) for c in sorted(chars)) + "]" if chars else ""

    def build(node: dict) -> str | None:
        """Shared prefixes factored out: Python's re tries alternatives one by one."""
        if "" in node:
            return ""  # a keyword ends here: the shorter match is enough
        alts = []
        for ch, child in sorted(node.items()):
            head, tail = cls(ch), build(child)
            if head and tail is not None:
                alts.append(head + tail)
        if not alts:
            return None
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    body = build(trie)
    return re.compile(body if body else r"(?!x)x")


def keyword_precheck_bytes(keyword: str) -> bytes | None:
    """The same test as :func:`keyword_precheck` for one keyword, as a hyperscan
    expression over UTF-8 bytes (every preimage character spelled as its bytes).
    None when folding can never produce the keyword."""
    table = fold_table()
    parts = []
    for ch in keyword:
        chars = set() if ord(ch) in table else {ch, ch.upper()}
        chars |= {chr(cp) for cp, a in table.items() if a.lower() == ch}
        if not chars:
            return None
        alts = sorted("".join(f"\\x{b:02x}" for b in c.encode("utf-8")) for c in chars)
        parts.append("(?:" + "|".join(alts) + ")")
    return "".join(parts).encode("ascii")
