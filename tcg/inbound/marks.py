"""Marks: where a text holds characters the views and the character checks care
about — invisible characters, characters of the expensive scripts, confusable-letter
triggers, percent-encodings and characters NFKC changes.

With hyperscan they are found by small exact databases (one per kind) over the
UTF-8 of the text, with a per-kind cap so a flood costs a bounded number of
callbacks; without it Python ``re`` does the same work with the same character
classes. The databases are compiled and cached by tcg.inbound.engine.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from tcg.inbound import chars

# Mark kinds (hyperscan ids of the marks databases).
INVISIBLE, EXPENSIVE, TRIGGER, PERCENT, NFKC = 1, 2, 3, 4, 5
# The screens: whether a text holds any mark of a kind, one report per kind (UTF-8 mode:
# the invisible, expensive, NFKC and foreign-confusable classes; byte mode: a Latin letter
# next to a Cyrillic one), so a kind none of whose marks occur costs no scan of its own.
# Two databases: mixed in one, the two modes took ~16 ms over 5 MB of Russian, apart ~5.
SCREEN_UTF8, SCREEN_BYTES = 6, 7
#: the code points of the Latin-Cyrillic pairs (in UTF-8: a lead byte 0xD0..0xD3 and one more)
CYRILLIC = (0x0400, 0x04FF)
#: marks kept per database before it stops (a flood is a flood at any larger count)
MARK_CAPS = {INVISIBLE: 20_000, EXPENSIVE: 2_001, TRIGGER: 4_000, PERCENT: 2_000, NFKC: 4_000}


@dataclass
class Marks:
    """Character offsets of each kind of mark in a text (ascending), and whether a
    kind stopped at its cap (then only the first ``MARK_CAPS[kind]`` are listed)."""

    at: dict[int, list[int]] = field(default_factory=dict)
    capped: set[int] = field(default_factory=set)

    def of(self, kind: int) -> list[int]:
        return self.at.get(kind, [])




def marks_patterns() -> dict[int, list[tuple[str, str]]]:
    """(hyperscan expression, Python expression) per mark kind; the two spell the
    same character classes."""
    table = chars.skeleton_table()
    foreign = chars.ranges_of({cp for cp in table if chr(cp) not in chars.NATIVE_CYRILLIC})
    cyr = [CYRILLIC]
    latin = "[A-Za-z]"
    exp = list(chars.EXPENSIVE.values())
    return {
        INVISIBLE: [(chars.class_pattern(chars.ALL_INVISIBLE), chars.py_class(chars.ALL_INVISIBLE))],
        EXPENSIVE: [(chars.class_pattern(exp), chars.py_class(exp))],
        TRIGGER: [
            (chars.class_pattern(foreign), chars.py_class(foreign)),
            (latin + chars.class_pattern(cyr), latin + chars.py_class(cyr)),
            (chars.class_pattern(cyr) + latin, chars.py_class(cyr) + latin),
        ],
        PERCENT: [("%[0-9A-Fa-f]{2}", "%[0-9A-Fa-f]{2}"),
                  (r"[?&][A-Za-z0-9_.-]{1,40}=[A-Za-z0-9_.%-]{0,64}\+",
                   r"[?&][A-Za-z0-9_.-]{1,40}=[A-Za-z0-9_.%-]{0,64}\+")],
        NFKC: [(chars.class_pattern(chars.nfkc_unstable()), chars.py_class(chars.nfkc_unstable()))],
    }


#: the mark kinds whose Python pattern is one character class (used to count and cut)
_SIMPLE = {INVISIBLE: chars.ALL_INVISIBLE, EXPENSIVE: tuple(chars.EXPENSIVE.values())}



def _adjacent_bytes() -> list[bytes]:
    """The TRIGGER pairs of a Latin letter and a Cyrillic one as byte expressions: in
    valid UTF-8 (what tcg.inbound.utf8 makes: a lone surrogate is "?") a byte 0xD0..0xD3
    is always a lead byte followed by one continuation byte, the code points CYRILLIC."""
    assert CYRILLIC == (0x0400, 0x04FF)  # noqa: S101 - the bytes below spell this range
    cyr = rb"[\xd0-\xd3][\x80-\xbf]"
    return [rb"[A-Za-z]" + cyr, cyr + rb"[A-Za-z]"]


def compile_databases() -> dict[int, Any]:
    """One hyperscan database per mark kind, and the two screens."""
    import hyperscan

    out = {}
    pats = marks_patterns()
    for kind, kind_pats in pats.items():
        db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        # percent marks are ASCII: byte mode keeps their bounded repeats cheap
        flags = 0 if kind == PERCENT else hyperscan.HS_FLAG_UTF8
        db.compile(expressions=[hs.encode("ascii") for hs, _ in kind_pats], ids=[kind] * len(kind_pats),
                   flags=[flags] * len(kind_pats))
        out[kind] = db
    one = hyperscan.HS_FLAG_SINGLEMATCH
    screened = [(pats[kind][0][0].encode("ascii"), kind) for kind in (INVISIBLE, EXPENSIVE, NFKC, TRIGGER)]
    adjacent = _adjacent_bytes()
    try:
        db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        db.compile(expressions=[e for e, _ in screened], ids=[k for _, k in screened],
                   flags=[hyperscan.HS_FLAG_UTF8 | one] * len(screened))
        out[SCREEN_UTF8] = db
        db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        db.compile(expressions=adjacent, ids=[TRIGGER] * len(adjacent), flags=[one] * len(adjacent))
        out[SCREEN_BYTES] = db
    except hyperscan.error:
        pass  # a screen refused: has_screens is false, every kind is scanned
    return out


def has_screens(databases: dict[int, Any]) -> bool:
    """Whether both screens compiled (scan_hyperscan's ``screen`` may be on)."""
    return SCREEN_UTF8 in databases and SCREEN_BYTES in databases


def kinds_of(text: str) -> tuple[int, ...]:
    """The mark kinds a text can hold: an ASCII text only percent-encodings."""
    return (PERCENT,) if text.isascii() else (INVISIBLE, EXPENSIVE, TRIGGER, PERCENT, NFKC)


def scan_hyperscan(database: Any, data: bytes, kinds: tuple[int, ...],
                   wide: list[tuple[int, int]] | None = None,
                   screen: bool = True) -> tuple[dict[int, list[int]], set[int]]:
    """(kind -> byte offsets of the ends of its marks, kinds that hit their cap);
    ``database(kind)``: that kind's compiled database. ``wide``: when given, the
    byte ranges (ascending, apart, on character boundaries) outside which ``data`` is
    ASCII: every kind but PERCENT is then scanned only there, with the character
    on each side (its marks are non-ASCII characters and pairs of a letter and one:
    all lie inside those), in order, so a cap stops at the same mark as one scan.
    ``screen``: first ask the screens which of those kinds occur at all (each
    screen holds every pattern of its kinds), and scan only those (off: the
    reference the tests compare with)."""
    raw: dict[int, list[int]] = {}
    capped: set[int] = set()
    parts = None if wide is None else [(max(0, lo - 1), min(len(data), hi + 1)) for lo, hi in wide]
    occur = _screen(database, data, parts) if screen and any(k != PERCENT for k in kinds) else None
    for kind in kinds:
        if kind == PERCENT:
            hits = _scan_capped(database(kind), data, MARK_CAPS[kind])
        elif occur is not None and kind not in occur:
            continue  # the screens hold every pattern of the kind: it has no mark here
        else:
            hits = _scan_capped(database(kind), data, MARK_CAPS[kind], parts)
        if len(hits) >= MARK_CAPS[kind]:
            capped.add(kind)
        if hits:
            raw[kind] = hits
    return raw, capped


def _screen(database: Any, data: bytes, parts: list[tuple[int, int]] | None) -> set[int]:
    """The kinds (INVISIBLE, EXPENSIVE, NFKC, TRIGGER) with a mark in ``parts`` of
    ``data`` (None: all of it): at most one report per kind, pattern and scan."""
    found: set[int] = set()

    def on_match(rid: int, _f: int, _to: int, _fl: int, _c: Any) -> None:
        found.add(rid)

    view = memoryview(data)
    for name in (SCREEN_UTF8, SCREEN_BYTES):
        db = database(name)
        for lo, hi in parts if parts is not None else [(0, len(data))]:
            db.scan(data if parts is None else view[lo:hi], match_event_handler=on_match)
    return found


@cache
def _py_patterns() -> dict[int, list[re.Pattern[str]]]:
    return {k: [re.compile(py) for _, py in v] for k, v in marks_patterns().items()}


def scan_re(text: str, kinds: tuple[int, ...]) -> Marks:
    """The marks of ``text`` found with Python ``re`` (the engine without hyperscan)."""
    out = Marks()
    patterns = _py_patterns()
    for kind in kinds:
        found: list[int] = []
        for pat in patterns[kind]:
            for m in pat.finditer(text):
                found.append(m.end())
                if len(found) >= MARK_CAPS[kind]:
                    break
        if found:
            found = sorted(set(found))
            if len(found) >= MARK_CAPS[kind]:
                out.capped.add(kind)
                found = found[:MARK_CAPS[kind]]
            out.at[kind] = found
    return out


def count_kind(kind: int, text: str) -> int:
    """Exact number of characters of a mark kind (after a capped scan)."""
    return len(py_mark(kind).findall(text))


@cache
def py_mark(kind: int) -> re.Pattern[str]:
    """The Python pattern of a single-character mark kind (INVISIBLE, EXPENSIVE)."""
    return re.compile(chars.py_class(_SIMPLE[kind]))


def _scan_capped(db: Any, data: bytes, cap: int, parts: list[tuple[int, int]] | None = None) -> list[int]:
    """Ends of the matches of ``db`` in ``data`` (sorted, unique), stopping at the
    ``cap``-th report; ``parts``: scan only these byte ranges, in order, the cap
    counting the reports of all of them (the same stop as one scan when every
    match lies inside one range)."""
    import hyperscan

    hits: list[int] = []
    append = hits.append
    base = 0

    def on_match(_rid: int, _f: int, to: int, _fl: int, _c: Any) -> bool | None:
        append(base + to)
        return True if len(hits) >= cap else None

    view = memoryview(data)  # parts scanned without copying them
    for lo, hi in parts if parts is not None else [(0, len(data))]:
        base = lo
        try:
            db.scan(data if parts is None else view[lo:hi], match_event_handler=on_match)
        except hyperscan.ScanTerminated:
            break
    if len(hits) > 1:
        hits = sorted(set(hits))
    return hits
