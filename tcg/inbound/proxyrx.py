"""A whole rule as one hyperscan expression over a text's one-byte copy.

The ascii database reads one byte per character of a view (tcg.inbound.utf8: ASCII
as it is, any other character its UTF-8 lead byte, a lone surrogate "?"), so its
offsets are character offsets. A rule's parse tree is written out here as a byte
pattern that matches that copy wherever the rule (Python ``re``, Unicode, caseless)
matches the text, and maybe elsewhere: each character element becomes the class of
bytes the characters it matches stand for there, case spelled out (``k`` is ``[kK]``
plus the lead byte of KELVIN SIGN, which ``re`` folds to it); word boundaries and
lookarounds are dropped; anything else (a group with its own flags, a back
reference) makes the rule untranslatable. hyperscan compiles the result in
prefilter mode, which may widen it further, never narrow it. Where the rule matches
``[s, t)`` the expression matches the copy's ``[s, t)``, so hyperscan reports ``t``:
``re`` then confirms the rule in a window ending there.

On text made of a rule's words that never forms the rule (a tutorial, a settings
page), the literal pairs of tcg.inbound.prefilter report every line; the whole rule
reports none of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from tcg._lean.reparse import compiler as _compiler
from tcg._lean.reparse import constants as _constants
from tcg._lean.reparse import parser as _parser
from tcg.inbound.rules import FLAGS

HIGH = frozenset(range(0x80, 0x100))  # the lead byte of any character outside ASCII
SURROGATE = ord("?")  # what a lone surrogate is in the copy (utf8.encode)


class Untranslatable(ValueError):
    """The rule holds a construct this module does not write out."""


#: the characters outside ASCII with a byte of their own in the letters copy (0x80 on,
#: in this order): Russian and Uzbek Cyrillic, the accented letters of the rules' other
#: languages; then those ``re`` (caseless) also matches to one of them or to an ASCII
#: letter (FOLDED: tests/inbound/test_fast_paths.py searches every code point for more).
#: Any other character is "?" there.
LETTERS = ("".join(map(chr, range(0x410, 0x450))) + "ЁёЎўҚқҒғҲҳ"
           + "éèêëàâäçôöûùüîïñíóúáßÉÈÊËÀÂÄÇÔÖÛÙÜÎÏÑÍÓÚÁ")
FOLDED = {"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k", "\u1e9e": "\u00df",
          "\u1c80": "в", "\u1c81": "д", "\u1c82": "о", "\u1c83": "с", "\u1c84": "т",
          "\u1c85": "т", "\u1c86": "ъ"}
_TABLE = "".join(map(chr, range(128))) + LETTERS + "".join(FOLDED)
assert len(_TABLE) <= 256, "the letters copy gives each character of the table one byte"
OTHER = ord("?")  # any character outside _TABLE in the letters copy


def _fold_key(c: str) -> str:
    return FOLDED.get(c, c.lower())


@cache
def _codec() -> tuple[Any, bytes]:
    """(charmap encoding of _TABLE, the byte translation folding each byte to the byte
    of its lower case: one byte for all the characters ``re`` matches to each other)."""
    import codecs

    encoding = codecs.charmap_build(_TABLE + "\ufffe" * (256 - len(_TABLE)))
    fold = bytes(_TABLE.index(_fold_key(c)) if i < len(_TABLE) else i for i, c in
                 enumerate(_TABLE + "\ufffe" * (256 - len(_TABLE))))
    return encoding, fold


def letters_copy(text: str) -> bytes:
    """The letters copy of ``text``: one byte per character, each of _TABLE the byte
    of its lower case (so a literal is one byte string, matched without a case flag),
    any other "?" (a charmap encoding and a byte translation: about 2 ns a character)."""
    import codecs

    encoding, fold = _codec()
    return codecs.charmap_encode(text, "replace", encoding)[0].translate(fold)


def letters_byte(c: str) -> int | None:
    """The byte of ``c`` in the letters copy (None: it is "?" there)."""
    return _TABLE.index(_fold_key(c)) if c in _TABLE else None


def _ascii_only(op: Any, av: Any, within: str = "") -> bool:
    """Whether a character element can match only ASCII characters (and those of
    ``within``) by its own members, case folding aside: such a literal, or a class of
    such literals and ranges, not negated, no category."""
    def known(cp: int) -> bool:
        return cp < 128 or chr(cp) in within

    name = str(op)
    if name == "LITERAL":
        return known(av)
    if name != "IN":
        return False
    for item_op, item_av in av:
        kind = str(item_op)
        if kind == "LITERAL" and known(item_av):
            continue
        if kind == "RANGE" and all(known(cp) for cp in range(item_av[0], item_av[1] + 1)):
            continue
        return False
    return True


def byte_set(state: Any, op: Any, av: Any, letters: bool = False) -> frozenset[int]:
    """The bytes of the lead-byte copy a character element may meet: the ASCII
    characters it matches (asked of ``re`` itself), and the lead bytes of the other
    characters it may match (those folding to its ASCII members, or all of them), and
    "?" when it may match a lone surrogate. ``letters``: of the letters copy instead:
    the bytes of the characters of its table it matches (asked of ``re``), and "?" when
    it has members outside the table (every character ``re`` folds to one inside is
    inside: FOLDED)."""
    pat = _compiler.compile(_parser.SubPattern(state, [(op, av)]), FLAGS)
    if letters:
        got = {b for c in _TABLE if pat.fullmatch(c) and (b := letters_byte(c)) is not None}
        if not _ascii_only(op, av, _TABLE):
            got.add(OTHER)
        return frozenset(got)
    got = {b for b in range(128) if pat.fullmatch(chr(b))}
    if _ascii_only(op, av):
        folds = _wide_folds()
        got |= {lead for b in list(got) for lead in folds.get(b, ())}
    else:
        got |= HIGH
        got.add(SURROGATE)
    return frozenset(got)


def _class(bytes_: frozenset[int]) -> bytes:
    """A hyperscan class of these bytes, as ranges."""
    if not bytes_:
        raise Untranslatable("an element that matches nothing")
    out: list[tuple[int, int]] = []
    run: list[int] = []
    for b in sorted(bytes_):
        if run and b == run[-1] + 1:
            run.append(b)
            continue
        if run:
            out.append((run[0], run[-1]))
        run = [b]
    out.append((run[0], run[-1]))
    return b"[" + b"".join(b"\\x%02x" % lo if lo == hi else b"\\x%02x-\\x%02x" % (lo, hi)
                           for lo, hi in out) + b"]"


_CHARACTER = frozenset({"LITERAL", "NOT_LITERAL", "ANY", "IN", "CATEGORY"})
_ZERO_WIDTH = frozenset({"AT", "ASSERT", "ASSERT_NOT"})
_REPEATS = frozenset({"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"})


@dataclass(frozen=True)
class _Span:
    """A run of ``lo`` to ``hi`` characters, each one of ``bytes_``: what the elements
    that are not literals become (a word of up to 30 letters, a separator run, an
    optional part). Two such runs side by side, or one repeated, are one run, wider
    than the two: a long run of one class compiles quickly, where nested bounded
    repeats and spelled-out optional words cost hyperscan seconds."""

    bytes_: frozenset[int]
    lo: int
    hi: int


@cache
def _wide_folds() -> dict[int, frozenset[int]]:
    """ASCII code -> the lead bytes of the characters outside ASCII that ``re``
    (FLAGS) matches to it caselessly (KELVIN SIGN to k, LONG S to s, dotted and
    dotless I to i): one search over every other code point."""
    rest = "".join(map(chr, range(0x80, 0xD800))) + "".join(map(chr, range(0xE000, 0x110000)))
    out: dict[int, set[int]] = {}
    for m in re.finditer("[\x00-\x7f]", rest, FLAGS):
        for a in range(128):
            if re.fullmatch(re.escape(chr(a)), m.group(), FLAGS):
                out.setdefault(a, set()).add(m.group().encode("utf-8")[0])
    return {a: frozenset(v) for a, v in out.items()}


def _join(pieces: list[Any]) -> list[Any]:
    """Side-by-side runs merged into one."""
    out: list[Any] = []
    for p in pieces:
        if isinstance(p, _Span) and out and isinstance(out[-1], _Span):
            q = out[-1]
            out[-1] = _Span(q.bytes_ | p.bytes_, q.lo + p.lo, q.hi + p.hi)
        else:
            out.append(p)
    return out


def _seq(state: Any, seq: Any, letters: bool) -> list[Any]:
    pieces: list[Any] = []
    for op, av in seq:
        pieces.extend(_item(state, op, av, letters))
    return _join(pieces)


def _item(state: Any, op: Any, av: Any, letters: bool) -> list[Any]:
    """A parse-tree element as pieces: a literal as the class of its bytes (kept in
    its place), any other character element as a run of one."""
    name = str(op)
    if name in _CHARACTER:
        got = byte_set(state, op, av, letters)
        return [_class(got) if name == "LITERAL" else _Span(got, 1, 1)]
    if name in _ZERO_WIDTH:
        return []  # dropped: the expression only gets wider
    if name == "SUBPATTERN":
        if av[1] or av[2]:
            raise Untranslatable("a group with flags of its own")
        return _seq(state, av[-1], letters)
    if name == "ATOMIC_GROUP":
        return _seq(state, av, letters)
    if name == "BRANCH":
        if any(not alt for alt in av[1]):
            return [_optional(state, [(op, av)], 1, letters)]
        alts = [_seq(state, alt, letters) for alt in av[1]]
        if all(len(a) == 1 and isinstance(a[0], _Span) for a in alts):
            return [_Span(frozenset().union(*(a[0].bytes_ for a in alts)),
                          min(a[0].lo for a in alts), max(a[0].hi for a in alts))]
        return [b"(?:" + b"|".join(_emit(a, letters) for a in alts) + b")"]
    if name in _REPEATS:
        lo, hi, inner = av
        if hi >= _constants.MAXREPEAT:
            raise Untranslatable("an unbounded repeat")
        if hi == 0:
            return []
        if lo == 0:
            return [_optional(state, inner, hi, letters)]
        pieces = _seq(state, inner, letters)
        if len(pieces) == 1 and isinstance(pieces[0], _Span):
            return [_Span(pieces[0].bytes_, lo * pieces[0].lo, hi * pieces[0].hi)]
        return [b"(?:" + _emit(pieces, letters) + b"){%d,%d}" % (lo, hi)]
    raise Untranslatable(f"{name} is not written out")


def _optional(state: Any, seq: Any, times: int, letters: bool) -> _Span:
    """An optional part (``(?:all\\s{1,3})?``) as a run of the bytes it may hold: it
    never narrows where a rule matches."""
    got: set[int] = set()
    stack = list(seq)
    while stack:
        op, av = stack.pop()
        name = str(op)
        if name in _CHARACTER:
            got |= byte_set(state, op, av, letters)
        elif name == "SUBPATTERN":
            if av[1] or av[2]:
                raise Untranslatable("a group with flags of its own")
            stack.extend(av[-1])
        elif name == "ATOMIC_GROUP":
            stack.extend(av)
        elif name == "BRANCH":
            stack.extend(x for alt in av[1] for x in alt)
        elif name in _REPEATS:
            stack.extend(av[2])
        elif name not in _ZERO_WIDTH:
            raise Untranslatable(f"{name} is not written out")
    most = _parser.SubPattern(state, list(seq)).getwidth()[1]
    if most >= _constants.MAXREPEAT:
        raise Untranslatable("an unbounded repeat")
    return _Span(frozenset(got), 0, times * most)


#: in the letters copy a run longer than this is unbounded: in Russian text, where every
#: byte is a letter such a run may hold, a bounded run of letters or words cost hyperscan
#: 30 ms over 5 MB (each place a possible start), an unbounded one about 1 ms (a run
#: still stops where its class does: at a full stop, or a space for ``\S``)
LETTERS_RUN = 24


def _emit(pieces: list[Any], letters: bool) -> bytes:
    out = []
    for p in pieces:
        if isinstance(p, bytes):
            out.append(p)
        elif p.hi > 0:
            cls = _class(p.bytes_)
            if letters and p.hi > LETTERS_RUN:
                out.append(cls + b"{%d,}" % p.lo)
            else:
                out.append(cls if p.lo == p.hi == 1 else cls + b"{%d,%d}" % (p.lo, p.hi))
    return b"".join(out)


def whole_expression(regex: str, letters: bool = False) -> bytes:
    """The byte expression (hyperscan byte mode, no case flag; compile it in prefilter
    mode) for ``regex`` (FLAGS) over a text's lead-byte copy, or (``letters``) its
    letters copy. Raises Untranslatable."""
    tree = _parser.parse(regex, FLAGS)
    if tree.state.flags & ~(FLAGS | re.UNICODE):
        raise Untranslatable("flags other than the rules' own")
    body = _emit(_seq(tree.state, tree.data, letters), letters)
    if not body:
        raise Untranslatable("nothing to match")
    return body


def letters_literal(literal: str, space: str, run: int) -> bytes | None:
    """A prefilter literal (``space`` standing for a whitespace run of 1 to ``run``
    characters: in the letters copy ASCII whitespace or "?") as a byte expression over
    the letters copy; None when a character of it has no byte of its own there."""
    pieces = []
    for piece in literal.split(space):
        got = [letters_byte(c) for c in piece]
        if None in got:
            return None
        pieces.append(b"".join(b"\\x%02x" % b for b in got if b is not None))
    return (b"[\\x09-\\x0d\\x1c-\\x20\\x3f]{1,%d}" % run).join(pieces)
