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

from tcg._lean.reparse import parser as _p
from tcg.mask.anchors import AnchorSet, _prefixes
from tcg.mask.strict_bound import _Viable, _viable_at

TYPE_CHECKING = False  # typing costs ~9 ms of import in a masking process that has not loaded it
if TYPE_CHECKING:
    from typing import Any

PARTIAL_RULE = "partial"  # the rule id a cut-off candidate's placeholder carries
_MASKED = ("secret", "pii")
_SPACE = frozenset(b" \t\r\n\f\v")


class TailCheck:
    """Anchors of the masked anchored rules -> their prefix regexes.

    ``exact``/``folded``: anchor -> indices into ``rules`` (tail_anchors);
    ``compiled``: the anchors' hyperscan database restored from the start-up
    cache. Anchor occurrences are found by an AnchorSet's scan (one hyperscan
    pass), the prefix regexes compiled only for an anchor that occurs."""

    def __init__(self, rules: Any, exact: dict[bytes, list[int]], folded: dict[bytes, list[int]],
                 compiled: Any = None) -> None:
        viable: dict[int, _Viable] = {}

        def of(i: int) -> _Viable:
            if i not in viable:
                viable[i] = _Viable(rules[i].regex, 0, False, 0)
            return viable[i]

        self._exact = {a: [of(i) for i in idx] for a, idx in exact.items()}
        self._folded = {a: [of(i) for i in idx] for a, idx in folded.items()}
        words = {*exact, *folded}
        self._set = AnchorSet(dict.fromkeys(exact, False), dict.fromkeys(folded, False), (),
                              compiled=compiled) if words else None
        self.longest = max((len(w) for w in words), default=0)  # how far back a candidate may start
        self._heads = frozenset(w[:k] for w in exact for k in range(3, len(w) + 1))
        self._fheads = frozenset(w[:k] for w in folded for k in range(3, len(w) + 1))

    def anchor_end(self, view: bytes, held: int) -> bool:
        """Are the last ``held`` bytes of ``view`` all inside 3+ bytes of a masked
        rule's anchor at its end? (``AKI``, ``AKIA``: a candidate still starting.)"""
        for k in range(max(3, held), min(self.longest, len(view)) + 1):
            tail = view[-k:]
            if tail in self._heads or tail.lower() in self._fheads:
                return True
        return False

    def start(self, view: bytes, lo: int, n: int | None = None) -> int | None:
        """Earliest offset ``s >= lo`` at which a masked rule's anchor begins and
        ``view[s:n]`` is still a prefix of a match of that rule, with one unbroken run
        of non-blank bytes after the anchor (a token being cut off, not a line that
        merely names a keyword: ``mysql --password`` ends no value); None if none."""
        anchors = self._set
        n = len(view) if n is None else n
        if anchors is None or lo >= n:
            return None
        for s, e, word, fold in anchors.occurrences(view[:n], lo):
            cands = (self._folded if fold else self._exact).get(word, ())
            rest = view[e:n]
            if not cands or not rest or any(c in _SPACE for c in rest):
                continue
            if any(_viable_at(c.get(), view, s, n) for c in cands):
                return s
        return None


def tail_anchors(rules: Any) -> tuple[dict[bytes, list[int]], dict[bytes, list[int]]]:
    """(exact, folded): each literal start of a masked, anchored rule (every match
    begins with one) -> the indices of the rules it starts; folded anchors of (?i)
    rules lower-cased. Parses every rule regex (~50 ms): cached (tail_check)."""
    exact: dict[bytes, list[int]] = {}
    folded: dict[bytes, list[int]] = {}
    for i, rule in enumerate(rules):
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
        for a in pre:
            (folded if ci else exact).setdefault(a.lower() if ci else a, []).append(i)
    return exact, folded


@functools.lru_cache(maxsize=8)
def tail_check(detector: Any) -> TailCheck:
    """One table per detector, built on the first stream end or hold that needs it:
    from the detector's signed start-up cache (tcg.detect.derived) when the rules
    and this code are unchanged — building it parses every rule regex and compiles
    the anchors, a ~70 ms stall of the first key held in a session otherwise."""
    from tcg.detect import derived

    rules = tuple(getattr(detector, "rules", ()) or ())
    fp = derived.fingerprint(rules, "tail", "")
    d = derived.load(detector, "tail", fp)
    if d is not None:
        try:
            return TailCheck(rules, {derived.s2b(a): [int(i) for i in idx] for a, idx in d["exact"]},
                             {derived.s2b(a): [int(i) for i in idx] for a, idx in d["folded"]},
                             derived.load_hs(d["hs_db"]) if d["hs_db"] else None)
        except Exception:  # noqa: BLE001 - unreadable (e.g. another hyperscan): rebuild
            pass
    exact, folded = tail_anchors(rules)
    check = TailCheck(rules, exact, folded)
    db = check._set.database if check._set is not None else None
    derived.store(detector, "tail", fp, {
        "exact": [[derived.b2s(a), idx] for a, idx in exact.items()],
        "folded": [[derived.b2s(a), idx] for a, idx in folded.items()],
        "hs_db": derived.dump_hs(db) if db is not None else "",
    })
    return check
