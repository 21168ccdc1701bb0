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
import warnings
from collections.abc import Iterable
from typing import Any

from tcg.mask.anchors import _prefixes

try:  # Python >= 3.11
    import re._parser as _p  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - Python 3.10
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import sre_parse as _p  # type: ignore[no-redef]

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
    """Built once per detector; ``hold_from(view)`` is cheap (regex + translate passes)."""

    def __init__(self, rules: Iterable[Any], *, decode_run: int = 0):
        exact: dict[bytes, int] = {}
        folded: dict[bytes, int] = {}
        # (width, alphabet table, leading context byte?, trailing context byte?)
        self.unanchored: list[tuple[int, bytes, int, int]] = []
        self.fold_width = 0
        self.decode_run = decode_run
        for rule in rules:
            width = int(rule.max_len)
            tree = _p.parse(rule.regex.encode("utf-8"))
            flags = tree.state.flags
            ci = bool(flags & re.IGNORECASE)
            if getattr(rule, "fold", False):
                self.fold_width = max(self.fold_width, width * 4)
                width *= 4
            pre = {p for p, _ in _prefixes(tree)}
            if pre and all(pre):
                table = folded if ci else exact
                for a in pre:
                    a = a.lower() if ci else a
                    table[a] = max(table.get(a, 0), width)
                continue
            nodes = list(tree)
            lead = 0
            if len(nodes) > 1 and tree[:1].getwidth()[1] == 1:
                nodes, lead = nodes[1:], 1  # a leading one-byte context (?:^|[^…]) may be anything
            # A trailing one-byte context (?:[^…]|$) that consumed the last byte ends the
            # match there: nothing after it is read. Only its `$` branch, which Python
            # also matches before a final "\n", makes that last "\n" undecided.
            trail = 0
            if len(nodes) > 1 and tree[-1:].getwidth()[1] == 1:
                trail = 1 if "AT_END" in str(tree[-1:].data) else 0
                nodes = nodes[:-1]
            chars = alphabet(nodes, bool(flags & re.DOTALL))
            if ci:
                chars = _fold_case(chars)
            self.unanchored.append((width, _table(chars), lead, trail))
        self.max_anchor_width = max([*exact.values(), *folded.values(), 0])

        def alt(words: Iterable[bytes]) -> re.Pattern[bytes] | None:
            ws = sorted(set(words), key=len, reverse=True)  # longest first at a position
            return re.compile(b"|".join(re.escape(w) for w in ws)) if ws else None

        def widest(table: dict[bytes, int]) -> dict[bytes, int]:
            # the longest anchor matching at a position stands for all its prefixes there
            return {a: max(w2 for a2, w2 in table.items() if a.startswith(a2)) for a in table}

        exact, folded = widest(exact), widest(folded)
        self.exact, self.folded = exact, folded

        # anchors grouped by width, so the wide few do not make every search long
        self._buckets: list[tuple[int, re.Pattern[bytes] | None, re.Pattern[bytes] | None]] = []
        lo_w = 0
        for hi_w in (64, 256, 1024, 1 << 30):
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

    def hold_from(self, view: bytes, lo: int = 0) -> int:
        """Earliest offset in ``view`` (>= lo) whose candidates may still depend on bytes
        after the end of ``view``; ``len(view)`` if none."""
        n = len(view)
        h = n
        # anchored rules: an occurrence of their literal start within their width
        for top, rx_exact, rx_folded in self._buckets:
            first = max(lo, n - top - CONTEXT)
            if first >= h:
                continue
            low = view[first:].lower() if rx_folded is not None else b""
            for rx, table, hay, off in ((rx_exact, self.exact, view, 0),
                                        (rx_folded, self.folded, low, first)):
                if rx is None:
                    continue
                search = rx.search
                m = search(hay, first - off)
                while m is not None:  # every start, overlaps included ("abc" hides "bcd")
                    s = m.start() + off
                    if s >= h:
                        break
                    if s + table[m.group()] + CONTEXT >= n:
                        h = s
                        break
                    m = search(hay, m.start() + 1)
        for k in range(1, min(self._longest, n - lo + 1)):
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
        for width, table, lead, trail in self.unanchored:
            start = max(lo, n - width - CONTEXT)
            if start >= h:
                continue
            end = n - 1 if trail and view.endswith(b"\n") else n
            marks = view[start : max(start, end)].translate(table)
            i = marks.rfind(b"\x00")
            # the foreign byte itself may still be the rule's leading context byte
            s = start if i < 0 else start + i + 1 - lead
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
