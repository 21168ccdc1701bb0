"""The entity prefilter's confirm step: whether a hit of a short piece of a long
Cyrillic word may lie in one of its words, read off the raw bytes around it with the
view's own letters, and the word-edge checks on raw bytes.

Its own module because it is the argument that lets the prefilter drop most hits in
ordinary Russian prose (a piece such as «ров» occurs in every other sentence) without
losing a spelling of a registered form; tests/entities/test_confirm.py checks it
against the view.
"""

from __future__ import annotations

import functools
import re

from tcg.entities.normal import CSI_BYTES, CSI_MAX, char_start

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

#: a confirmed piece: (its length, nb, na, its contexts, firsts, lasts) (see confirmed())
Entry = tuple[int, int, int, tuple[tuple[str, str], ...], "frozenset[str] | None",
              "frozenset[str] | None"]

CONFIRM_SLACK = 4
#: raw bytes a confirm window spans per view character it needs (a Cyrillic letter is 2)
CONFIRM_BYTES = 3
#: control characters the view treats apart (colour sequences, deleted/unit markers):
#: a window holding one is not confirmed in Python, the hit stands
_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")


@functools.lru_cache(maxsize=1)
def _letters_table() -> dict[int, str | None]:
    """normal.translate_table() with what the view drops from its letters (separators,
    deleted characters, units) deleted: one str.translate gives the view's letters."""
    from tcg.entities.normal import translate_table

    drop = (" ", "\x00", "\x03", "\x04")
    table: dict[int, str | None] = {cp: None if sk in drop else sk
                                    for cp, sk in translate_table().items()}
    for c in drop:
        table[ord(c)] = None
    return table


@functools.lru_cache(maxsize=1)
def _cyrillic_letters() -> dict[bytes, str]:
    """The UTF-8 bytes of each letter U+0400..U+047F -> that letter in the view (the
    same translation table)."""
    table = _letters_table()
    out = {}
    for cp in range(0x400, 0x480):
        sk = table.get(cp, chr(cp))
        if sk:
            out[chr(cp).encode()] = sk
    return out


def contexts_table(pieces: Iterable[set[tuple[bytes, int, tuple[str, str] | None]]]
                   ) -> dict[tuple[bytes, int], tuple[tuple[str, str], ...]]:
    ctx: dict[tuple[bytes, int], set[tuple[str, str]]] = {}
    free: set[tuple[bytes, int]] = set()
    for p in pieces:
        for b, bound, c in p:
            if c is None:
                free.add((b, bound))
            else:
                ctx.setdefault((b, bound), set()).add(c)
    return {k: tuple(sorted(v)) for k, v in ctx.items() if k not in free}


def confirmed(data: bytes, start: int, end: int, nb: int, na: int,
              contexts: tuple[tuple[str, str], ...], firsts: frozenset[str] | None = None,
              lasts: frozenset[str] | None = None) -> bool:
    """Whether the piece at ``data[start:end]`` may lie in one of its words: the
    view letters right before it end with a context's first part and those right
    after it start with its second. The letters are computed as the view computes
    them (the same translation table, separators and deleted characters dropped);
    a window holding a control character the view treats apart, or starting less
    than a colour sequence's length after an ESC (it may start inside one), or cut short of
    a context's letters and CONFIRM_SLACK more, confirms the hit. A window that
    reaches the start or end of ``data`` is not cut: a match in ``data`` has all its
    letters there. ``nb``/``na``: the longest first/second part of the contexts;
    ``firsts``/``lasts``: the letters every second part starts / first part ends with
    (None: some part is empty).

    Most hits are decided by the one letter beside the piece: a letter U+0400..U+047F
    right after (before) it is the view's next (previous) letter whatever else the
    window holds, so when it starts (ends) no context the hit is dropped at once."""
    cyr = _cyrillic_letters()
    if firsts is not None and (sk := cyr.get(data[end : end + 2])) is not None and sk not in firsts:
        return False
    if lasts is not None and start >= 2 and (sk := cyr.get(data[start - 2 : start])) is not None \
            and sk not in lasts:
        return False
    table = _letters_table()
    before = after = ""
    cut_lo = cut_hi = False
    if nb:
        lo = char_start(data, max(0, start - CONFIRM_BYTES * (nb + CONFIRM_SLACK)))
        cut_lo = lo > 0
        raw = data[lo:start].decode("utf-8", "surrogateescape")
        if _UNSAFE.search(raw) or data.rfind(b"\x1b", max(0, lo - CSI_MAX), lo) >= 0:
            # a control character, or a window that may start inside a colour
            # sequence (the view deletes it; its tail would read as letters here)
            return True
        before = raw.translate(table)
    if na:
        hi = min(len(data), end + CONFIRM_BYTES * (na + CONFIRM_SLACK))
        cut_hi = hi < len(data)
        raw = data[end : char_start(data, hi) if hi < len(data) else hi].decode(
            "utf-8", "surrogateescape")
        if _UNSAFE.search(raw):
            return True
        after = raw.translate(table)
    for b, a in contexts:
        if (cut_lo and len(before) < len(b) + CONFIRM_SLACK) or \
                (cut_hi and len(after) < len(a) + CONFIRM_SLACK):
            return True
        if before.endswith(b) and after.startswith(a):
            return True
    return False


def word_before(data: bytes, start: int) -> bool:
    """Whether a letter, digit or ``_`` is right before ``data[start]`` (looking
    through a colour sequence, which the view deletes; an invisible character
    fires a trigger anyway)."""
    if start <= 0:
        return False
    b = data[start - 1]
    if 0x80 <= b < 0xC0 and start >= 2 and 0xD0 <= data[start - 2] <= 0xD1:
        return True  # a letter of U+0400..U+047F (the usual case in Russian text: first)
    if b < 0x80:
        if not (chr(b).isalnum() or b == 0x5F):
            return False
        if 0x40 <= b <= 0x7E:
            esc = data.rfind(b"\x1b[", max(0, start - CSI_MAX), start)
            if esc >= 0 and _CSI_END.fullmatch(data, esc, start):
                return word_before(data, esc)
        return True
    i = start - 1
    while i > 0 and start - i < 4 and 0x80 <= data[i] < 0xC0:
        i -= 1
    ch = data[i:start].decode("utf-8", "ignore")
    return bool(ch) and (ch.isalnum() or ch == "_")


def word_after(data: bytes, end: int) -> bool:
    """Whether a letter, digit or ``_`` is right after ``data[:end]``."""
    if end >= len(data):
        return False
    b = data[end]
    if b < 0x80:
        return chr(b).isalnum() or b == 0x5F
    if 0xD0 <= b <= 0xD1 and end + 1 < len(data) and 0x80 <= data[end + 1] < 0xC0:
        return True  # a letter of U+0400..U+047F (the usual case in Russian text)
    ch = data[end : end + 4].decode("utf-8", "ignore")[:1]
    return bool(ch) and (ch.isalnum() or ch == "_")


def entry(length: int, contexts: tuple[tuple[str, str], ...]) -> Entry:
    firsts = frozenset(a[0] for _, a in contexts) if all(a for _, a in contexts) else None
    lasts = frozenset(b[-1] for b, _ in contexts) if all(b for b, _ in contexts) else None
    return (length, max(len(b) for b, _ in contexts), max(len(a) for _, a in contexts), contexts,
            firsts, lasts)


_CSI_END = re.compile(CSI_BYTES)
