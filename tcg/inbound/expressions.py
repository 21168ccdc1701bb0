"""The hyperscan expressions of the inbound rule databases, from each rule's prefilter
literals (tcg.inbound.prefilter) or its whole pattern (tcg.inbound.proxyrx).

Three databases: ``ascii`` holds the alternatives whose literals are all ASCII,
scanned in byte mode over one byte per character of the text (tcg.inbound.utf8's
one-byte copy: other characters as their lead byte), so its offsets are character
offsets; a pair of sets is one expression there (first set, at most ``reach``
characters, second set) and only where both occur close together does it report,
which keeps the Python callbacks to a few thousand on 5 MB of prose or code whose
every line holds a common word. A rule whose literals are all ASCII is, instead of
its literals, one expression there for the whole rule, which reports only where the
rule may match, at the end of that match (a rule proxyrx cannot write out keeps its
literals).

``letters`` holds the alternatives with other letters whose literals are all ASCII
or of proxyrx.LETTERS (Russian, Uzbek Cyrillic, the accented letters of the rules'
languages), over the letters copy of the text (one byte per character, case folded):
a pair of sets is one expression there as for ASCII, however far apart the rule
lets them be (in UTF-8 mode such a pair took minutes to compile). ASCII alternatives
of those rules are there too: LONG S, DOTLESS I and KELVIN SIGN are the letters
``re`` folds them to there, not lead bytes.

``utf8`` holds what is left, in UTF-8 mode (hyperscan folds the case of non-ASCII
letters there, which costs seconds to compile), scanned over the UTF-8 only when the
text is not ASCII; each distinct literal is one expression there, its places shared
out to every set holding it, and a pair is two sets matched up in Python, but for a
close pair, one expression.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tcg.inbound.prefilter import SPACE, SPACE_RUN
from tcg.inbound.rules import InboundRule

PAIR = 2  # a slot of a pair of literal sets as one expression (ascii database; utf8: a close pair)
WHOLE = 3  # a slot of a whole rule as one expression (ascii or letters database: tcg.inbound.proxyrx)
# A pair of sets with other letters whose literals lie at most this many characters apart is
# one expression in the utf8 database (UTF-8 mode, ``(?s:.)`` a character: quick to compile at
# this size, and hyperscan then reports «новые инструкции», not every «инструкций»); a wider
# pair is matched up in Python from its literals' places (:meth:`InboundEngine._match_halves`)
UTF8_PAIR_GAP = 40

#: every character the rules' ``\s`` matches (Unicode ``re``; a test asks ``re``)
SPACES = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) \
    + "\u2028\u2029\u202f\u205f\u3000"
# A whitespace run inside a literal (prefilter.SPACE), as the rules' \s{1,n} matches it: in
# UTF-8 mode each such character; in the one-byte copy of a text (a character other than
# ASCII is its UTF-8 lead byte there) ASCII whitespace and the lead bytes of the others
# (which stand for more than whitespace too: a candidate more, never one fewer), so a phrase
# joined by NBSP or NEL is a candidate in the raw text as well as in the nfkc view, where
# NFKC may also widen one of its words ("Ĳ" -> "IJ") past the rule's bound.
_WS_UTF8 = b"[" + b"".join(b"\\x{%x}" % ord(c) for c in SPACES) + b"]{1,%d}" % SPACE_RUN
_WS_PROXY = b"[" + b"".join(b"\\x%02x" % b for b in sorted({c.encode("utf-8")[0] for c in SPACES})) \
    + b"]{1,%d}" % SPACE_RUN


def _literal(s: str, utf8: bool = False) -> tuple[bytes, int]:
    """(hyperscan expression, flags) for one prefilter literal: caseless, in UTF-8
    mode when it holds non-ASCII letters (hyperscan folds their case there), in
    byte mode otherwise (cheaper to compile). ``utf8``: for the utf8 database (UTF-8
    mode whatever the literal), else for the one-byte copy (:data:`_WS_PROXY`)."""
    import hyperscan

    wide = utf8 or not s.isascii()
    space = _WS_UTF8 if wide else _WS_PROXY
    body = space.join(b"".join(_char(c, wide) for c in piece) for piece in s.split(SPACE))
    flags = hyperscan.HS_FLAG_CASELESS
    if not s.isascii():
        flags |= hyperscan.HS_FLAG_UTF8
    return body, flags


def _char(c: str, wide: bool) -> bytes:
    """One literal character as a hyperscan expression; ``wide`` (UTF-8 mode): with the
    characters ``re`` folds to it case-insensitively and hyperscan does not (LONG S for
    s, ROUNDED VE for в: tcg.inbound.proxyrx.FOLDED), so the utf8 literals find what
    ``re`` finds."""
    def one(x: str) -> bytes:
        return x.encode("utf-8") if x.isalnum() and not x.isascii() else \
            b"\\x%02x" % ord(x) if x.isascii() else b"\\x{%x}" % ord(x)

    if not wide:
        return one(c)
    from tcg.inbound.proxyrx import FOLDED

    folds = [x for x, y in FOLDED.items() if y == c.lower()]
    return b"(?:" + b"|".join(map(one, [c, *folds])) + b")" if folds else one(c)


def whole_rule(rule: InboundRule) -> bool:
    """Whether the ascii database may hold ``rule`` as one expression
    (tcg.inbound.proxyrx): when its prefilter literals are all ASCII. On the one-byte
    copy every other character is its lead byte, so a rule of other letters would
    match there wherever those letters stand; and as one expression over the UTF-8 the
    Russian rules took tens of seconds to compile and scanned slower than their literals."""
    return bool(rule.prefilter) and all(x.isascii() for sets in rule.prefilter
                                        for literals in sets for x in literals)


def letters_rule(rule: InboundRule) -> bool:
    """Whether the letters database may hold ``rule`` as one expression: when each
    alternative has a set whose every literal holds a letter no ASCII character is
    (caselessly) in the letters copy, so every match holds a character outside ASCII
    (the letters copy is made only of a text with some, and only near them)."""
    from tcg.inbound.proxyrx import letters_byte

    def wide(literal: str) -> bool:
        return any((b := letters_byte(ch)) is not None and b >= 0x80 for ch in literal)

    return bool(rule.prefilter) and all(any(all(wide(x) for x in literals) for literals in sets)
                                        for sets in rule.prefilter)


def rule_expressions(compiled: Any, close_pairs: bool = True, whole: bool = True, letters: bool = True
                     ) -> tuple[list[tuple[int, int, int]], list[list[int]], dict[str, list[tuple[bytes, int, int]]]]:
    """(slots, utf8 slots, database name -> [(expression, flags, id)]) for the rules
    ``compiled`` (engine._Compiled, in order): a slot is (rule index, alternative, set 0/1,
    PAIR or WHOLE), an id of the ascii and letters databases is a slot, one of the utf8
    database an index of the utf8 slots (the slots holding that literal). ``close_pairs``,
    ``whole``, ``letters``: use those expressions (off: the fallbacks when hyperscan
    refuses one)."""
    import hyperscan

    from tcg.inbound.proxyrx import Untranslatable, letters_literal, whole_expression

    slots: list[tuple[int, int, int]] = []  # (rule index, alternative, 0/1 or PAIR)
    exprs: dict[str, list[tuple[bytes, int, int]]] = {"ascii": [], "utf8": [], "letters": []}
    utf8_ids: dict[tuple[bytes, int], int] = {}  # one expression per distinct literal
    utf8_slots: list[list[int]] = []
    for c in compiled:
        kind = ("ascii" if whole_rule(c.rule) else "letters" if letters and letters_rule(c.rule) else None) \
            if whole else None
        if kind is not None:
            try:
                expr = whole_expression(c.rule.regex, letters=kind == "letters")
            except Untranslatable:
                pass
            else:
                exprs[kind].append((expr, hyperscan.HS_FLAG_PREFILTER, len(slots)))
                slots.append((c.index, -1, WHOLE))
                continue
        for alt, sets in enumerate(c.rule.prefilter):
            # the ASCII literals of each set: all an ASCII text can hold
            plain = [[s for s in literals if s.isascii()] for literals in sets]
            if all(plain):
                body = [b"(?:" + b"|".join(_literal(s)[0] for s in literals) + b")" for literals in plain]
                # reach: the most characters the elements holding the two literals match,
                # so between the literals there are at most that less both their lengths
                inner = c.rule.prefilter_reach[alt] - sum(min(map(len, lits)) for lits in plain)
                gap = b"[\\x00-\\xff]{0,%d}" % inner if inner > 0 else b""  # hyperscan refuses {0,0}
                exprs["ascii"].append((gap.join(body), hyperscan.HS_FLAG_CASELESS, len(slots)))
                slots.append((c.index, alt, PAIR))
            ascii_alt = plain == [list(literals) for literals in sets]
            if ascii_alt and not letters:
                continue
            # in the letters copy too, even when all ASCII: there LONG S, DOTLESS I and
            # KELVIN SIGN are the letters re folds them to, not lead bytes
            bodies = [[letters_literal(s, SPACE, SPACE_RUN) for s in literals] for literals in sets] \
                if letters else [[None]]
            if ascii_alt and None in (b for group in bodies for b in group):
                continue
            if all(b is not None for group in bodies for b in group):
                gap = b""
                if len(sets) == 2:
                    inner = c.rule.prefilter_reach[alt] - sum(min(map(len, lits)) for lits in sets)
                    gap = b"[\\x00-\\xff]{0,%d}" % inner if inner > 0 else b""
                exprs["letters"].append((gap.join(b"(?:" + b"|".join(group) + b")"  # type: ignore[arg-type]
                                                  for group in bodies), 0, len(slots)))
                slots.append((c.index, alt, PAIR))
                continue
            apart = c.rule.prefilter_reach[alt] - sum(min(map(len, lits)) for lits in sets)
            if close_pairs and len(sets) == 2 and apart <= UTF8_PAIR_GAP:
                # a close pair: one expression, reported only where both occur
                expr = (b"(?s:.){0,%d}" % apart if apart > 0 else b"").join(
                    b"(?:" + b"|".join(_literal(s, utf8=True)[0] for s in literals) + b")" for literals in sets)
                utf8_slots.append([len(slots)])
                exprs["utf8"].append((expr, hyperscan.HS_FLAG_CASELESS | hyperscan.HS_FLAG_UTF8,
                                      len(utf8_slots) - 1))
                slots.append((c.index, alt, PAIR))
                continue
            for k, literals in enumerate(sets):
                for s in literals:
                    expr, flags = _literal(s, utf8=True)
                    lid = utf8_ids.get((expr, flags))
                    if lid is None:
                        lid = utf8_ids[(expr, flags)] = len(utf8_slots)
                        utf8_slots.append([])
                        exprs["utf8"].append((expr, flags | hyperscan.HS_FLAG_UTF8, lid))
                    if len(slots) not in utf8_slots[lid]:
                        utf8_slots[lid].append(len(slots))
                slots.append((c.index, alt, k))
    return slots, utf8_slots, exprs


def covered(compiled: Any, slots: list[tuple[int, int, int]],
            candidates: Callable[[str], dict[int, list[int]]]) -> set[int]:
    """The indices of the rules ``compiled`` (engine._Compiled) whose every ``re`` match
    in their examples (as written, with the letters ``re`` folds to them swapped in, in
    upper case, inside wider text) the databases just compiled cover: ``candidates``
    gives an end whose window, as ``set_window`` draws it for that kind of slot, holds
    the match. A fallback whose tables miss a fold loses the rule to ``re``, not the
    match."""
    from tcg.detect.hsdb import all_starts

    whole = {idx for idx, _alt, k in slots if k == WHOLE}
    good = {c.index for c in compiled if c.rule.prefilter}
    for c in compiled:
        if c.index not in good:
            continue
        c.set_window(c.index in whole)
        before, after = c.before, c.after
        for ex in c.rule.examples_match + c.rule.examples_no_match:
            for spelt in _spellings(ex):
                for text in (spelt, "padding " * 5 + spelt + " trailing", "\u00e9 " + spelt + " \u0436"):
                    ends = candidates(text).get(c.index, [])
                    for m in all_starts(c.pat, text):
                        if c.index in whole:
                            hit = any(m.end() <= e <= m.start() + before for e in ends)
                        else:
                            hit = any(m.start() < e <= m.end() and e - before <= m.start()
                                      and m.end() <= e + after for e in ends)
                        if not hit:
                            good.discard(c.index)
    return good


def _spellings(text: str) -> list[str]:
    """``text``, with the letters ``re`` folds to others swapped in (LONG S for s,
    KELVIN SIGN for k, ROUNDED VE for в…), and in upper case."""
    from tcg.inbound.proxyrx import FOLDED

    swaps: dict[str, list[str]] = {}
    for x, y in FOLDED.items():
        swaps.setdefault(y, []).append(x)
    rounds = max(map(len, swaps.values()))  # each look-alike of a letter in one spelling
    folded = ["".join(swaps[c.lower()][k % len(swaps[c.lower()])] if c.lower() in swaps else c
                      for c in text) for k in range(rounds)]
    return list(dict.fromkeys((text, *folded, text.upper())))
