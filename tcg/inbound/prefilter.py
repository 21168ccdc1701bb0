"""Prefilter literals for inbound rules, derived from each rule's parse tree.

hyperscan does not compile the rules themselves: Unicode-aware, caseless
patterns with bounded gaps took seconds to minutes to compile. It matches
plain literals instead (a database that compiles in well under a second), on
a lower-cased copy of the text, and Python ``re`` confirms each rule only
around the places those literals say it can match.

For every top-level alternative of a rule this module finds one or two literal
sets: every match of the alternative contains a string of the first set and,
after it, one of the second. One set alone is enough when it is rare; two
cut the windows to the places where both occur close together, so that a
rule anchored on common words ("send", "user") costs nothing on a text that
merely uses them. How rare a literal is comes from a crude model (letters,
punctuation, length) — crude, but it steers the choice to "instructions"
rather than "ignore", and to "<|im_" rather than "system".
"""

from __future__ import annotations

from typing import Any

# A lone literal set expected more often than this (about three letters per
# alternative) is not a prefilter; a rule left without one runs with re.
MAX_RARITY = 6e-5
# The second set of a pair may be as common as punctuation (":", "#", "<"), not a
# single letter: with a rare first set close by it still cuts most reports.
SECOND_MAX_RARITY = 0.05
# ... and for a second set with other letters, matched literal by literal (a callback a
# place): no lone common punctuation (":") and no short ASCII word ("dan", an Uzbek suffix),
# though "@" or "на адрес" will do
UTF8_NEAR_MAX = 0.005
PRODUCT_MAX = 32  # literal alternatives a set may expand into
# Characters of a literal kept: rarity saturates at eight, and a prefix of a literal
# every match contains is in every match too ("игнорируйте" -> "игнориру").
LITERAL_MAX = 8
SPACE_RUN = 8  # a whitespace run of at most this many characters may sit inside a literal
SPACE = "\0"  # stands for such a run (ASCII whitespace: the nfkc view maps the rest to " ")

Prefilter = tuple[tuple[tuple[str, ...], ...], ...]


def _char_rarity(c: str) -> float:
    if c == SPACE:
        return 0.15
    if c.isalpha():
        return 0.06
    if c.isdigit():
        return 0.03
    if c.isspace():
        return 0.15
    if c in "/.,:;-_'\"=()":
        return 0.03  # common in code, URLs and paths
    return 0.003  # other punctuation: "<|", "![" are rare in prose


# Words that are everywhere in prose and code: as a literal they would report nearly
# every line of a 5 MB tool result, whatever their length says.
COMMON = frozenset("""
the this that these those from with have has had will would your you are not for and but can
could must should need needs to in on at of by as or if then than when what which who all any
each every some more most other such only also just into onto out over under about after before
code data input output message messages prompt read open print return display show shows system
user users content context memory token tokens error value type file files name list dump load
post send run call use used set get add new make made see end start begin first last next line
text string number true false none null self class def import def function method object result
response request reply answer report summary note notes test tests check checks document page
include includes found find says written state status mode model models version option options
""".split())


# Stems of the nouns and adjectives a manual, a README or a tool's output is full of, in
# the rules' languages (a literal starting with one is as common as a COMMON word). Long
# words of other letters look rare to :func:`rarity`, yet «инструкций» or "buyruq" may
# stand in every sentence of a Russian or Uzbek manual: a pair of such a word and a rule's
# verb then holds in every paragraph, and each place costs a callback and a window of re.
# A rule's rarer sets (the verb with «предыдущие», "ignore" with "previous") are chosen
# before them.
COMMON_STEMS = tuple("""
инструкц команд правил сообщени указани установк ограничен систем данн содержим файл ключ
парол токен переменн истори настро пользова документ задач запрос сервер страниц ссылк сайт
верси
buyruq qoida rsatma fayl kalit parol token foydalan sozlam server versiya havola sahifa cheklov
instruct command rule guideline setting config key password secret link site server step
""".split())


def _common(s: str) -> bool:
    word = s.replace(SPACE, " ").strip().lower()
    return word in COMMON or word.startswith(COMMON_STEMS)


def rarity(strings: tuple[str, ...] | list[str]) -> float:
    """Expected frequency of a literal set by its letters alone (lower is rarer):
    what decides whether a set may be a prefilter at all."""
    total = 0.0
    for s in strings:
        p = 1.0
        for c in s[:8]:
            p *= _char_rarity(c)
        total += p
    return total


def cost(strings: tuple[str, ...] | list[str]) -> float:
    """:func:`rarity` with the COMMON words priced as what they are: it decides which
    of a rule's sets make its prefilter."""
    return sum(0.01 if _common(s) else rarity((s,)) for s in strings)


def _is_space_run(name: str, av: Any) -> bool:
    """``\\s{m,n}`` with 1 <= m and n <= SPACE_RUN."""
    if name != "MAX_REPEAT" or av[0] < 1 or av[1] > SPACE_RUN or len(av[2]) != 1:
        return False
    op, inner = av[2][0]
    return (str(op) == "IN" and len(inner) == 1 and str(inner[0][0]) == "CATEGORY"
            and str(inner[0][1]) == "CATEGORY_SPACE")


def _pure(op: Any, av: Any) -> set[str] | None:
    """The strings a pattern element matches when it is purely literal (a
    character, a one-character class, an alternation or group of literal
    sequences, a short whitespace run as SPACE), else None."""
    name = str(op)
    if name == "LITERAL":
        return {chr(av)}
    if name == "IN" and len(av) == 1 and str(av[0][0]) == "LITERAL":
        return {chr(av[0][1])}
    if _is_space_run(name, av):
        return {SPACE}
    if name == "SUBPATTERN":
        return _pure_seq(av[-1])
    if name in ("MAX_REPEAT", "MIN_REPEAT") and av[0] == 0 and av[1] == 1:
        got = _pure_seq(av[2])  # an optional piece: "instructions?"
        return None if got is None else got | {""}
    if name == "BRANCH":
        out: set[str] = set()
        for alt in av[1]:
            got = _pure_seq(alt)
            if got is None:
                return None
            out |= got
        return out if len(out) <= PRODUCT_MAX else None
    return None


def _pure_seq(seq: Any) -> set[str] | None:
    acc = {""}
    for op, av in seq:
        got = _pure(op, av)
        if got is None:
            return None
        acc = {a + b for a in acc for b in got}
        if len(acc) > PRODUCT_MAX:
            return None
    return acc


def _clean(cand: set[str] | tuple[str, ...] | None) -> tuple[str, ...] | None:
    """Each string cut to its rarest part of at most two words (a whitespace run
    between them), lower-cased; None when a string is nothing but whitespace.

    Any part of a string every match contains is in every match too, and short
    literals keep the database small: each whitespace run is a repeat hyperscan
    has to build an automaton for."""
    if not cand:
        return None
    out = set()
    for c in cand:
        words = [w for w in c.lower().split(SPACE) if w]
        if not words:
            return None
        parts = words + [a + SPACE + b for a, b in zip(words, words[1:], strict=False)]
        out.add(min(parts, key=lambda p: rarity((p,)))[:LITERAL_MAX])
    return _minimal(out)


def _minimal(strings: set[str]) -> tuple[str, ...]:
    """The strings without those that contain another one (it covers them)."""
    kept: list[str] = []
    for s in sorted(strings, key=len):
        if not any(k in s for k in kept):
            kept.append(s)
    return tuple(sorted(kept))


def _best(seq: Any) -> tuple[str, ...] | None:
    """The rarest literal set one of which every match of ``seq`` contains (by
    :func:`cost`: «исходные» rather than «инструкции» after it)."""
    sets = [s for _, _, s in _element_sets(seq)]
    usable = [s for s in sets if rarity(s) <= MAX_RARITY]
    if usable:
        return min(usable, key=cost)
    return min(sets, key=rarity) if sets else None


def _element_sets(seq: Any) -> list[tuple[int, int, tuple[str, ...]]]:
    """(first element, end element, literal set) for the elements of ``seq`` every
    match contains, in order; a chain of literal elements counts as one."""
    out: list[tuple[int, int, tuple[str, ...]]] = []
    chain: set[str] = {""}
    chain_at = -1
    items = list(seq)
    for i, (op, av) in enumerate(items + [(None, None)]):
        got = _pure(op, av) if op is not None else None
        if got is not None:
            product = {a + b for a in chain for b in got}
            if len(product) <= PRODUCT_MAX:
                if chain == {""}:
                    chain_at = i
                chain = product
                continue
        if chain != {""}:
            cleaned = _clean(chain)
            if cleaned:
                out.append((chain_at, i, cleaned))
        chain, chain_at = ({""}, -1) if got is None else (set(got), i)
        if op is None or got is not None:
            continue
        name = str(op)
        found: tuple[str, ...] | None = None
        if name in ("SUBPATTERN", "ATOMIC_GROUP"):
            found = _best(av[-1])
        elif name == "BRANCH":
            alts = [_best(alt) for alt in av[1]]
            if all(alts):
                found = tuple(sorted({s for a in alts for s in a}))  # type: ignore[union-attr]
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") and av[0] >= 1:
            found = _best(av[2])
        if found:
            out.append((i, i + 1, found))
    return out


def _pair(seq: Any) -> tuple[tuple[tuple[str, ...], ...], int, tuple[int, int]] | None:
    """One or two literal sets for one alternative, in match order; the most
    characters between the end of a literal of the first and the end of one of the
    second (0 for one set); and the span of a match around the end of its last
    literal (:func:`prefilter_of`); or None."""
    # a set with a common string by its letters ("you", "and") would report nearly every
    # line; among the rest, prefer sets without everyday words (COMMON)
    every = _element_sets(seq)
    sets = [s for s in every if rarity(s[2]) <= MAX_RARITY]
    if not sets:
        return None
    ranked = sorted(sets, key=lambda s: cost(s[2]))
    first = ranked[0]

    def span(s: tuple[int, int, tuple[str, ...]]) -> int:
        return _width(seq, min(s[0], first[0]), max(s[1], first[1]))

    # the companion least likely to occur near the first set by chance: its price
    # times the characters it may lie within (a far one also costs hyperscan more)
    second = min((s for s in ranked[1:] if _apart(s, first)), key=lambda s: (cost(s[2]) * span(s), s[0]),
                 default=None)
    if second is None:
        # the nearest other element every match holds, though common alone ("system"
        # then ":"): where the rare set occurs without it, nothing is reported. ASCII
        # sets only: hyperscan matches those as one expression; a set with other letters
        # is matched literal by literal, and a common one there costs a callback each
        near = [s for s in every if _apart(s, first) and rarity(s[2]) <= SECOND_MAX_RARITY
                and (all(x.isascii() for x in s[2] + first[2]) or _utf8_near(s[2]))]
        second = min(near, key=lambda s: (span(s), cost(s[2])), default=None)
    halves = None
    if second is None:
        # the rare set is one chain of literal elements ("новые инструкции для тебя"):
        # its two halves at a whitespace run, so that a word the chain holds, repeated
        # in every sentence of a text, is not a candidate unless the rest follows it
        halves = _split(seq, first)
    n = len(list(seq))
    if second is None and halves is None:
        return (first[2],), 0, (_width(seq, 0, first[1]), _width(seq, first[0], n))
    if halves is not None:
        a, b = halves
    else:
        assert second is not None
        a, b = sorted((first, second))
    return (a[2], b[2]), _width(seq, a[0], b[1]), (_width(seq, 0, b[1]), _width(seq, b[0], n))


def _utf8_near(literals: tuple[str, ...]) -> bool:
    """Whether a set may be the nearest second set of a pair with other letters (UTF8_NEAR_MAX)."""
    return rarity(literals) <= UTF8_NEAR_MAX and not any(
        x.isascii() and x.isalpha() and len(x) <= 3 for x in literals)


def _apart(s: tuple[int, int, tuple[str, ...]], t: tuple[int, int, tuple[str, ...]]) -> bool:
    """Whether two element sets share no element (a pair is one set after the other)."""
    return s[1] <= t[0] or t[1] <= s[0]


def _split(seq: Any, chain: tuple[int, int, tuple[str, ...]]
           ) -> tuple[tuple[int, int, tuple[str, ...]], tuple[int, int, tuple[str, ...]]] | None:
    """A chain of literal elements ``seq[chain[0]:chain[1]]`` cut in two at one of its
    whitespace runs: (left, right) element sets, every match holding a string of the
    left one and right after it one of the right; the cut whose sets are least likely
    to occur together by chance (at least one rare, neither commoner than
    SECOND_MAX_RARITY; both rare when either holds other letters: those pairs are
    matched literal by literal, a callback each), or None when the chain has no such cut."""
    items = list(seq)
    best: tuple[float, Any] | None = None
    cuts: list[tuple[int, int, Any, Any]] = [
        (k, k, _pure_seq(items[chain[0]:k]), _pure_seq(items[k:chain[1]]))
        for k in range(chain[0] + 1, chain[1]) if _is_space_run(str(items[k][0]), items[k][1])]
    whole = _pure_seq(items[chain[0]:chain[1]]) or set()
    if whole and all(SPACE in x.strip(SPACE) for x in whole):
        # every string of the chain cut at its first inner whitespace run, wherever the run
        # sits in the tree ("системн(?:ый\s{1,3}промпт|ое\s{1,3}сообщение)"): each match
        # holds one string, so a left part and, after it, a right part
        parts = [x.strip(SPACE).split(SPACE, 1) for x in whole]
        cuts.append((chain[1], chain[0], {p[0] for p in parts}, {p[1] for p in parts}))
    for left_end, right_start, left_raw, right_raw in cuts:
        left, right = _clean(left_raw), _clean(right_raw)
        if not left or not right:
            continue
        ascii_only = all(x.isascii() for x in left + right)
        if max(rarity(left), rarity(right)) > (SECOND_MAX_RARITY if ascii_only else MAX_RARITY) \
                or min(rarity(left), rarity(right)) > MAX_RARITY:
            continue
        price = cost(left) * cost(right)
        if best is None or price < best[0]:
            best = (price, ((chain[0], left_end, left), (right_start, chain[1], right)))
    return None if best is None else best[1]


def _width(seq: Any, start: int, end: int) -> int:
    """Most characters the elements ``seq[start:end]`` can match."""
    try:  # Python >= 3.11
        from re import _parser  # type: ignore[attr-defined]
    except ImportError:  # pragma: no cover - Python 3.10
        import sre_parse as _parser  # type: ignore[no-redef]

    sub = _parser.SubPattern(seq.state, list(seq)[start:end])
    return int(sub.getwidth()[1])


def _alternatives(seq: Any) -> list[Any]:
    """The top-level alternatives of a pattern: the branches of its one BRANCH
    when everything else at the top is zero-width (``\\b(?:a|b)`` parses so)."""
    items = list(seq)
    branches = [av for op, av in items if str(op) == "BRANCH"]
    rest = [op for op, _ in items if str(op) not in ("BRANCH", "AT")]
    if len(branches) == 1 and not rest:
        return list(branches[0][1])
    return [seq]


def prefilter_of(seq: Any) -> tuple[Prefilter, tuple[int, ...], tuple[int, int]]:
    """Per top-level alternative, one or two literal sets (see the module doc) and
    the reach between them; and (before, after): a match of the pattern starts at
    most ``before`` characters before the end of the last literal of its
    alternative's prefilter, and ends at most ``after`` characters after it — the
    confirmation window around a candidate. ((), (), (0, 0)) when an alternative has
    none, so the rule runs with re alone."""
    out = []
    gaps = []
    before = after = 0
    for alt in _alternatives(seq):
        pair = _pair(alt)
        if pair is None:
            return (), (), (0, 0)
        out.append(pair[0])
        gaps.append(pair[1])
        before, after = max(before, pair[2][0]), max(after, pair[2][1])
    return tuple(out), tuple(gaps), (before, after)
