"""Terminal mode's cheap "could this tail begin a secret?" test.

Derived from the rule data, not hand-written: for each rule the literal
strings every match starts with (``AKIA``/``A3T``, ``ghp_``, ``sk-``,
``-----BEGIN``, ``xox``…), computed from the regex parse tree; a rule whose
matches have no literal start of >= MIN_ANCHOR bytes (generic shapes, e-mail,
card numbers) contributes its keywords instead, and a rule with neither
contributes nothing (terminal mode never holds for it: see docs/masking.md).

A tail is held when it contains an anchor occurrence on its last line, or ends
with the first MIN_PARTIAL+ bytes of an anchor. Anchors that come from a rule
starting with ``\\b`` must sit on a word boundary, so ``disk-`` does not hold
for ``sk-``. Rules whose matches start with a literal of >= 4 bytes have no
leading ``\\b`` (a token glued to a word, ``%3Dghp_…``, is still a token), so
their anchors hold anywhere; a partial anchor of fewer than MIN_GLUED bytes
still needs the boundary (``disk-`` is not held as the start of ``sk-proj-``:
releasing those 3 bytes of a public prefix leaks nothing, and ``-proj-`` is
held when it comes). Typing ``ls`` or ``hello`` matches nothing here.
"""

from __future__ import annotations

import re

from tcg._lean.reparse import parser as _p
from tcg._lean.threads import allocate_lock  # not threading: ~1.5 ms before the first masked byte

TYPE_CHECKING = False  # typing costs ~9 ms of import before the first masked byte
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

MIN_ANCHOR = 3
MIN_PARTIAL = 3
MIN_GLUED = 4  # shortest partial anchor held when glued to a word character
_MAX_PREFIX = 12
_MAX_SET = 64
_WORD = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def _prefixes(items: object, depth: int = 0) -> set[tuple[bytes, bool]]:
    """{(literal prefix, covers-all-of-items)} over all paths through ``items``."""
    result: set[tuple[bytes, bool]] = {(b"", True)}
    for op, av in items:  # type: ignore[attr-defined]
        nxt: set[tuple[bytes, bool]] = set()
        item = _item(str(op), av, depth)
        for p, done in result:
            if not done or len(p) >= _MAX_PREFIX:
                nxt.add((p, False))
                continue
            for q, d2 in item:
                nxt.add(((p + q)[:_MAX_PREFIX], d2))
        if len(nxt) > _MAX_SET:
            return {(b"", False)}
        result = nxt
        if not any(done for _, done in result):
            break
    return result


def _item(name: str, av: object, depth: int) -> set[tuple[bytes, bool]]:
    if depth > 20:
        return {(b"", False)}
    if name == "LITERAL":
        return {(bytes([av]), True)}  # type: ignore[list-item]
    if name == "AT":
        return {(b"", True)}
    if name == "SUBPATTERN":
        return _prefixes(av[3], depth + 1)  # type: ignore[index]
    if name == "BRANCH":
        out: set[tuple[bytes, bool]] = set()
        for sub in av[1]:  # type: ignore[index]
            out |= _prefixes(sub, depth + 1)
        return out
    if name == "IN":
        chars: list[int] = []
        for iop, iav in av:  # type: ignore[attr-defined]
            iname = str(iop)
            if iname == "LITERAL":
                chars.append(iav)
            elif iname == "RANGE" and iav[1] - iav[0] < 4:
                chars.extend(range(iav[0], iav[1] + 1))
            else:
                return {(b"", False)}
        if 0 < len(chars) <= 4:
            return {(bytes([c]), True) for c in chars}
        return {(b"", False)}
    if name in ("MAX_REPEAT", "MIN_REPEAT"):
        lo: int = av[0]  # type: ignore[index]
        sub = av[2]  # type: ignore[index]
        if lo == 0:
            return {(b"", False)}
        return {(p, False) for p, _ in _prefixes(sub, depth + 1)}
    return {(b"", False)}


def distinctive(anchor: bytes, folded: bool) -> bool:
    """Rare enough in ordinary typing/output to justify holding a tail for it.

    ``sk-``, ``hf_``, ``A3T``, ``AKIA``, ``ghp_``, ``-----BEGIN``, ``password``
    are; ``aws``, ``key``, ``git``, ``bot``, ``-us`` are not (typing ``git``
    must never lag).
    """
    if len(anchor) >= 5:
        return True
    if len(anchor) < MIN_ANCHOR or not anchor[:1].isalnum():
        return False
    if any(not (65 <= c <= 90 or 97 <= c <= 122) for c in anchor[1:]):
        return True  # a digit or punctuation inside: sk- hf_ r8_ A3T SG. dt0
    return not folded and not anchor.islower()  # AKIA, ASIA, eyJ (case-sensitive)


def _starts_with_boundary(tree: object) -> bool:
    for op, av in tree:  # type: ignore[attr-defined]
        name = str(op)
        if name == "AT":
            return "BOUNDARY" in str(av) and "NON" not in str(av)
        if name == "SUBPATTERN":
            return _starts_with_boundary(av[3])  # type: ignore[index]
        return False
    return False


class AnchorSet:
    """Literal anchors of a rule set; ``hold_from`` is the terminal-mode test.

    Built once per masker and never changed. (A plain class: the dataclasses
    import cost ~7 ms of every masking process's start before its first byte.)"""

    def __init__(self, exact: dict[bytes, bool], folded: dict[bytes, bool],
                 unanchored: tuple[str, ...], by_keyword: tuple[str, ...] = (),
                 multiline: frozenset[bytes] = frozenset(), compiled: Any = None) -> None:
        self.exact = exact  # anchor -> needs a word boundary before it
        self.folded = folded  # lower-cased anchors of (?i) rules / keywords
        self.unanchored = unanchored  # rule ids terminal mode never holds for
        self.by_keyword = by_keyword  # held from a keyword that may sit inside the match
        self.multiline = multiline  # anchors of rules whose match spans lines
        #: the anchor database as restored from the start-up cache (tcg.detect.derived)
        self.compiled = compiled

        def alt(words: Iterable[bytes], flags: int) -> re.Pattern[bytes] | None:
            ws = sorted(set(words), key=len, reverse=True)
            return re.compile(b"|".join(re.escape(w) for w in ws), flags) if ws else None

        hs = _hs_db(self.exact, self.folded, self.compiled)
        self._hs = hs
        # without hyperscan: the anchors as regex alternations (with it, not needed)
        self._re_exact = alt(self.exact, 0) if hs is None else None
        # searched in a lower-cased copy: sre skips ahead on a plain literal set, not under (?i)
        self._re_folded = alt(self.folded, 0) if hs is None else None
        parts: set[bytes] = set()
        for a in self.exact:
            parts.update(a[:k] for k in range(MIN_PARTIAL, len(a)))
        fparts: set[bytes] = set()
        for a in self.folded:
            fparts.update(a[:k] for k in range(MIN_PARTIAL, len(a)))
        self._partial = frozenset(parts)
        self._fpartial = frozenset(fparts)
        self._longest = max((len(a) for a in (*self.exact, *self.folded)), default=0)
        self._hs_lock = allocate_lock()

    @property
    def database(self) -> Any:
        """The anchors' hyperscan database (None: the regex alternations are used)."""
        return self._hs[0] if self._hs is not None else None

    def occurrences(self, view: bytes | bytearray, base: int) -> list[tuple[int, int, bytes, bool]]:
        """Every anchor occurrence in view[base:] (overlaps included), ascending start:
        (start, end, anchor, folded). One hyperscan scan, or the two regex passes."""
        hs = self._hs
        out: list[tuple[int, int, bytes, bool]] = []
        if hs is not None:
            db, items = hs

            def on_match(rid: int, _f: int, to: int, _fl: int, _c: object) -> None:
                a, fold = items[rid]
                out.append((base + to - len(a), base + to, a, fold))

            with self._hs_lock:
                db.scan(bytes(view[base:]), match_event_handler=on_match)
            out.sort()
            return out
        low = bytes(view[base:]).lower()
        for rx, hay, off, fold in ((self._re_exact, view, 0, False),
                                   (self._re_folded, low, base, True)):
            if rx is not None:
                out += [(m.start() + off, m.end() + off, m.group(), fold)
                        for m in rx.finditer(hay, base - off)]
        out.sort()
        return out

    def hold_from(self, view: bytes | bytearray, lo: int) -> int | None:
        """Earliest offset >= ``lo`` from which the tail of ``view`` could begin a secret.

        An anchor that started before ``lo`` (its first bytes already released)
        but completes after it still holds from ``lo``: releasing ``sk`` and
        then holding ``-proj-…`` leaks two harmless bytes, not the key.
        """
        n = len(view)
        longest: int = self._longest
        first = max(lo - longest + 1, 0)
        line = max(_last_line_start(view, first), first)
        best: int | None = None
        for ms, me, key, fold in self.occurrences(view, first if self.multiline else line):
            s = max(ms, lo)
            if best is not None and s >= best:
                break
            if me <= lo:
                continue
            if ms < line and key not in self.multiline:
                continue  # a line break since: that match is over
            if _boundary_ok(view, ms, (self.folded if fold else self.exact).get(key, False)):
                best = s
                break
        start = line
        # a partial anchor at the very end ("AKI", "-----BEG")
        for k in range(MIN_PARTIAL, min(longest, n - start + 1)):
            s = n - k
            if best is not None and max(s, lo) >= best:
                continue
            tail = bytes(view[s:])
            if tail in self._partial or tail.lower() in self._fpartial:
                if _boundary_ok(view, s, k < MIN_GLUED or self._needs_boundary(tail)):
                    best = max(s, lo)
        return best if best is None or best < n else None

    def _needs_boundary(self, partial: bytes) -> bool:
        low = partial.lower()
        flags = [b for a, b in self.exact.items() if a.startswith(partial)]
        flags += [b for a, b in self.folded.items() if a.startswith(low)]
        return bool(flags) and all(flags)


def _last_line_start(view: bytes | bytearray, lo: int) -> int:
    """Start of the last line of view[lo:] (or of the line running into ``lo``)."""
    lo = max(lo, 0)
    i = max(view.rfind(b"\n", lo), view.rfind(b"\r", lo))
    if i >= 0:
        return i + 1
    i = max(view.rfind(b"\n", 0, lo), view.rfind(b"\r", 0, lo))
    return i + 1


def _boundary_ok(view: bytes | bytearray, s: int, needs: bool) -> bool:
    if not needs or s == 0:
        return True
    if view[s] not in _WORD:
        return True
    return view[s - 1] not in _WORD


def build_anchors(rules: Iterable[object]) -> AnchorSet:
    """Anchors for the rules of a Detector (``Detector.rules``)."""
    exact: dict[bytes, bool] = {}
    folded: dict[bytes, bool] = {}
    unanchored: list[str] = []
    by_keyword: list[str] = []
    multiline: set[bytes] = set()

    def put(table: dict[bytes, bool], a: bytes, boundary: bool) -> None:
        table[a] = table.get(a, True) and boundary

    for rule in rules:
        if getattr(rule, "category", "") == "reference":
            continue
        pattern: str = rule.regex  # type: ignore[attr-defined]
        try:
            tree = _p.parse(pattern.encode("utf-8"))
        except Exception:  # noqa: BLE001 - the engine already validated it; be safe
            tree = None
        ci = bool(tree is not None and tree.state.flags & re.IGNORECASE)
        anchors: set[bytes] = set()
        boundary = False
        if tree is not None:
            boundary = _starts_with_boundary(tree)
            pre = {p for p, _ in _prefixes(tree)}
            if pre and all(distinctive(p, ci) for p in pre):
                anchors = pre
        spans_lines = "\\n" in pattern or "(?s)" in pattern
        if anchors:
            if spans_lines:
                multiline.update(a.lower() if ci else a for a in anchors)
            for a in anchors:
                first_word = a[:1] in (bytes([c]) for c in _WORD)
                if ci:
                    put(folded, a.lower(), boundary and first_word)
                else:
                    put(exact, a, boundary and first_word)
            continue
        kws = [k.encode("utf-8").lower() for k in getattr(rule, "keywords", ())]
        if kws and all(distinctive(k, True) for k in kws):
            for k in kws:
                put(folded, k, False)
            if spans_lines:
                multiline.update(kws)
            by_keyword.append(rule.id)  # type: ignore[attr-defined]
        else:
            unanchored.append(rule.id)  # type: ignore[attr-defined]
    return AnchorSet(exact, folded, tuple(unanchored), tuple(by_keyword), frozenset(multiline))


def _hs_db(exact: dict[bytes, bool], folded: dict[bytes, bool], compiled: Any = None
           ) -> tuple[Any, list[tuple[bytes, bool]]] | None:
    """One hyperscan database of every anchor (folded ones caseless): a scan of the
    tail reports every occurrence, where a regex alternation of ~360 literals tried
    every branch at every byte. None without hyperscan (then the regexes are used).
    ``compiled``: the database restored from the start-up cache."""
    try:
        from tcg._lean import hs as hyperscan
    except ImportError:  # pragma: no cover - the re engine
        return None
    items = [(a, False) for a in exact] + [(a, True) for a in folded]
    if not items:
        return None
    if compiled is not None:
        return compiled, items
    try:
        db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        db.compile(expressions=[b"".join(b"\\x%02x" % c for c in a) for a, _ in items],
                   ids=list(range(len(items))),
                   flags=[hyperscan.HS_FLAG_CASELESS if f else 0 for _, f in items])
    except hyperscan.error:  # pragma: no cover - fall back to re
        return None
    return db, items


def anchors_for_detector(detector: Any) -> AnchorSet:
    """build_anchors(detector.rules), restored from the detector's signed start-up
    cache when the rules and this code are unchanged (tcg.detect.derived)."""
    from tcg.detect import derived

    rules = tuple(detector.rules)
    fp = derived.fingerprint(rules, "anchors", "")
    d = derived.load(detector, "anchors", fp)
    if d is not None:
        try:
            return AnchorSet(
                {derived.s2b(a): bool(b) for a, b in d["exact"]},
                {derived.s2b(a): bool(b) for a, b in d["folded"]},
                tuple(str(x) for x in d["unanchored"]), tuple(str(x) for x in d["by_keyword"]),
                frozenset(derived.s2b(a) for a in d["multiline"]),
                compiled=derived.load_hs(d["hs_db"]))
        except Exception:  # noqa: BLE001 - unreadable (e.g. another hyperscan): rebuild
            pass
    a = build_anchors(rules)
    hs = a._hs
    if hs is not None:
        derived.store(detector, "anchors", fp, {
            "exact": [[derived.b2s(k), v] for k, v in a.exact.items()],
            "folded": [[derived.b2s(k), v] for k, v in a.folded.items()],
            "unanchored": list(a.unanchored), "by_keyword": list(a.by_keyword),
            "multiline": [derived.b2s(k) for k in sorted(a.multiline)],
            "hs_db": derived.dump_hs(hs[0]),
        })
    return a
