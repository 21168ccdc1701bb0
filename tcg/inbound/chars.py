"""Character facts the inbound gate works from: invisible characters, the scripts
that are expensive to tokenize, smuggling decoders and the confusable map.

Invisible characters are listed by code point, not by Unicode category: a
category-only filter (all Cf) misses variation selectors (Mn), Hangul fillers
(Lo) and U+2800 (So), and flags the ZWJ inside emoji and the ZWNJ of Persian
text. Expensive scripts are ranges for the same reason (their letters are Lo,
So and L* alike).
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

# ---------------------------------------------------------------- invisible classes

#: class name -> inclusive code point ranges. Order matters only for the docs.
INVISIBLE: dict[str, tuple[tuple[int, int], ...]] = {
    # zero-width and other format characters (Cf) that render as nothing
    "format": ((0x00AD, 0x00AD), (0x061C, 0x061C), (0x180E, 0x180E), (0x200B, 0x200F),
               (0x2060, 0x2064), (0x206A, 0x206F), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB),
               (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A)),
    # bidirectional embeddings, overrides and isolates ("Trojan Source")
    "bidi": ((0x202A, 0x202E), (0x2066, 0x2069)),
    # Unicode tag characters: invisible ASCII twins (E0020-E007E), used to smuggle text
    "tag": ((0xE0000, 0xE007F),),
    # variation selectors (Mn): bytes can be smuggled as runs of them after an emoji
    "variation-selector": ((0xFE00, 0xFE0F), (0xE0100, 0xE01EF), (0x180B, 0x180D),
                           (0x180F, 0x180F)),
    # blank letters and symbols: Hangul fillers (Lo), the empty Braille pattern (So),
    # the combining grapheme joiner and Khmer inherent vowels (Mn)
    "blank": ((0x115F, 0x1160), (0x3164, 0x3164), (0xFFA0, 0xFFA0), (0x2800, 0x2800),
              (0x034F, 0x034F), (0x17B4, 0x17B5)),
}

ZWNJ, ZWJ, SHY, BOM = 0x200C, 0x200D, 0x00AD, 0xFEFF
LRM, RLM, ALM = 0x200E, 0x200F, 0x061C
CANCEL_TAG, BLACK_FLAG = 0xE007F, 0x1F3F4

# ---------------------------------------------------------------- expensive scripts

#: Scripts that cost several tokens per character (the wallet-drain budget).
EXPENSIVE: dict[str, tuple[int, int]] = {
    "tibetan": (0x0F00, 0x0FFF),
    "yi": (0xA000, 0xA4CF),
    "braille": (0x2800, 0x28FF),
    "math-alphanumeric": (0x1D400, 0x1D7FF),
    "linear-b": (0x10000, 0x100FF),
}


def in_ranges(cp: int, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(lo <= cp <= hi for lo, hi in ranges)


def invisible_class(cp: int) -> str | None:
    for name, ranges in INVISIBLE.items():
        if in_ranges(cp, ranges):
            return name
    return None


def class_pattern(ranges: tuple[tuple[int, int], ...] | list[tuple[int, int]]) -> str:
    """A regex character class of ``ranges`` (Python and hyperscan UTF-8 syntax)."""
    parts = []
    for lo, hi in ranges:
        parts.append(f"\\x{{{lo:x}}}" if lo == hi else f"\\x{{{lo:x}}}-\\x{{{hi:x}}}")
    return "[" + "".join(parts) + "]"


def py_class(ranges: tuple[tuple[int, int], ...] | list[tuple[int, int]]) -> str:
    """The same class in Python ``re`` syntax (which spells code points \\U0001xxxx)."""
    parts = []
    for lo, hi in ranges:
        a = f"\\U{lo:08x}"
        parts.append(a if lo == hi else f"{a}-\\U{hi:08x}")
    return "[" + "".join(parts) + "]"


ALL_INVISIBLE: tuple[tuple[int, int], ...] = tuple(r for rs in INVISIBLE.values() for r in rs)


# ---------------------------------------------------------------- allowed uses

def _emojiish(cp: int) -> bool:
    """Pictographs and the modifiers inside emoji sequences (ZWJ joins these)."""
    return (0x1F000 <= cp <= 0x1FAFF or 0x2600 <= cp <= 0x27BF or 0x2300 <= cp <= 0x23FF
            or 0x2B00 <= cp <= 0x2BFF or cp in (0xFE0F, 0x20E3, 0x00A9, 0x00AE, 0x2122)
            or 0x1F3FB <= cp <= 0x1F3FF)


def _joining_script(cp: int) -> bool:
    """Letters of scripts where ZWNJ/ZWJ shape words: Arabic script (Persian, Urdu),
    Hebrew, Syriac, and the Brahmic scripts of South and South-East Asia."""
    return (0x0590 <= cp <= 0x08FF or 0xFB1D <= cp <= 0xFDFF or 0xFE70 <= cp <= 0xFEFC
            or 0x0900 <= cp <= 0x0DFF or 0x1000 <= cp <= 0x109F or 0x1780 <= cp <= 0x17FF)


def _rtl(cp: int) -> bool:
    return 0x0590 <= cp <= 0x08FF or 0xFB1D <= cp <= 0xFDFF or 0xFE70 <= cp <= 0xFEFC


def _is_vs(cp: int) -> bool:
    return 0xFE00 <= cp <= 0xFE0F or 0xE0100 <= cp <= 0xE01EF or 0x180B <= cp <= 0x180F


def _ideograph(cp: int) -> bool:
    return (0x3400 <= cp <= 0x9FFF or 0xF900 <= cp <= 0xFAFF or 0x20000 <= cp <= 0x3FFFF)


def allowed(text: str, i: int) -> bool:
    """Whether the invisible character ``text[i]`` is an ordinary use, not counted:
    a ZWJ inside an emoji sequence, a ZWNJ/ZWJ between letters of a joining script
    (Persian, Hindi…), a soft hyphen inside a word, a leading BOM, direction marks
    next to right-to-left letters, one variation selector after its base character
    (emoji presentation, an ideographic variant), and the tags of an emoji flag
    sequence (🏴 + tags + cancel tag)."""
    cp = ord(text[i])
    prev = ord(text[i - 1]) if i > 0 else -1
    nxt = ord(text[i + 1]) if i + 1 < len(text) else -1
    if cp == ZWJ and _emojiish(prev) and _emojiish(nxt):
        return True
    if cp in (ZWNJ, ZWJ) and _joining_script(prev) and _joining_script(nxt):
        return True
    if cp == SHY:
        return text[i - 1:i].isalpha() and text[i + 1:i + 2].isalpha()
    if cp == BOM:
        return i == 0
    if cp in (LRM, RLM, ALM):
        return _rtl(prev) or _rtl(nxt)
    if _is_vs(cp):
        if _is_vs(prev) or _is_vs(nxt):
            return False  # a run of selectors: smuggled bytes
        if 0xE0100 <= cp <= 0xE01EF:
            return _ideograph(prev)
        return prev >= 0 and not _is_vs(prev)
    if 0xE0000 <= cp <= 0xE007F:
        return _in_flag_sequence(text, i)
    return False


def _in_flag_sequence(text: str, i: int) -> bool:
    """``text[i]`` is a tag of a subdivision flag: 🏴 then tags ending in U+E007F."""
    j = i
    while j > 0 and 0xE0020 <= ord(text[j - 1]) <= 0xE007E:
        j -= 1
    if j == 0 or ord(text[j - 1]) != BLACK_FLAG:
        return False
    k = i
    while k < len(text) and 0xE0020 <= ord(text[k]) <= 0xE007E:
        k += 1
    return k < len(text) and ord(text[k]) == CANCEL_TAG and k - j <= 8


# ---------------------------------------------------------------- smuggling decoders

def decode_tags(run: str) -> str:
    """Tag characters back to the ASCII they mirror (U+E0041 -> "A")."""
    return "".join(chr(ord(c) - 0xE0000) for c in run if 0xE0020 <= ord(c) <= 0xE007E)


def decode_variation_selectors(run: str) -> str:
    """A run of variation selectors back to the bytes they carry (VS1-16 are the
    bytes 0-15, VS17-256 are 16-255), read as UTF-8."""
    out = bytearray()
    for c in run:
        cp = ord(c)
        if 0xFE00 <= cp <= 0xFE0F:
            out.append(cp - 0xFE00)
        elif 0xE0100 <= cp <= 0xE01EF:
            out.append(cp - 0xE0100 + 16)
    return out.decode("utf-8", "replace")


# ---------------------------------------------------------------- confusables

#: Letters of the Russian alphabet that look like Latin ones. Text made of them is
#: ordinary Russian, so they alone do not open a skeleton window (see views.py).
NATIVE_CYRILLIC = frozenset("абвгдеёжзийклмнопрстуфхцчшщъыьэюяАБВГДЕЁЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯ"
                            "ўқғҳЎҚҒҲ")


@lru_cache(maxsize=1)
def skeleton_table() -> dict[int, str]:
    """Non-ASCII letters and digits -> the ASCII letter or digit they are confusable
    with, from the Unicode TR39 confusables data as the confusable-homoglyphs
    package ships it. Only single-character ASCII prototypes are kept: the view
    exists to read Latin-script instructions written with look-alike letters, and
    ASCII itself is left alone (TR39 would also map "I" to "l")."""
    from confusable_homoglyphs import confusables

    table: dict[int, str] = {}
    for ch, entries in confusables.confusables_data.items():
        if len(ch) != 1 or ch.isascii():
            continue
        targets = sorted({e["c"] for e in entries if len(e["c"]) == 1 and e["c"].isascii()
                          and e["c"].isalnum()},
                         key=lambda t: (not t.islower(), not t.isalpha(), t))
        if targets and unicodedata.category(ch)[0] in "LN":
            table[ord(ch)] = targets[0]
    return table


@lru_cache(maxsize=1)
def nfkc_unstable() -> list[tuple[int, int]]:
    """Ranges of the characters the nfkc view may change: those NFKC maps to
    something else, combining marks (they compose with what precedes them) and
    the whitespace NFKC keeps but the view turns into a space. Planes 3-13 and
    the private-use planes hold no such character."""
    cps = {0x85, 0x1680, 0x2028, 0x2029}
    for cp in (*range(0xA0, 0x30000), *range(0xE0000, 0xE1000)):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        c = chr(cp)
        if unicodedata.combining(c) or unicodedata.normalize("NFKC", c) != c:
            cps.add(cp)
    return ranges_of(cps)


def confusables_version() -> str:
    """Version of the confusables data (part of the engine cache key)."""
    try:
        from importlib.metadata import version

        return version("confusable-homoglyphs")
    except Exception:  # noqa: BLE001 - an unknown version only forces a rebuild
        return "unknown"


def ranges_of(cps: list[int] | set[int] | frozenset[int]) -> list[tuple[int, int]]:
    """Sorted code points as inclusive ranges."""
    out: list[tuple[int, int]] = []
    for cp in sorted(cps):
        if out and out[-1][1] == cp - 1:
            out[-1] = (out[-1][0], cp)
        else:
            out.append((cp, cp))
    return out
