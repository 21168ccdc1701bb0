"""The normalised view entity forms are matched on, with offsets back to the raw text.

One character at a time, every character gets a *skeleton*:
- invisible characters (zero-width space/joiners, word joiner, BOM, soft hyphen,
  variation selectors) and terminal colour sequences are deleted;
- spaces and hyphens (also no-break and typographic ones) become separators:
  a name may be written «Ро машка» or «Ро-машка» (at most MAX_GAP of these
  units between two letters), and «Алексей Петров» matches «Алексей-Петров»;
- letters are upper-cased, folded to a Latin look-alike where one exists
  (tcg.detect.fold: NFKC to ASCII for full-width and mathematical letters,
  Cyrillic and Greek letters that look Latin), Ё to Е, then lower-cased.
  «Рoмашка» (Latin o), «POMAШKA» and «Ромашка» all have the skeleton
  ``pomaшka``; case is ignored here and checked on the raw text.

The skeleton of a character depends on that character only (but for a colour
sequence, deleted whole, and combining marks after a Cyrillic letter: composed with
it where Unicode has one letter for both, «и\u0306» → й, and deleted like an invisible
character, «Петро\u0301в»), so :class:`View` keeps a map from every view character
to its raw offset.
Matching happens on the *compact* view (separators and deleted characters
removed), gaps are counted from the raw text.
"""

from __future__ import annotations

import bisect
import functools
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

MAX_GAP = 3  # separator/invisible units allowed between two letters of a form
# invisible characters: deleted from the view (each counts as one gap unit)
INVISIBLE = ("\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180e"
             "\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\u2064\ufeff"
             + "".join(chr(c) for c in range(0xFE00, 0xFE10)))
# separators the fast prefilter spells out (tcg.entities.matcher): common in real text
PLAIN_SEPARATORS = " \t-\u00a0\u2010\u2011"
# other separators (typographic spaces and dashes): rare, they route a region to the view
RARE_SEPARATORS = ("\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
                   "\u202f\u205f\u3000\u2012\u2013\u2212\ufe63\uff0d")
# a terminal control sequence (CSI: colours, cursor moves), deleted from the view
# as one gap unit; lengths bounded so a match has a bounded raw size
CSI_TEXT = "\x1b\\[[\x30-\x3f]{0,16}[\x20-\x2f]{0,4}[\x40-\x7e]"
CSI_BYTES = rb"\x1b\[[\x30-\x3f]{0,16}[\x20-\x2f]{0,4}[\x40-\x7e]"
CSI_MAX = 2 + 16 + 4 + 1
_CSI = re.compile(CSI_TEXT)
_CSI_B = re.compile(CSI_BYTES)

SEP = " "  # a separator in the full view
DEL = "\x00"  # a deleted character in the full view
UNIT = "\x03"  # the first character of a control sequence (one unit)
TAIL = "\x04"  # the rest of a control sequence (no unit)
WILDCARD = "\x01"  # in a form: any one letter

# Code points whose skeleton the fast prefilter spells out exactly (everything
# else that changes under the skeleton is "rare": see rare_chars()).
UNIVERSE: tuple[tuple[int, int], ...] = ((0x20, 0x250), (0x370, 0x400), (0x400, 0x530))


@functools.lru_cache(maxsize=1)
def _fold() -> dict[int, str]:
    from tcg.detect.fold import fold_table

    return fold_table()


def skeleton_char(ch: str) -> str:
    """The skeleton of one character: DEL, SEP, or one character."""
    if ch in INVISIBLE:
        return DEL
    if ch in PLAIN_SEPARATORS or ch in RARE_SEPARATORS:
        return SEP
    fold = _fold()
    up = ch.upper() if len(ch.upper()) == 1 else ch
    if up == "Ё":
        up = "Е"
    out = fold.get(ord(up)) or fold.get(ord(ch)) or up
    if len(out) != 1:
        return ch
    low = out.lower()
    return low if len(low) == 1 else out


@functools.lru_cache(maxsize=1)
def translate_table() -> dict[int, str]:
    """str.translate table giving the full view (same length as the text)."""
    table: dict[int, str] = {}
    cps: set[int] = {ord(c) for c in INVISIBLE + PLAIN_SEPARATORS + RARE_SEPARATORS}
    cps |= set(_fold())
    for lo, hi in UNIVERSE:
        cps |= set(range(lo, hi))
    for cp in cps:
        ch = chr(cp)
        sk = skeleton_char(ch)
        if sk != ch:
            table[cp] = sk
    return table


@functools.lru_cache(maxsize=1)
def rare_chars() -> frozenset[str]:
    """Characters the skeleton changes that lie outside UNIVERSE (full-width and
    mathematical letters, rare separators) or are invisible: the prefilter does not
    spell them out, so a region holding one is matched on the view instead."""
    out = set(INVISIBLE) | set(RARE_SEPARATORS)
    for cp, sk in translate_table().items():
        if not any(lo <= cp < hi for lo, hi in UNIVERSE) and sk != chr(cp):
            out.add(chr(cp))
    return frozenset(out)


def preimages(universe_only: bool = True) -> dict[str, set[str]]:
    """skeleton character -> every character (in UNIVERSE) with that skeleton."""
    out: dict[str, set[str]] = {}
    for lo, hi in UNIVERSE:
        for cp in range(lo, hi):
            ch = chr(cp)
            sk = skeleton_char(ch)
            if sk not in (SEP, DEL):
                out.setdefault(sk, set()).add(ch)
    return out


def compact_skeleton(text: str) -> str:
    """The compact skeleton of a form (separators and invisible characters dropped),
    exactly as :class:`View` computes it for text. WILDCARD passes through."""
    full = text.translate(translate_table())
    return "".join(c for c in full if c not in (SEP, DEL))


def is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


class View:
    """The compact view of ``text[lo:hi]``: ``chars`` (skeleton characters),
    ``off[i]`` (raw offset of chars[i]), and the raw units between letters."""

    __slots__ = ("chars", "full", "hi", "lo", "off", "seps", "text", "units")

    def __init__(self, text: str, lo: int = 0, hi: int | None = None):
        hi = len(text) if hi is None else hi
        self.text, self.lo, self.hi = text, lo, hi
        part = text[lo:hi]
        if "\x1b" in part:
            part = _CSI.sub(lambda m: UNIT + TAIL * (len(m.group()) - 1), part)
        if _ANY_MARK.search(part) is not None:
            part = _MARKS.sub(_composed, part)
        full = part.translate(translate_table())
        self.full = full
        off: list[int] = []
        chars: list[str] = []
        for m in _LETTERS.finditer(full):
            s, e = m.span()
            off.extend(range(lo + s, lo + e))
            chars.append(m.group())
        self.chars = "".join(chars)
        self.off = off
        # raw offsets of gap units and of separators (sorted), for gap checks
        self.units = [lo + m.start() for m in _UNITS.finditer(full)]
        self.seps = [lo + m.start() for m in _SEPS.finditer(full)]

    def gap_units(self, a: int, b: int) -> int:
        """Units strictly between raw offsets a and b."""
        return bisect.bisect_left(self.units, b) - bisect.bisect_right(self.units, a)

    def separators(self, a: int, b: int) -> int:
        return bisect.bisect_left(self.seps, b) - bisect.bisect_right(self.seps, a)

    def char_before(self, raw: int, limit: int) -> tuple[str | None, bool]:
        """(the view character before raw offset ``raw``, or None when there is none
        within ``limit`` raw characters; whether a separator lies between)."""
        full = self.full
        i = raw - self.lo - 1
        stop = max(-1, i - limit)
        sep = False
        while i > stop:
            c = full[i]
            if c == SEP:
                sep = True
            elif c not in _SKIPPED:
                return c, sep
            i -= 1
        return None, sep

    def char_after(self, raw: int, limit: int) -> tuple[str | None, bool]:
        """The same after raw offset ``raw`` (exclusive end of a match)."""
        full = self.full
        i = raw - self.lo
        stop = min(len(full), i + limit)
        sep = False
        while i < stop:
            c = full[i]
            if c == SEP:
                sep = True
            elif c not in _SKIPPED:
                return c, sep
            i += 1
        return None, sep


#: combining marks (U+0300..U+036F) after a Cyrillic letter: «и\u0306» (й as macOS
#: file names and some keyboards write it), «е\u0308» (ё), stress marks «о\u0301»
_ANY_MARK = re.compile("[\u0300-\u036f]")
_MARKS = re.compile("([\u0400-\u04ff])([\u0300-\u036f]+)")


def _composed(m: re.Match[str]) -> str:
    """A Cyrillic letter with the marks after it: the letter composed with the first
    mark where Unicode has one character for both (и+U+0306 = й), each mark then an
    invisible character (deleted from the view, one gap unit like a zero-width space)."""
    import unicodedata

    letter, marks = m.group(1), m.group(2)
    both = unicodedata.normalize("NFC", letter + marks[0])
    return (both if len(both) == 1 else letter) + MARK_STANDIN * len(marks)


#: what a combining mark after a Cyrillic letter reads as (an invisible character)
MARK_STANDIN = "\u200b"

_SKIPPED = frozenset((DEL, UNIT, TAIL))
_LETTERS = re.compile("[^ \x00\x03\x04]+")
_UNITS = re.compile("[ \x00\x03]")
_SEPS = re.compile(" ")


def char_start(data: bytes, i: int) -> int:
    """Move ``i`` back to the start of a UTF-8 character (at most 3 bytes)."""
    for _ in range(3):
        if 0 < i < len(data) and 0x80 <= data[i] < 0xC0:
            i -= 1
        else:
            break
    return i


def csi_start(data: bytes, i: int) -> int:
    """Move ``i`` back to the ESC of a colour sequence it falls inside (the view
    deletes the sequence whole). The held bytes after a stream's cut are scanned
    apart from those before it: cut inside «ESC[0m», they would start with «[0m»
    or «0m», and the «m» reads as a letter glued to the name after it."""
    esc = data.rfind(b"\x1b", max(0, i - CSI_MAX + 1), i)
    if esc < 0:
        return i
    m = _CSI_B.match(data, esc)
    return esc if m is not None and m.end() > i else i


def first_chars(forms: Iterable[str]) -> set[str]:
    return {f[0] for f in forms if f}
