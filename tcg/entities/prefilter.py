"""The entity matcher's prefilter: one hyperscan database over the raw bytes that
fires wherever a registered form could be spelled, so text without a candidate
costs one pass and only the regions around a hit are matched on the view
(tcg.entities.matcher). Without hyperscan there is no prefilter and the matcher
reads everything on the view (same results, slower).

Its own module because what it must guarantee — every view match has a hit — is
an argument about spellings (the pieces and triggers below) separate from the
matching semantics; tests/entities check the guarantee.
"""

from __future__ import annotations

import functools
import re

from tcg.entities.confirm import Entry, confirmed, contexts_table, word_after, word_before
from tcg.entities.confirm import entry as confirm_entry
from tcg.entities.normal import (
    CSI_BYTES,
    WILDCARD,
    compact_skeleton,
    rare_chars,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

INSERT_MIN_WORD = 5  # a separator may be inserted only in a Cyrillic word this long
PIECE = 5  # letters of a long Cyrillic word's two prefilter pieces
LEFT, RIGHT = 1, 2  # a piece that must start / end a word
#: in a piece's code (Prefilter.whole): its expression ends with RIGHT_CONTEXT, one
#: byte after the piece
SHIFTED = 4
DENSE = 4096  # hits in one buffer after which all of it is matched on the view
DENSE_RAW = 8 * DENSE  # the same before thinning (hits within 32 bytes of each other)
#: first bytes of possibly rare characters in one buffer after which the smaller
#: database's scan stops and the full one (rare characters spelled out) is run instead:
#: each costs a Python callback, and text full of them (box drawing, accented prose)
#: pays those before the full scan (the alias stream alone there: 1.8 GB/s at 32,
#: 1.6 at 64, 1.0 at 256, against 2.4 with the rare characters spelled out)
RARE_LEADS = 32
ASCII_PIECE = 8  # letters of an ASCII word's prefilter piece (its prefix)


def is_cyrillic(c: str) -> bool:
    return "\u0400" <= c <= "\u04ff"


# How: one hyperscan database over the raw bytes, of literals and four short
# expressions (both kinds scan at GB/s; character classes spelled out per letter
# would not compile in useful time for thousands of forms):
# - per form, pieces of which any plain spelling must contain one: its longest
#   word — matched whole (its own separators are required) and case-insensitively
#   (ASCII through the caseless flag, Cyrillic as every case variant), or, for a
#   Cyrillic word of INSERT_MIN_WORD+ letters that may carry one inserted
#   separator, two pieces of it of which any single split leaves one whole —,
#   with е/ё both ways, and the
#   all-Latin spelling of a word made only of letters with Latin look-alikes;
# - triggers for every other way to spell a match: a Latin letter touching a
#   Cyrillic one («Рoмашка»), a control sequence between two letters, a casing
#   other than lower/UPPER/Capitalised («пЕтров», «ПЕтров»), and each rare
#   character (full-width, zero-width, Greek look-alikes, ...).
# A hit's region is matched on the view; tests/entities check that every view
# match has a hit.
# Text without a Cyrillic lead byte (most tool output) is scanned with a second,
# much smaller database: the same expressions less every one that needs such a byte
# to match — the pieces holding a Cyrillic letter and the Latin/Cyrillic and casing
# triggers — which cannot fire there (the hits are the same, and each trigger left
# out is an engine hyperscan does not run over every byte).
# In that smaller database the rare characters (some 1,400 short literals that cost
# as much to scan for as all the forms' pieces) are one byte class instead: the
# first bytes any of them starts with. Each such byte is checked against the rare
# characters in Python and reported exactly where the literal would end (the same
# hits); text with more than RARE_LEADS of them (box drawing, accented prose, CJK)
# is scanned again with the full database, which spells them out. The smaller
# database also fires on the Cyrillic lead bytes: its scan stops at the first one
# and the full database is scanned instead, so which database a text needs is found
# by the scan itself, not by four passes over the text before it.
# An ASCII word is spelled only by its first ASCII_PIECE letters (bounded on the
# left, open on the right): every whole-word occurrence holds them, and one short
# piece stands for all of a transliterated name's case forms (Abaliaev, -a, -u,
# -ym, -ykh, ...), a literal table a seventh the size, which stays in the cache.



def case_triggers(pieces: Iterable[bytes]) -> set[bytes]:
    """The casings _variants() does not spell out, for the pieces of basic Cyrillic
    letters among ``pieces``: any other casing of a piece's letters holds a lower
    letter then an upper one, or two upper letters then a lower one — of the piece's
    own letters. So those pairs and triples of each piece (е/ё either way) are the
    triggers: literals, where byte classes for any such pair fired hyperscan's
    engine on every Cyrillic letter (a scan of Russian prose twice as slow)."""
    out: set[bytes] = set()
    for b in pieces:
        piece = b.decode("utf-8", "surrogateescape")
        if not _basic_cyrillic(piece):
            continue
        for v in _yo(piece.lower()):
            out |= {(v[i] + v[i + 1].upper()).encode() for i in range(len(v) - 1)}
            out |= {(v[i : i + 2].upper() + v[i + 2]).encode() for i in range(len(v) - 2)}
    return out

#: the lead bytes of U+0400..U+04FF: text without any of them holds no Cyrillic letter
_CYRILLIC_LEADS = (b"\xd0", b"\xd1", b"\xd2", b"\xd3")


def has_cyrillic_lead(data: bytes) -> bool:
    """Whether ``data`` holds a byte 0xD0..0xD3 (four memchr passes, no copy)."""
    return b"\xd0" in data or b"\xd1" in data or b"\xd2" in data or b"\xd3" in data


def _lit(b: bytes) -> bytes:
    return b"".join(b"\\x%02x" % x for x in b)


def _words(text: str) -> list[str]:
    return [w for w in re.split(r"[^\w\x01]+", text) if w]


def _basic_cyrillic(piece: str) -> bool:
    """Every character a letter of U+0400..U+045F, where the case of a letter shows
    in its bytes (upper U+0400..U+042F, lower U+0430..U+045F: see case_triggers())."""
    return bool(piece) and all("\u0400" <= c <= "\u045f" and c.isalpha() for c in piece)


def _yo(piece: str) -> list[str]:
    """``piece`` with е/ё both ways in the case each has."""
    out = [""]
    for c in piece:
        alts = {"е", "ё"} if c in "её" else {"Е", "Ё"} if c in "ЕЁ" else {c}
        out = [o + a for o in out for a in sorted(alts)]
    return out


def _variants(piece: str, limit: int = 64) -> list[str]:
    """``piece`` with е/ё both ways (texts mix them freely) and, for Cyrillic
    letters, their cases (ASCII case is left to the caseless flag). A piece of
    basic Cyrillic letters gets three casings — lower, UPPER, Capitalised: any
    other casing of contiguous letters holds a lower letter before an upper one
    or two upper ones before a lower one, and those fire a trigger."""
    if _basic_cyrillic(piece):
        out: list[str] = []
        for cased in sorted({piece.lower(), piece.upper(), piece[:1].upper() + piece[1:].lower()}):
            out += _yo(cased)
        return out
    out = [""]
    for c in piece:
        alts = {c}
        if c in "еёЕЁ":
            alts |= {"е", "ё", "Е", "Ё"}
        elif is_cyrillic(c):
            alts |= {c.lower(), c.upper()}
        out = [o + a for o in out for a in sorted(alts)]
        if len(out) > limit:
            break
    return out


def form_pieces(text: str) -> set[tuple[bytes, int, tuple[str, str] | None]]:
    """(bytes, whole word, context) pieces at least one of which occurs in any
    spelling of ``text`` that fires no trigger (ASCII letters compared without case).
    A whole-word piece counts only where no ASCII letter, digit or ``_`` touches it
    (a Cyrillic neighbour of a Latin word fires a trigger anyway). The context, for
    a piece of a long Cyrillic word: the compact skeletons of the word's letters
    before and after the piece (see confirm_table); else None."""
    words = [w for w in _words(text) if WILDCARD not in w]
    if not words:
        return set()
    w = max(words, key=len)
    out: set[tuple[bytes, int, tuple[str, str] | None]] = set()
    if all(is_cyrillic(c) for c in w if c.isalpha()) and len(w) >= INSERT_MIN_WORD:
        # one separator may be inserted at any g: the part before it holds the
        # first piece (g >= h) or the part after it holds the second (g < h)
        # (the first piece starts the word, the second may end it: a word of a
        # form is never glued to other letters)
        h = (len(w) + 1) // 2
        first = w[: min(h, PIECE)]
        second = w[h - 1 : h - 1 + PIECE]
        basic = _basic_cyrillic(w)  # only then is every letter its own view letter
        ctx1 = (compact_skeleton(""), compact_skeleton(w[len(first) :])) if basic else None
        ctx2 = (compact_skeleton(w[: h - 1]), compact_skeleton(w[h - 1 + len(second) :])) \
            if basic else None
        out |= {(v.encode(), LEFT, ctx1) for v in _variants(first, limit=1 << 10)}
        right = RIGHT if h - 1 + PIECE >= len(w) else 0
        out |= {(v.encode(), right, ctx2) for v in _variants(second, limit=1 << 10)}
    else:
        vs = _variants(w)
        if len(vs) > 64:  # a long mixed word: its three-letter pieces instead
            for i in range(len(w) - 2):
                out |= {(v.encode(), 0, None) for v in _variants(w[i : i + 3])}
        else:
            out |= {(*_ascii_piece(v.encode("utf-8", "surrogateescape")), None) for v in vs}
    sk = compact_skeleton(w)
    if sk.isascii() and not w.isascii():
        out.add((*_ascii_piece(sk.encode()), None))
    cyr = _cyrillic_spelling(w)
    if cyr is not None:
        out |= {(v.encode(), LEFT | RIGHT, None) for v in _variants(cyr)}
    return out


@functools.lru_cache(maxsize=1)
def _cyrillic_twins() -> dict[str, str]:
    """ASCII letter -> its lower-case look-alike among U+0430..U+045F (а for a, і for
    i, ...): each letter that has one has exactly one there (ё aside: _yo() spells it);
    the others elsewhere in U+0400..U+052F are triggers (_CYRILLIC_LOOKALIKES)."""
    from tcg.entities.normal import skeleton_char

    out: dict[str, str] = {}
    for cp in range(0x430, 0x460):
        c = chr(cp)
        sk = skeleton_char(c)
        if sk.isascii() and sk.isalpha() and c != "ё":
            out.setdefault(sk, c)
    return out


def _cyrillic_spelling(word: str) -> str | None:
    """An ASCII word all of whose letters have a Cyrillic look-alike, spelled in
    those (lower case): «асме» for Acme. Its Cyrillic letters touch no Latin one, so
    no trigger fires on it; None for any other word (a Cyrillic spelling of it
    holds a Latin letter beside a Cyrillic one, or a trigger's look-alike)."""
    if not word.isascii() or not word.isalpha():
        return None
    twins = _cyrillic_twins()
    low = word.lower()
    if not all(c in twins for c in low):
        return None
    return "".join(twins[c] for c in low)


def _ascii_piece(word: bytes) -> tuple[bytes, int]:
    """A whole word's (piece, bounds): an ASCII word longer than ASCII_PIECE by its
    lower-cased prefix, bounded on the left only (every whole-word occurrence of
    the word, in any ASCII case, holds it so bounded); any other word whole."""
    if len(word) > ASCII_PIECE and word.isascii():
        return word[:ASCII_PIECE].lower(), LEFT
    return word, LEFT | RIGHT


#: view characters a confirm window must show beyond a piece's context, else the hit
#: stands (a window cut inside a character decodes to at most 3 odd characters)
def confirm_table(texts: Iterable[str]) -> dict[tuple[bytes, int], tuple[tuple[str, str], ...]]:
    """Per piece of a long Cyrillic word: the compact skeletons of its word's letters
    before and after it, over every form the piece is taken from; a piece some form
    also yields without them (another kind of word) is left out (always a hit).

    Why: a short piece («ров», «ани») occurs in ordinary Russian words all the time.
    A spelling of a form that fires no trigger holds the piece in its word, so the
    view letters right around that occurrence spell the rest of the word: a hit
    whose neighbours spell none of the piece's words cannot be that spelling
    (confirmed())."""
    return contexts_table(form_pieces(t) for t in texts)


#: a colour sequence right before a Cyrillic letter: word_before() looks through it,
#: which LEFT_CONTEXT does not (a trigger instead)
_CSI_THEN_CYRILLIC = CSI_BYTES + rb"[\xd0\xd1]"
#: a combining mark (U+0300..U+036F) right after a Cyrillic letter: the view composes
#: or deletes it (normal.View), which no piece spells
_CYRILLIC_THEN_MARK = rb"[\xd0-\xd3][\x80-\xbf](?:\xcc[\x80-\xbf]|\xcd[\x80-\xaf])"

#: the bytes before a piece that starts a word, for a piece starting with a letter of
#: U+0400..U+047F (in the full database; hyperscan then skips the occurrences inside
#: a longer word, one Python callback each before): every byte string word_before()
#: reads as "no word character before" ends with one of these, or is a colour sequence
#: (_CSI_THEN_CYRILLIC fires there):
#: one byte that is ASCII but no letter, digit or ``_``, or a lead byte (a character
#: cut short), or a continuation byte after anything but 0xD0/0xD1 (after those it
#: ends a letter of U+0400..U+047F, a word character). The full database is scanned
#: with a line break before the text and one after it, standing for its start and
#: end (anchors here doubled the database's size and compile time)
LEFT_CONTEXT = (rb"(?:[\x00-\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f\xc0-\xff]"
                rb"|[\x00-\xcf\xd2-\xff][\x80-\xbf])")


#: the byte after a piece that ends a word and a Cyrillic letter (the line break
#: after the text in the full database's scan stands for its end): any
#: byte but an ASCII letter, digit or ``_`` and 0xD0/0xD1 — after those word_after()
#: sees a word character, except after a lead byte cut short (_LONE_LEAD fires there)
RIGHT_CONTEXT = rb"[\x00-\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f\x80-\xcf\xd2-\xff]"
#: a lead byte 0xD0/0xD1 that no continuation byte follows (broken UTF-8)
_LONE_LEAD = rb"[\xd0\xd1][\x00-\x7f\xc0-\xff]"


def _shifted(literal: bytes, bound: int) -> bool:
    """Whether a piece ends a word and a Cyrillic letter (RIGHT_CONTEXT after it)."""
    return bool(bound & RIGHT) and len(literal) >= 2 and literal[-2] in (0xD0, 0xD1)


def _bounded(expr: bytes, literal: bytes, bound: int) -> bytes:
    """A piece with LEFT_CONTEXT before it when it starts a word and a Cyrillic letter,
    and RIGHT_CONTEXT after it when it ends a word and a Cyrillic letter."""
    if bound & LEFT and literal[:1] in (b"\xd0", b"\xd1"):
        expr = LEFT_CONTEXT + expr
    return expr + RIGHT_CONTEXT if _shifted(literal, bound) else expr


#: trigger expressions of _trigger_expressions() that match only where a byte
#: 0xD0..0xD3 is (left out of the database for text without one)
_NEEDS_CYRILLIC_LEAD = frozenset({
    rb"[A-Za-z][\xd0-\xd3]", rb"[\xd0-\xd3][\x80-\xbf][A-Za-z]", _CSI_THEN_CYRILLIC, _LONE_LEAD,
    _CYRILLIC_THEN_MARK})


def _needs_cyrillic_lead(expr: bytes, literal: bytes | None) -> bool:
    """Whether every match of ``expr`` (``literal`` when it is one) holds a byte 0xD0..0xD3."""
    if literal is not None:
        return any(c in literal for c in _CYRILLIC_LEADS)
    return expr in _NEEDS_CYRILLIC_LEAD


def key_chars(texts: Iterable[str]) -> frozenset[str]:
    """Every character of the forms' compact skeletons (what a match's letters are)."""
    out: set[str] = set()
    for t in texts:
        out |= set(compact_skeleton(t))
    return frozenset(out)


#: Cyrillic letters past U+045F whose skeleton is that of a letter of U+0410..U+045F
#: or an ASCII letter (Ү ү → у, һ → н, ԁ → d, Ԛ ԛ → q, Ԝ ԝ → w): a Cyrillic-only
#: respelling no piece spells and no other trigger sees
_CYRILLIC_LOOKALIKES = ("\u04ae", "\u04af", "\u04bb", "\u0501", "\u051a", "\u051b",
                        "\u051c", "\u051d")


@functools.lru_cache(maxsize=4)
def _trigger_expressions(keys: frozenset[str] | None = None) -> list[bytes]:
    """The triggers; with ``keys`` (key_chars() of the forms) less the rare characters
    that can neither be a match's character nor change a word boundary: a character
    whose skeleton is punctuation no form holds (full-width commas and brackets in CJK
    text), not a word character either way (word_before()/word_after() read the raw
    character as the view reads its skeleton), and neither deleted nor a separator."""
    from tcg.entities.normal import DEL, SEP, UNIVERSE, is_word, skeleton_char

    def needed(c: str) -> bool:
        sk = skeleton_char(c)
        return keys is None or sk == DEL or sk in keys or is_word(sk) or is_word(c)

    rare = {c for c in rare_chars() if skeleton_char(c) != SEP and needed(c)}  # separators only split words
    for lo, hi in UNIVERSE:  # non-ASCII, non-Cyrillic characters with another skeleton
        for cp in range(max(lo, 0x80), hi):
            c = chr(cp)
            if not is_cyrillic(c) and skeleton_char(c) not in (c, SEP) and needed(c):
                rare.add(c)
    rare |= set(_CYRILLIC_LOOKALIKES)
    # between two letters or digits (ASCII, or the last / first byte of a longer
    # character): control sequences, and the bytes the view deletes (NUL) or uses as
    # its own markers (0x03, 0x04), which it drops from between the letters too
    gap = b"(?:" + CSI_BYTES + rb"|[\x00\x03\x04])+"
    return [
        *(_lit(c.encode("utf-8")) for c in sorted(rare)),
        rb"[A-Za-z][\xd0-\xd3]",  # a Latin letter, then a Cyrillic one
        rb"[\xd0-\xd3][\x80-\xbf][A-Za-z]",  # a Cyrillic letter, then a Latin one
        rb"[0-9A-Za-z\x80-\xbf]" + gap + rb"[0-9A-Za-z\xc0-\xff]",
        _CSI_THEN_CYRILLIC,
        _LONE_LEAD,
        _CYRILLIC_THEN_MARK,
    ]


def _literal_bytes(expr: bytes) -> bytes | None:
    """The bytes a trigger spelled by _lit() stands for; None for an expression."""
    if re.fullmatch(rb"(?:\\x[0-9a-f]{2})+", expr):
        return bytes.fromhex(expr.replace(b"\\x", b"").decode("ascii"))
    return None


def prefilter_literals(texts: Iterable[str]) -> list[tuple[bytes, int]]:
    """The literal database's pieces (bytes, LEFT/RIGHT bounds)."""
    return _literals(form_pieces(t) for t in texts)


def _literals(pieces: Iterable[set[tuple[bytes, int, tuple[str, str] | None]]]
              ) -> list[tuple[bytes, int]]:
    return sorted({(b, bound) for p in pieces for b, bound, _ in p})


class Prefilter:
    """The hyperscan databases (None without hyperscan: the caller then matches
    everything on the view): ``db`` holds every expression, ``plain`` the same less
    the expressions holding a Cyrillic lead byte, for text without one (its scan
    stops at one: id ``rare_id + 1``), and with the rare characters as one byte
    class (id ``rare_id``; ``rare`` the characters' bytes) checked in :meth:`scan`."""

    def __init__(self, db: object, first_literal: int, whole: list[int], plain: object = None,
                 rare: frozenset[bytes] = frozenset(), rare_id: int = -1,
                 confirm: dict[int, Entry] | None = None,
                 confirm_json: bytes = b""):
        self.db = db
        #: per literal index: (its length, nb, na, its contexts) for the pieces confirmed()
        #: checks; parsed from ``confirm_json`` when the full database first needs it
        self._confirm = confirm
        self._confirm_json = confirm_json
        self.plain = plain
        self.first_literal = first_literal
        #: per literal: its length << 3 | SHIFTED | its LEFT/RIGHT bounds, or 0 when unbounded
        self.whole = whole
        self.rare = rare
        self.rare_id = rare_id

    @classmethod
    def compile(cls, texts: Iterable[str]) -> Prefilter | None:
        try:
            import hyperscan
        except ImportError:
            return None
        texts = list(texts)
        pieces = [form_pieces(t) for t in texts]
        lits = _literals(pieces)
        trig = [*_trigger_expressions(key_chars(texts)),
                *(_lit(b) for b in sorted(case_triggers(b for b, _ in lits)))]
        table = contexts_table(pieces)
        confirm = {i: confirm_entry(len(b), table[(b, bound)]) for i, (b, bound) in enumerate(lits)
                   if (b, bound) in table}
        exprs = [*trig, *(_bounded(_lit(b), b, bound) for b, bound in lits)]
        flags = [0] * len(trig) + [hyperscan.HS_FLAG_CASELESS] * len(lits)
        # the same ids in both, so a hit means the same in either
        ids = [i for i in range(len(exprs))
               if not _needs_cyrillic_lead(exprs[i], lits[i - len(trig)][0] if i >= len(trig)
                                           else _literal_bytes(exprs[i]))]
        rare = {i: b for i in ids if i < len(trig) and (b := _literal_bytes(exprs[i])) is not None}
        # the byte class standing for them, and the Cyrillic lead bytes (the smaller
        # database only: ids past the full one's)
        rare_id = len(exprs)
        plain_ids = [i for i in ids if i not in rare]
        plain_exprs = [_word_end(exprs[i], *lits[i - len(trig)]) if i >= len(trig) else exprs[i]
                       for i in plain_ids] + [_lead_class(rare.values()), _CYRILLIC_LEAD_CLASS]
        plain_flags = [flags[i] for i in plain_ids] + [0, 0]
        plain_ids += [rare_id, rare_id + 1]
        dbs = []
        for ex, pick, fl in ((exprs, list(range(len(exprs))), flags),
                             (plain_exprs, plain_ids, plain_flags)):
            db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
            db.compile(expressions=ex, ids=pick, flags=fl)
            dbs.append(db)
        return cls(dbs[0], len(trig), [(len(b) << 3) | (SHIFTED if _shifted(b, bound) else 0) | bound
                                       if bound else 0 for b, bound in lits],
                   dbs[1], frozenset(rare.values()), rare_id, confirm)

    def to_bytes(self) -> bytes:
        """One JSON header line, then the serialized databases."""
        import json

        import hyperscan

        blobs = [bytes(hyperscan.dumpb(db)) for db in (self.db, self.plain) if db is not None]  # type: ignore[arg-type]
        # the casings and ё spellings of a piece share its contexts: each set stored once
        sets: dict[tuple[tuple[str, str], ...], int] = {}
        rows = [[i, n, sets.setdefault(c, len(sets))]
                for i, (n, _, _, c, _, _) in sorted(self.confirm_contexts().items())]
        conf = json.dumps({"contexts": list(sets), "pieces": rows},
                          ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        head = json.dumps({"first_literal": self.first_literal, "whole": self.whole,
                           "sizes": [len(b) for b in blobs], "rare_id": self.rare_id,
                           "rare": sorted(b.hex() for b in self.rare),
                           "confirm_size": len(conf)}).encode()
        return head + b"\n" + b"".join(blobs) + conf

    @classmethod
    def from_bytes(cls, data: bytes) -> Prefilter | None:
        import json

        try:
            import hyperscan
        except ImportError:
            return None
        head, _, blob = data.partition(b"\n")
        st = json.loads(head)
        dbs = []
        at = 0
        for size in st.get("sizes", [len(blob)]):
            db = hyperscan.loadb(blob[at : at + size], hyperscan.HS_MODE_BLOCK)
            db.scratch = hyperscan.Scratch(db)
            dbs.append(db)
            at += size
        conf = blob[at : at + int(st.get("confirm_size", 0))]
        return cls(dbs[0], int(st["first_literal"]), list(st["whole"]),
                   dbs[1] if len(dbs) > 1 else None,
                   frozenset(bytes.fromhex(h) for h in st.get("rare", ())), int(st.get("rare_id", -1)),
                   None, bytes(conf))

    def confirm_contexts(self) -> dict[int, Entry]:
        """The pieces confirmed() checks (read from the stored file on first use: only
        text with Cyrillic letters needs them)."""
        if self._confirm is None:
            import json

            raw = json.loads(self._confirm_json) if self._confirm_json else {}
            sets = [tuple((str(b), str(a)) for b, a in c) for c in raw.get("contexts", ())]
            entries = [confirm_entry(0, c) for c in sets]
            self._confirm = {int(i): (int(n), *entries[k][1:]) for i, n, k in raw.get("pieces", ())}
        return self._confirm

    def scan(self, data: bytes) -> list[int] | None:
        """End offsets of the hits, thinned and sorted; None when hits are dense
        (the caller matches the whole buffer on the view)."""
        if self.plain is not None and (self.rare_id >= 0 or not has_cyrillic_lead(data)):
            # the smaller database stops at the first Cyrillic lead byte (what the big
            # one adds cannot hit without one) or at too many rare first bytes
            hits = self._scan(self.plain, data)
            if hits is not _USE_FULL:
                return hits
        return self._scan(self.db, data)

    def _scan(self, db: object, data: bytes) -> list[int] | None:
        found: list[int] = []
        first_lit = self.first_literal
        whole = self.whole
        rare = self.rare
        rare_id = self.rare_id if self.rare_id >= 0 else 1 << 62  # (-1: no class, no stop)
        leads = [0]
        # (the smaller database holds none of these pieces: each has a Cyrillic letter)
        confirm = self.confirm_contexts() if db is self.db else {}
        # the full database sees the text between two line breaks (LEFT_CONTEXT,
        # RIGHT_CONTEXT): its offsets are one more
        shift = 1 if db is self.db else 0

        def on_match(rid: int, _f: int, to: int, _fl: int, _c: object) -> bool | None:
            to -= shift
            if rid >= first_lit:
                if rid >= rare_id:  # a first byte of a rare character, maybe: which one?
                    leads[0] += 1
                    if leads[0] > RARE_LEADS or rid > rare_id:
                        leads[0] = RARE_LEADS + 1  # (rid > rare_id: a Cyrillic lead byte)
                        return True
                    at = to - 1
                    lead = data[at]  # the length of the one literal that may start here
                    end = at + (2 if lead < 0xE0 else 3 if lead < 0xF0 else 4)
                    if data[at:end] not in rare:
                        return None
                    to = end
                else:
                    code = whole[rid - first_lit]
                    if code:
                        if code & SHIFTED:
                            to -= 1  # (the expression ends with RIGHT_CONTEXT's byte)
                        length, bound = code >> 3, code & 3
                        if (bound & RIGHT and word_after(data, to)) or \
                                (bound & LEFT and word_before(data, to - length)):
                            return None
                    ctx = confirm.get(rid - first_lit)
                    if ctx is not None and not confirmed(data, to - ctx[0], to, *ctx[1:]):
                        return None
            found.append(to)
            return True if len(found) > DENSE_RAW else None

        try:
            db.scan(b"".join((b"\n", data, b"\n")) if shift else data,  # type: ignore[attr-defined]
                    match_event_handler=on_match)
        except Exception:  # noqa: BLE001 - hyperscan.ScanTerminated: stopped on purpose
            if leads[0] > RARE_LEADS:
                return _USE_FULL
            if len(found) <= DENSE_RAW:
                raise
            return None
        # thinned in offset order (whatever order the engines reported them in)
        found.sort()
        hits: list[int] = []
        last = -1000
        for to in found:
            to = min(max(to, 0), len(data))  # (_LONE_LEAD on the line break after the text)
            if to - last > 32:
                last = to
                hits.append(to)
        return None if len(hits) > DENSE else hits


#: what _scan() returns when the smaller database's scan stopped for the full one
_USE_FULL: list[int] = []


def _word_end(expr: bytes, literal: bytes, bound: int) -> bytes:
    """A right-bounded literal ending in an ASCII letter or digit, with ``\\b`` after
    it: hyperscan then drops the hits an ASCII letter, digit or ``_`` follows, which
    word_after() would reject (the Python callback costs more than the scan's check;
    a non-ASCII byte is no word byte for ``\\b``, and word_after() still decides)."""
    return expr + rb"\b" if bound & RIGHT and literal[-1:].isalnum() else expr


def _lead_class(rare: Iterable[bytes]) -> bytes:
    """A byte class of the first bytes of ``rare`` (every rare literal starts with one)."""
    return b"[" + b"".join(b"\\x%02x" % x for x in sorted({r[0] for r in rare})) + b"]"


#: the Cyrillic lead bytes, where the smaller database's scan stops (an expression of
#: its own: in the rare characters' class they make hyperscan's scan a tenth slower)
_CYRILLIC_LEAD_CLASS = b"[" + b"".join(_lit(b) for b in _CYRILLIC_LEADS) + b"]"
