"""Homoglyph and width folding for rules with ``fold = true``.

The fold is a one-to-one character map (so str offsets in the folded text are
offsets in the original): NFKC for every character whose NFKC form is a single
ASCII character (full-width forms, mathematical alphanumerics, circled and
super/subscript digits...), plus a confusables map of Cyrillic and Greek
letters that look like Latin ones. Folding is applied only near a "trigger"
(a width/compatibility character, or a confusable letter touching an ASCII
letter or digit), so ordinary Russian or Greek prose costs one regex pass.
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


@lru_cache(maxsize=1)
def fold_table() -> dict[int, str]:
    """The code point -> ASCII character map used by str.translate (built once)."""
    table: dict[int, str] = {}
    for cp in range(0xA0, 0x20000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        ch = chr(cp)
        nf = unicodedata.normalize("NFKC", ch)
        if len(nf) == 1 and nf.isascii() and nf.isprintable() and nf != " ":
            table[cp] = nf
    for k, v in CONFUSABLES.items():
        table[ord(k)] = v
    return table


def _cls(chars: list[str]) -> str:
    return "".join(re.escape(c) for c in sorted(set(chars)))


@lru_cache(maxsize=1)
def trigger_regex() -> re.Pattern[str]:
    """Where folding can matter: a width/compat character, or a confusable next to ASCII alnum."""
    table = fold_table()
    compat = [chr(cp) for cp in table if chr(cp) not in CONFUSABLES]
    conf = _cls(list(CONFUSABLES))
    return re.compile(f"[{_cls(compat)}]|[A-Za-z0-9][{conf}]|[{conf}][A-Za-z0-9]")


def fold(text: str) -> str:
    """Fold ``text`` (same length, same offsets)."""
    return text.translate(fold_table())


def fold_regions(text: str, radius: int) -> list[tuple[int, int]]:
    """Merged [start, end) regions within ``radius`` chars of a fold trigger."""
    regions: list[tuple[int, int]] = []
    n = len(text)
    for m in trigger_regex().finditer(text):
        lo, hi = max(0, m.start() - radius), min(n, m.end() + radius)
        if regions and lo <= regions[-1][1]:
            regions[-1] = (regions[-1][0], max(regions[-1][1], hi))
        else:
            regions.append((lo, hi))
    return regions
