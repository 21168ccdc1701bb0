"""Is the end of a stream a secret cut short? (The "started candidate" test.)

Two places need it, both where the ordinary rules cannot decide because the
secret never arrived whole:

* strict mode at end of stream (Masker.flush): ``printf ghp_<28 of 36 chars>``
  killed by a timeout leaves a token too short for its rule; released raw it
  would show most of the value. A tail that began at a secret rule's literal
  start and is still a prefix of one of that rule's matches is replaced by a
  ``<SECRET:partial:h8>`` placeholder instead.
* terminal mode after an idle release (Masker.release_idle): a key typed or
  written a byte at a time has its first bytes released when the hold timer
  runs out; the bytes after them must not be released while they still
  continue that candidate.

Only rules whose every match starts with a literal (an anchor such as
``AKIA`` or ``ghp_``) and whose category is masked are considered: the prefix
regexes are strict_bound's (_Viable), built only for an anchor that occurs.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from tcg._lean.reparse import parser as _p
from tcg.mask.anchors import _prefixes
from tcg.mask.strict_bound import _Viable, _viable_at

PARTIAL_RULE = "partial"  # the rule id a cut-off candidate's placeholder carries
_MASKED = ("secret", "pii")
_SPACE = frozenset(b" \t\r\n\f\v")


class TailCheck:
    """Anchors of the masked anchored rules -> their prefix regexes."""

    def __init__(self, rules: Any) -> None:
        exact: dict[bytes, list[_Viable]] = {}
        folded: dict[bytes, list[_Viable]] = {}
        for rule in rules:
            if rule.category not in _MASKED or getattr(rule, "block_end", None):
                continue  # references hide nothing; key blocks are masked to the end anyway
            try:
                tree = _p.parse(rule.regex.encode("utf-8"))
            except Exception:  # noqa: BLE001  (a rule the parser cannot read: not held for)
                continue
            pre = {p for p, _ in _prefixes(tree)}
            if not pre or not all(pre):
                continue
            ci = bool(tree.state.flags & re.IGNORECASE)
            viable = _Viable(rule.regex, 0, False, 0)
            for a in pre:
                (folded if ci else exact).setdefault(a.lower() if ci else a, []).append(viable)
        self._exact = exact
        self._folded = folded
        words = sorted({*exact, *folded}, key=len, reverse=True)
        # every anchor, caseless (an exact anchor is checked exactly below)
        self._rx = re.compile(b"|".join(re.escape(w) for w in words), re.IGNORECASE) if words else None
        self._longest = max((len(w) for w in words), default=0)
        self.longest = self._longest  # the longest anchor (how far back a candidate may start)
        self._heads = frozenset(w[:k] for w in exact for k in range(3, len(w) + 1))
        self._fheads = frozenset(w[:k] for w in folded for k in range(3, len(w) + 1))

    def anchor_end(self, view: bytes, held: int) -> bool:
        """Are the last ``held`` bytes of ``view`` all inside 3+ bytes of a masked
        rule's anchor at its end? (``AKI``, ``AKIA``: a candidate still starting.)"""
        for k in range(max(3, held), min(self._longest, len(view)) + 1):
            tail = view[-k:]
            if tail in self._heads or tail.lower() in self._fheads:
                return True
        return False

    def start(self, view: bytes, lo: int, n: int | None = None) -> int | None:
        """Earliest offset ``s >= lo`` at which a masked rule's anchor begins and
        ``view[s:n]`` is still a prefix of a match of that rule, with one unbroken run
        of non-blank bytes after the anchor (a token being cut off, not a line that
        merely names a keyword: ``mysql --password`` ends no value); None if none."""
        rx = self._rx
        n = len(view) if n is None else n
        if rx is None or lo >= n:
            return None
        low = view[lo:n].lower()
        pos = 0
        while True:
            m = rx.search(low, pos)
            if m is None:
                return None
            s = lo + m.start()
            # overlapping anchors of other lengths at the same start
            for k in range(min(self._longest, n - s), 0, -1):
                word = view[s : s + k]
                cands = [*self._exact.get(bytes(word), ()), *self._folded.get(bytes(word).lower(), ())]
                rest = view[s + k : n]
                if not cands or not rest or any(c in _SPACE for c in rest):
                    continue
                if any(_viable_at(c.get(), view, s, n) for c in cands):
                    return s
            pos = m.start() + 1


@functools.lru_cache(maxsize=8)
def tail_check(detector: Any) -> TailCheck:
    """One table per detector (built on the first stream end that needs it)."""
    return TailCheck(tuple(getattr(detector, "rules", ()) or ()))
