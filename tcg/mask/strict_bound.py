"""Strict mode's sound bound: from where on can a candidate still depend on future bytes?

The plain bound is ``n - W`` (W = the longest rule). Most rules are much
narrower, and most cannot even start at most positions, so strict mode holds
far less when it asks each rule (all derived from the rule data):

- a rule whose every match starts with a literal (``AKIA``, ``ghp_``, ``-----BEGIN R``,
  ``aws``…) can only have an undecided candidate at an occurrence of that literal
  (or of a prefix of it at the very end) no further back than its own width;
- any other rule can only have one on a run of bytes its regex can consume at
  all (its *alphabet*; the first and last byte may be a one-byte context like
  ``(?:^|[^A-Za-z0-9])`` / ``(?:[^A-Za-z0-9]|$)``), no further back than its width;
- a base64 run the engine decodes is undecided while it touches the end and is
  still short enough (<= MAX_RUN) to be decoded;
- homoglyph-folded rules fall back to their (4x) width when non-ASCII bytes are near.

Every test is an over-approximation of "the engine's candidate at s may read a
byte >= n", so the bound only ever holds more than necessary: output content is
unchanged (chunk invariance), only released earlier.
"""

from __future__ import annotations

import re

from tcg._lean.reparse import parser as _p
from tcg._lean.threads import allocate_lock  # not threading: ~1.5 ms before the first masked byte
from tcg.mask.anchors import _prefixes

TYPE_CHECKING = False  # typing costs ~9 ms of import before the first masked byte
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

ALL = frozenset(range(256))
_SPACE = frozenset(b" \t\n\r\x0b\x0c")
_DIGIT = frozenset(b"0123456789")
_WORD = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_CATS = {
    "CATEGORY_SPACE": _SPACE, "CATEGORY_NOT_SPACE": ALL - _SPACE,
    "CATEGORY_DIGIT": _DIGIT, "CATEGORY_NOT_DIGIT": ALL - _DIGIT,
    "CATEGORY_WORD": _WORD, "CATEGORY_NOT_WORD": ALL - _WORD,
    "CATEGORY_LINEBREAK": frozenset(b"\n"), "CATEGORY_NOT_LINEBREAK": ALL - frozenset(b"\n"),
}
B64 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-=")
CONTEXT = 2


def _fold_case(chars: set[int]) -> set[int]:
    out = set(chars)
    for c in chars:
        if 65 <= c <= 90 or 97 <= c <= 122:
            out.add(c ^ 0x20)
    return out


def _in_set(items: Any) -> frozenset[int]:
    neg = False
    chars: set[int] = set()
    for op, av in items:
        name = str(op)
        if name == "NEGATE":
            neg = True
        elif name == "LITERAL":
            chars.add(av)
        elif name == "RANGE":
            chars.update(range(av[0], av[1] + 1))
        elif name == "CATEGORY":
            chars |= _CATS.get(str(av), ALL)
        else:
            return ALL
    return ALL - chars if neg else frozenset(chars)


def alphabet(seq: Any, dotall: bool) -> set[int]:
    """Every byte any node of ``seq`` can consume (case folding applied by the caller)."""
    out: set[int] = set()
    for op, av in seq:
        name = str(op)
        if name == "LITERAL":
            out.add(av)
        elif name == "NOT_LITERAL":
            out |= ALL - {av}
        elif name == "ANY":
            out |= ALL if dotall else ALL - {10}
        elif name == "IN":
            out |= _in_set(av)
        elif name == "SUBPATTERN":
            out |= alphabet(av[3], dotall)
        elif name == "BRANCH":
            for sub in av[1]:
                out |= alphabet(sub, dotall)
        elif name in ("MAX_REPEAT", "MIN_REPEAT"):
            out |= alphabet(av[2], dotall)
        elif name == "AT":
            pass
        else:
            return set(ALL)
    return out


def _table(chars: Iterable[int]) -> bytes:
    """translate() table: member bytes -> 1, others -> 0 (then rfind(b"\\0") finds a foreigner)."""
    s = set(chars)
    return bytes(1 if b in s else 0 for b in range(256))


class StrictBound:
    """Built once per detector; ``hold_from(view)`` is cheap (regex + translate passes).

    ``for_detector`` restores the derived tables (and the serialized anchor
    database) from the detector's signed start-up cache (tcg.detect.derived)."""

    def __init__(self, rules: Iterable[Any], *, decode_run: int = 0,
                 state: dict[str, Any] | None = None):
        self._setup(state if state is not None else _derive(rules), decode_run)

    @classmethod
    def for_detector(cls, detector: Any, decode_run: int = 0) -> StrictBound:
        from tcg.detect import derived

        rules = tuple(detector.rules)
        fp = derived.fingerprint(rules, "strict-bound", "")
        state = derived.load(detector, "strict-bound", fp)
        if state is not None:
            try:
                return cls(rules, decode_run=decode_run, state=_state_from_json(state))
            except Exception:  # noqa: BLE001
                pass  # unreadable (e.g. a hyperscan version change): rebuild
        state = _derive(rules)
        bound = cls(rules, decode_run=decode_run, state=state)
        if bound._hs is not None:
            derived.store(detector, "strict-bound", fp, _state_to_json(state, bound._hs[0]))
        return bound

    def _setup(self, st: dict[str, Any], decode_run: int) -> None:
        self.decode_run = decode_run
        self.fold_width = st["fold_width"]
        # (width, alphabet table, leading context byte?, trailing context byte?)
        self.unanchored: list[tuple[int, bytes, int, int]] = st["unanchored"]
        viables = [_Viable(*a) for a in st["viables"]]
        # per unanchored rule: (prefix-closure regex + \Z, regex for a `$` before a final "\n")
        self._viable: list[_Viable] = [viables[i] for i in st["unanchored_viable"]]
        # (anchor, caseless) -> the viable-prefix regexes of the rules it starts
        self._anchor_rules: dict[tuple[bytes, bool], list[Any]] = {
            (a, ci): [viables[i] for i in idx] for a, ci, idx in st["anchor_rules"]}
        exact: dict[bytes, int] = st["exact"]
        folded: dict[bytes, int] = st["folded"]
        self.max_anchor_width = max([*exact.values(), *folded.values(), 0])

        def alt(words: Iterable[bytes]) -> re.Pattern[bytes] | None:
            ws = sorted(set(words), key=len, reverse=True)  # longest first at a position
            return re.compile(b"|".join(re.escape(w) for w in ws)) if ws else None

        self.exact, self.folded = exact, folded
        top = max([*exact.values(), *folded.values(), 0])
        hs_db = st.get("hs_db")
        self._hs = _anchor_db(exact, folded, top + CONTEXT, hs_db)
        self._hs_lock = allocate_lock()
        # Without hyperscan: the anchors as regexes, grouped by width so that the wide
        # few do not make every search long (with it, the regexes are not needed).
        self._buckets: list[tuple[int, re.Pattern[bytes] | None, re.Pattern[bytes] | None]] = []
        lo_w = 0
        for hi_w in (64, 256, 1024, 1 << 30) if self._hs is None else ():
            ex = [a for a, w in exact.items() if lo_w < w <= hi_w]
            fo = [a for a, w in folded.items() if lo_w < w <= hi_w]
            if ex or fo:
                top = max(w for a, w in [*exact.items(), *folded.items()] if lo_w < w <= hi_w)
                self._buckets.append((top, alt(ex), alt(fo)))
            lo_w = hi_w
        self._partial_exact = {a[:k]: w for a, w in exact.items() for k in range(1, len(a))}
        self._partial_folded = {a[:k]: w for a, w in folded.items() for k in range(1, len(a))}
        self._longest = max((len(a) for a in (*exact, *folded)), default=1)
        self._b64 = _table(B64)

    def _first_viable(self, k: int, view: bytes, body_from: int, lead: int) -> int:
        """Earliest candidate start (lead byte included) from ``body_from`` on whose
        rest of ``view`` is a prefix of a match of rule ``k``; ``len(view)`` if none."""
        rx, at_end = self._viable[k].get()  # type: ignore[misc]
        n = len(view)
        best = n
        m = rx.search(view, body_from, n)
        if m is not None:
            best = m.start()
        # a `$` matches before a final "\n" now, and no longer once more bytes arrive
        if at_end is not None and view.endswith(b"\n") and body_from < n - 1:
            m = at_end.search(view, body_from, n - 1)
            if m is not None:
                best = min(best, m.start())
        return best - lead if best < n else n

    def _hs_anchors(self, view: bytes, lo: int, n: int, precise: bool = False) -> int:
        """The anchored part of hold_from with one hyperscan scan of the last
        ``top + CONTEXT`` bytes: every occurrence of every anchor (overlaps
        included), exact or caseless. The database reports an anchor only where
        its own width reaches the end (a minimum end offset per pattern), so a
        common short anchor (``co``) costs nothing further back. ``precise``: an
        occurrence holds only if the rest of the view can still begin a match of
        one of the rules the anchor starts (see _viable_prefix)."""
        db, spans, span_len, keys = self._hs  # type: ignore[misc]  # only called when the database exists
        first = n - span_len
        found: list[tuple[int, int]] = []

        def on_match(rid: int, _f: int, to: int, _fl: int, _c: Any) -> None:
            s = first + to - spans[rid]
            if s >= lo:
                found.append((s, rid))

        seg = view[first:] if first >= 0 else b"\0" * -first + view
        with self._hs_lock:  # one scratch per database: scans must not overlap
            db.scan(seg, match_event_handler=on_match)
        if not precise:
            return min((s for s, _ in found), default=n)
        for s, rid in sorted(found):
            if any(_viable_at(v.get(), view, s, n) for v in self._anchor_rules.get(keys[rid], ())):
                return s
        return n

    def hold_from(self, view: bytes, lo: int = 0, *, precise: bool = False) -> int:
        """Earliest offset in ``view`` (>= lo) whose candidates may still depend on bytes
        after the end of ``view``; ``len(view)`` if none.

        ``precise``: a candidate start holds only if the bytes from it to the end can
        still be a prefix of a match of its rule (a regex derived from the rule's, see
        _viable_prefix), not merely an occurrence of its literal start or a run of its
        alphabet. A regex search per rule: the masker asks for it only when output
        pauses (release_idle), where it lets a finished line through that rules whose
        whitespace classes may span a line break would otherwise hold."""
        n = len(view)
        h = n
        # anchored rules: an occurrence of their literal start within their width
        if self._hs is not None:
            h = self._hs_anchors(view, lo, n, precise)
        for top, rx_exact, rx_folded in (self._buckets if self._hs is None else ()):
            first = max(lo, n - top - CONTEXT)
            if first >= h:
                continue
            low = view[first:].lower() if rx_folded is not None else b""
            for rx, widths, hay, off in ((rx_exact, self.exact, view, 0),
                                        (rx_folded, self.folded, low, first)):
                if rx is None:
                    continue
                search = rx.search
                m = search(hay, first - off)
                while m is not None:  # every start, overlaps included ("abc" hides "bcd")
                    s = m.start() + off
                    if s >= h:
                        break
                    if s + widths[m.group()] + CONTEXT >= n:
                        h = s
                        break
                    m = search(hay, m.start() + 1)
        for k in range(1, min(self._longest, n - lo + 1)):  # a prefix of an anchor at the end
            s = n - k
            if s >= h:
                continue
            tail = view[s:]
            w = self._partial_exact.get(tail)
            if w is None:
                w = self._partial_folded.get(tail.lower())
            if w is not None:
                h = s
        # other rules: a run of their alphabet reaching the end, within their width
        for k, (width, table, lead, trail) in enumerate(self.unanchored):
            start = max(lo, n - width - CONTEXT)
            if start >= h:
                continue
            end = n - 1 if trail and view.endswith(b"\n") else n
            marks = view[start : max(start, end)].translate(table)
            i = marks.rfind(b"\x00")
            # the foreign byte itself may still be the rule's leading context byte
            s = start if i < 0 else start + i + 1 - lead
            if s < h and precise and self._viable[k].get() is not None:
                s = self._first_viable(k, view, start if i < 0 else start + i + 1, lead)
            if s < h:
                h = s
        # a base64 run the engine may still decode
        if self.decode_run:
            start = max(lo, n - self.decode_run - 1)
            i = view[start:].translate(self._b64).rfind(b"\x00")
            run_start = start + i + 1 if i >= 0 else -1
            if run_start >= 0 and run_start < n:
                h = min(h, max(lo, run_start - 1))
        # homoglyph folding: non-ASCII near the end keeps a folded rule's width
        if self.fold_width:
            start = max(lo, n - self.fold_width - CONTEXT)
            if start < h and not view[start:].isascii():
                h = start
        return max(h, lo)


def _derive(rules: Iterable[Any]) -> dict[str, Any]:
    """The tables StrictBound works from, derived from the rule regexes (JSON-able
    through _state_to_json; the anchor database is compiled by _setup)."""
    exact: dict[bytes, int] = {}
    folded: dict[bytes, int] = {}
    fold_width = 0
    unanchored: list[tuple[int, bytes, int, int]] = []
    viables: list[tuple[str, int, bool, int]] = []  # _Viable arguments
    unanchored_viable: list[int] = []
    anchor_rules: dict[tuple[bytes, bool], list[int]] = {}
    for rule in rules:
        width = int(rule.max_len)
        tree = _p.parse(rule.regex.encode("utf-8"))
        flags = tree.state.flags
        ci = bool(flags & re.IGNORECASE)
        if getattr(rule, "fold", False):
            fold_width = max(fold_width, width * 4)
            width *= 4
        pre = {p for p, _ in _prefixes(tree)}
        if pre and all(pre):
            table = folded if ci else exact
            viables.append((rule.regex, 0, False, 0))
            for a in pre:
                a = a.lower() if ci else a
                table[a] = max(table.get(a, 0), width)
                anchor_rules.setdefault((a, ci), []).append(len(viables) - 1)
            continue
        nodes = list(tree)
        lead = 0
        if len(nodes) > 1 and tree[:1].getwidth()[1] == 1:
            nodes, lead = nodes[1:], 1  # a leading one-byte context (?:^|[^…]) may be anything
        # A trailing one-byte context (?:[^…]|$) that consumed the last byte ends the
        # match there: nothing after it is read. Only its `$` branch, which Python
        # also matches before a final "\n", makes that last "\n" undecided.
        trail = 0
        strip = False
        if len(nodes) > 1 and tree[-1:].getwidth()[1] == 1:
            trail = 1 if "AT_END" in str(tree[-1:].data) else 0
            nodes, strip = nodes[:-1], True
        chars = alphabet(nodes, bool(flags & re.DOTALL))
        if ci:
            chars = _fold_case(chars)
        unanchored.append((width, _table(chars), lead, trail))
        viables.append((rule.regex, lead, strip, trail))
        unanchored_viable.append(len(viables) - 1)
    # widest first: once a wide rule has moved the bound back, narrower ones are skipped
    order = sorted(range(len(unanchored)), key=lambda i: -unanchored[i][0])

    def widest(table: dict[bytes, int]) -> dict[bytes, int]:
        # the longest anchor matching at a position stands for all its prefixes there
        return {a: max(w2 for a2, w2 in table.items() if a.startswith(a2)) for a in table}

    return {
        "exact": widest(exact), "folded": widest(folded), "fold_width": fold_width,
        "unanchored": [unanchored[i] for i in order], "viables": viables,
        "unanchored_viable": [unanchored_viable[i] for i in order],
        "anchor_rules": [(a, ci, idx) for (a, ci), idx in anchor_rules.items()],
    }


def _state_to_json(st: dict[str, Any], hs_db: Any) -> dict[str, Any]:
    from tcg.detect.derived import b2s, dump_hs

    return {
        "exact": [[b2s(a), w] for a, w in st["exact"].items()],
        "folded": [[b2s(a), w] for a, w in st["folded"].items()],
        "fold_width": st["fold_width"],
        "unanchored": [[w, b2s(t), lead, trail] for w, t, lead, trail in st["unanchored"]],
        "viables": [list(v) for v in st["viables"]],
        "unanchored_viable": st["unanchored_viable"],
        "anchor_rules": [[b2s(a), ci, idx] for a, ci, idx in st["anchor_rules"]],
        "hs_db": dump_hs(hs_db),
    }


def _state_from_json(d: dict[str, Any]) -> dict[str, Any]:
    from tcg.detect.derived import load_hs, s2b

    return {
        "exact": {s2b(a): int(w) for a, w in d["exact"]},
        "folded": {s2b(a): int(w) for a, w in d["folded"]},
        "fold_width": int(d["fold_width"]),
        "unanchored": [(int(w), s2b(t), int(lead), int(trail)) for w, t, lead, trail in d["unanchored"]],
        "viables": [(str(r), int(lead), bool(strip), int(trail)) for r, lead, strip, trail in d["viables"]],
        "unanchored_viable": [int(i) for i in d["unanchored_viable"]],
        "anchor_rules": [(s2b(a), bool(ci), [int(i) for i in idx]) for a, ci, idx in d["anchor_rules"]],
        "hs_db": load_hs(d["hs_db"]),
    }


def _anchor_db(exact: dict[bytes, int], folded: dict[bytes, int], span_len: int,
               compiled: Any = None) -> tuple[Any, list[int], int, list[tuple[bytes, bool]]] | None:
    """A hyperscan database of every anchor (folded ones caseless) for a scan of the
    last ``span_len`` bytes (left-padded with NULs when the view is shorter): an
    anchor ``a`` of width ``w`` matters only when it starts at or after
    ``span_len - w - CONTEXT``, i.e. ends at or after that + ``len(a)``. None
    without hyperscan: then hold_from searches the anchors with ``re``.
    ``compiled``: the database as restored from the start-up cache."""
    try:
        from tcg._lean import hs as hyperscan
    except ImportError:  # pragma: no cover - the re engine
        return None
    items = [(a, w, 0) for a, w in exact.items()]
    items += [(a, w, hyperscan.HS_FLAG_CASELESS) for a, w in folded.items()]
    if not items or any(b"\0" in a for a, _, _ in items):
        return None  # (the NUL padding must not complete an anchor)
    keys = [(a, f != 0) for a, _, f in items]
    if compiled is not None:
        return compiled, [len(a) for a, _, _ in items], span_len, keys
    # hyperscan's stubs lag its API (ExpressionExt is missing from them)
    ext = [hyperscan.ExpressionExt(hyperscan.HS_EXT_FLAG_MIN_OFFSET,  # type: ignore[attr-defined]
                                   min_offset=max(len(a), span_len - w - CONTEXT + len(a)))
           for a, w, _ in items]
    try:
        db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        db.compile(expressions=[b"".join(b"\\x%02x" % c for c in a) for a, _, _ in items],
                   ids=list(range(len(items))), flags=[f for _, _, f in items], ext=ext)
    except (hyperscan.error, TypeError):  # pragma: no cover - fall back to re
        return None
    return db, [len(a) for a, _, _ in items], span_len, keys


_CAT = {"CATEGORY_DIGIT": rb"\d", "CATEGORY_NOT_DIGIT": rb"\D", "CATEGORY_SPACE": rb"\s",
        "CATEGORY_NOT_SPACE": rb"\S", "CATEGORY_WORD": rb"\w", "CATEGORY_NOT_WORD": rb"\W"}


class _Unsupported(Exception):
    pass


def _lit(c: int) -> bytes:
    return b"\\x%02x" % c


def _one(op: str, av: Any) -> bytes:
    """A regex for a one-byte node (LITERAL, NOT_LITERAL, ANY, IN)."""
    if op == "LITERAL":
        return _lit(av)
    if op == "NOT_LITERAL":
        return b"[^" + _lit(av) + b"]"
    if op == "ANY":
        return b"."
    out: list[bytes] = []
    for iop, iav in av:
        name = str(iop)
        if name == "NEGATE":
            out.insert(0, b"^")
        elif name == "LITERAL":
            out.append(_lit(iav))
        elif name == "RANGE":
            out.append(_lit(iav[0]) + b"-" + _lit(iav[1]))
        elif name == "CATEGORY" and str(iav) in _CAT:
            out.append(_CAT[str(iav)])
        else:
            raise _Unsupported(name)
    return b"[" + b"".join(out) + b"]"


def _whole(seq: Any) -> bytes:
    """``seq`` as a regex again, assertions dropped (they only ever reject)."""
    out = []
    for op, av in seq:
        name = str(op)
        if name in ("LITERAL", "NOT_LITERAL", "ANY", "IN"):
            out.append(_one(name, av))
        elif name in ("SUBPATTERN", "ATOMIC_GROUP"):
            inner = av[-1]
            if name == "SUBPATTERN" and (av[1] or av[2]):
                raise _Unsupported("local flags")
            out.append(b"(?:" + _whole(inner) + b")")
        elif name == "BRANCH":
            out.append(b"(?:" + b"|".join(_whole(a) for a in av[1]) + b")")
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            lo_, hi_, inner = av
            hi = b"" if hi_ == _p.MAXREPEAT else b"%d" % hi_
            out.append(b"(?:" + _whole(inner) + b"){%d,%s}" % (lo_, hi))
        elif name == "AT":
            continue
        elif name in ("ASSERT", "ASSERT_NOT") and av[0] < 0:
            continue  # a lookbehind reads nothing after the match
        else:
            raise _Unsupported(name)  # lookahead, back-reference: not modelled
    return b"".join(out)


def _prefix(seq: Any) -> bytes:
    """A regex matching every prefix (the empty one included) of what ``seq`` matches."""
    items = list(seq)
    if not items:
        return b""
    op, av = items[0]
    name = str(op)
    rest = items[1:]
    if name in ("AT",) or (name in ("ASSERT", "ASSERT_NOT") and av[0] < 0):
        return _prefix(rest)
    if name in ("LITERAL", "NOT_LITERAL", "ANY", "IN"):
        head_whole, head_prefix = _one(name, av), b""
    elif name in ("SUBPATTERN", "ATOMIC_GROUP"):
        if name == "SUBPATTERN" and (av[1] or av[2]):
            raise _Unsupported("local flags")
        head_whole, head_prefix = _whole(av[-1]), _prefix(av[-1])
    elif name == "BRANCH":
        head_whole = b"(?:" + b"|".join(_whole(a) for a in av[1]) + b")"
        head_prefix = b"(?:" + b"|".join(_prefix(a) for a in av[1]) + b")"
    elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        lo_, hi_, inner = av
        w, pfx = _whole(inner), _prefix(inner)
        hi = b"" if hi_ == _p.MAXREPEAT else b"%d" % hi_
        head_whole = b"(?:" + w + b"){%d,%s}" % (lo_, hi)
        if hi_ == 0:
            head_prefix = b""
        else:
            # a prefix of x^j (j <= hi): some whole x's, then a prefix of one more
            more = b"*" if hi_ == _p.MAXREPEAT else b"{0,%d}" % (hi_ - 1)
            head_prefix = b"(?:" + w + b")" + more + b"(?:" + pfx + b")"
    else:
        raise _Unsupported(name)
    if not rest:
        return b"(?:" + head_prefix + b")" if name not in ("LITERAL", "NOT_LITERAL", "ANY", "IN") \
            else head_whole + b"?"
    # either we are still inside the head, or the head is whole and the rest has begun
    tail = b"(?:" + head_whole + b")(?:" + _prefix(rest) + b")"
    inside = head_whole + b"?" if name in ("LITERAL", "NOT_LITERAL", "ANY", "IN") \
        else b"(?:" + head_prefix + b")"
    return b"(?:" + tail + b"|" + inside + b")"


class _Viable:
    """A rule's _viable_prefix regexes, compiled on first use: ~2 ms a rule, and only
    the rules a pause actually asks about need them (building all cost 0.4 s).
    Built from the rule regex: ``lead`` leading nodes dropped, the last one too
    when ``strip`` (a one-byte context), ``trail`` as in _viable_prefix."""

    __slots__ = ("_args", "_done", "_value")

    def __init__(self, regex: str, lead: int, strip: bool, trail: int):
        self._args = (regex, lead, strip, trail)
        self._done = False
        self._value: Any = None

    def get(self) -> tuple[re.Pattern[bytes], re.Pattern[bytes] | None] | None:
        if not self._done:
            regex, lead, strip, trail = self._args
            tree = _p.parse(regex.encode("utf-8"))
            nodes = list(tree)[lead:]
            if strip:
                nodes = nodes[:-1]
            self._value = _viable_prefix(nodes, tree.state.flags, trail)
            self._done = True
        return self._value  # type: ignore[no-any-return]


def _viable_at(viable: Any, view: bytes, s: int, n: int) -> bool:
    """Can a match starting at ``s`` still depend on bytes after ``n``? (None: maybe.)"""
    if viable is None:
        return True
    rx, at_end = viable
    if rx.match(view, s, n):
        return True
    return bool(at_end is not None and n - 1 > s and view.endswith(b"\n")
                and at_end.match(view, s, n - 1))


def _has_end(seq: Any) -> bool:
    """Does ``seq`` hold a ``$`` (not ``\\Z``) anywhere?"""
    for op, av in seq:
        name = str(op)
        if name == "AT" and str(av) == "AT_END":
            return True
        if name in ("SUBPATTERN", "ATOMIC_GROUP", "ASSERT", "ASSERT_NOT"):
            if _has_end(av[-1]):
                return True
        elif name == "BRANCH":
            if any(_has_end(a) for a in av[1]):
                return True
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") and _has_end(av[2]):
            return True
    return False


def _viable_prefix(nodes: Any, flags: int, trail: int
                   ) -> tuple[re.Pattern[bytes], re.Pattern[bytes] | None] | None:
    """Regexes for StrictBound._first_viable, or None when the rule uses something
    not modelled here (a lookahead, a back-reference): then the alphabet test alone
    decides. Both regexes match from a candidate start to the end of the string:

    * the first when the bytes are a non-empty prefix of a match of ``nodes``;
    * the second (None if not needed) when a `$` of the rule could match before a
      final "\n": with ``trail`` (the rule's `(?:[^…]|$)` context, stripped from
      ``nodes``) that needs a whole match of ``nodes``; a `$` elsewhere, a prefix.
      Under MULTILINE `$` is an end of line, which a final "\n" already decides.

    Dropping assertions only makes more prefixes viable: the test errs on holding."""
    try:
        body, whole = _prefix(nodes), _whole(nodes)
    except (_Unsupported, RecursionError):
        return None
    keep = flags & (re.IGNORECASE | re.DOTALL)
    # (?=[\s\S]) : a candidate starts on a byte; the empty prefix is no candidate
    start = b"(?=[\\s\\S])(?:"
    try:
        rx = re.compile(start + body + b")\\Z", keep)
        at_end = None
        if not flags & re.MULTILINE:
            if _has_end(nodes):
                at_end = rx
            elif trail:
                at_end = re.compile(start + whole + b")\\Z", keep)
    except re.error:
        return None
    return rx, at_end
