"""The inbound rule engine: one multi-pattern database run over each view of a text.

Rules are Python ``re`` patterns with Unicode semantics (tcg/inbound/rules.py).
hyperscan runs, for each rule, its whole pattern written out over a one-byte copy of
the text (tcg/inbound/proxyrx.py: the lead-byte copy, or the letters copy for the
Russian rules) or its prefilter literals (tcg/inbound/prefilter.py), all rules in one
database per copy (tcg/inbound/expressions.py); Python ``re`` then confirms each rule
only inside a window around the places reported, as wide as the rule's parse tree
allows before and after them. Without hyperscan, or for a rule hyperscan cannot prefilter (no literals,
or examples the database does not cover), the rule runs with ``re`` over the
whole view. Both paths count the same matches: the confirmation is one loop
(:func:`count_matches`).

Marks (invisible characters, expensive-script characters and the like) come from
tcg.inbound.marks; the parsed rules' cache from tcg.inbound.store. The compiled
databases are kept in the cache dir, each in a file signed with the install key
(tcg.signed): a file that fails the MAC check reads as absent.
"""

from __future__ import annotations

import hashlib
import json
import platform
import re
import sys
import threading
from bisect import bisect_right
from collections import defaultdict
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from tcg.inbound import chars, marks
from tcg.inbound.expressions import (  # noqa: F401 - re-exported
    _WS_PROXY,
    _WS_UTF8,
    PAIR,
    SPACES,
    UTF8_PAIR_GAP,
    WHOLE,
    _literal,
    covered,
    rule_expressions,
)
from tcg.inbound.marks import EXPENSIVE, INVISIBLE, NFKC, PERCENT, TRIGGER, Marks  # noqa: F401 - re-exported
from tcg.inbound.rules import FLAGS, LOOKAROUND_MAX, InboundRule, builtin_rule_files
from tcg.inbound.store import file_tag, load_state, packaged_rules, store_state
from tcg.inbound.utf8 import Utf8, utf8_of

#: a database in the cache, not read yet (InboundEngine._database)
_STORED = object()
MAX_COUNT = 100  # matches counted per rule and view; more adds nothing to a verdict
SAME_SPAN = 4096  # count_matches remembers the count of a window up to this wide...
SAME_MAX = 2048  # ...for this many distinct windows per rule and view (~8 MB at most)
CACHE_FORMAT = "tcg-inbound-7"  # 7: the file name in every cache file's MAC tag


class _Compiled:
    """A rule ready to count: its pattern, allow patterns and width. The patterns
    are compiled on first use: with the databases and rules from the cache, a
    process compiles only the rules whose literals occur in what it checks."""

    def __init__(self, index: int, rule: InboundRule):
        self.index = index
        self.rule = rule
        self.width = rule.max_width
        self.set_window(whole=False)

    def set_window(self, whole: bool) -> None:
        """A match lies within [end - before, end + after] of a candidate end: the end
        of its prefilter's last literal, or (``whole``: the rule is one expression of
        the ascii database) of the match itself."""
        rule = self.rule
        if whole:
            self.before, self.after = rule.max_width, 0
        else:
            self.before = min(rule.prefilter_span[0], rule.max_width) if rule.prefilter else rule.max_width
            self.after = min(rule.prefilter_span[1], rule.max_width) if rule.prefilter else rule.max_width

    @cached_property
    def pat(self) -> re.Pattern[str]:
        return re.compile(self.rule.regex, FLAGS)

    @cached_property
    def allow(self) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(a, FLAGS) for a in self.rule.allow)

    @cached_property
    def ascii_pat(self) -> re.Pattern[str]:
        """The pattern with ``re.ASCII``: the same matches on plain text (:func:`plain`),
        for a rule whose ``ascii_safe`` says so, about half the time."""
        return re.compile(self.rule.regex, FLAGS | re.ASCII)

    @cached_property
    def ascii_allow(self) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(a, FLAGS | re.ASCII) for a in self.rule.allow)


def plain(text: str) -> bool:
    """Whether ``text`` is ASCII without U+001C..U+001F: there an ``ascii_safe`` rule's
    ``re.ASCII`` pattern matches exactly as its Unicode one (tcg.inbound.rules).
    O(1) for a text that is not ASCII; a byte search for each of the four otherwise
    (a slice and this are 2-5 times faster than a character-class search)."""
    return text.isascii() and not any(c in text for c in "\x1c\x1d\x1e\x1f")


def count_matches(c: _Compiled, text: str, windows: list[tuple[int, int]] | None,
                  is_plain: bool | None = None) -> int:
    """Non-overlapping matches of ``c`` in ``text``, leftmost first, allow-listed
    ones skipped, capped at MAX_COUNT. ``windows``: the only (merged, ascending)
    ranges ``[lo, hi)`` where a match may lie, each with a margin of
    LOOKAROUND_MAX characters at its end that only lookarounds may read; None =
    the whole text (the ``re`` path).

    An allow-listed match is skipped whole (so "never send your key" does not
    count as "send your key"); a match ending inside a margin, where the window's
    edge may have faked a ``\\b`` or a lookahead, moves the search one character
    on. Both paths count the same matches.

    ``is_plain``: :func:`plain` of ``text`` when the caller knows it. A window whose
    characters (and the LOOKAROUND_MAX before it, which a lookbehind or ``\\b`` may
    read) are plain is searched with the rule's ``re.ASCII`` pattern when the rule
    is ``ascii_safe``: the same matches, found in about half the time."""
    n = 0
    size = len(text)
    spans = windows if windows is not None else [(0, size)]
    fast = c.rule.ascii_safe
    if fast and is_plain is None and windows is None:
        is_plain = plain(text)
    last = 0
    # windows of the same text count the same (rule-words, logs, JSON arrays repeat lines)
    seen: dict[tuple[str, int, bool], tuple[int, int]] = {}
    for lo, hi in spans:
        key = None
        if windows is not None and last <= lo and hi - lo <= SAME_SPAN:
            # what re may read: the window, the LOOKAROUND_MAX before it, whether that starts
            # the text (^, \A) and whether it ends it ($, the margin); a slice of a wide text
            # that is ASCII is narrow, so hashing and comparing it is quick
            lo0 = max(0, lo - LOOKAROUND_MAX)
            key = (text[lo0:hi], lo - lo0 if lo0 else -1 - lo, hi >= size)
            got = seen.get(key)
            if got is not None:
                n = min(n + got[0], MAX_COUNT)
                if got[1] >= 0:
                    last = lo + got[1]
                if n >= MAX_COUNT:
                    break
                continue
        n0, last0 = n, last
        if fast and (is_plain or (is_plain is None and plain(text[max(0, lo - LOOKAROUND_MAX):hi]))):
            search, allow = c.ascii_pat.search, c.ascii_allow
        else:
            search, allow = c.pat.search, c.allow
        limit = hi if hi >= size else hi - LOOKAROUND_MAX - 1
        pos = max(lo, last)
        while pos <= limit and n < MAX_COUNT:
            m = search(text, pos, hi)
            if m is None:
                break
            s, e = m.span()
            if e > limit:
                pos = s + 1  # the window's edge may have faked the match: look further on
            elif any(a.search(m.group(0)) for a in allow):
                pos = e if e > s else e + 1  # allow-listed as a whole ("never send …")
            else:
                n += 1
                pos = e if e > s else e + 1
                last = pos
        if key is not None and n < MAX_COUNT and len(seen) < SAME_MAX:
            seen[key] = (n - n0, last - lo if last != last0 else -1)
    return n


class InboundEngine:
    """Compiled inbound rules plus the mark finders. Build with :func:`load_engine`."""

    def __init__(self, rules: list[InboundRule], *, engine: str | None = None,
                 cache_dir: Path | None = None, key: bytes | None = None):
        from tcg.detect.hsdb import default_engine

        self.rules = tuple(rules)
        self.engine = engine or default_engine()
        if self.engine not in ("hyperscan", "re"):
            raise ValueError(f"unknown inbound engine {self.engine!r}")
        self._compiled = [_Compiled(i, r) for i, r in enumerate(self.rules)]
        #: the widest match any rule can have (characters)
        self.max_width = max((r.max_width for r in self.rules), default=0)
        # the utf8 literal database may skip the ASCII stretches of a text far from its
        # non-ASCII characters (:meth:`_utf8_parts`) when no literal of a rule can match
        # an ASCII character unless it is ASCII itself
        self._utf8_local = all(r.ascii_safe and _no_ascii_fold(r.prefilter) for r in self.rules)
        # one scan at a time on each database's scratch (re-entered when a cached
        # database is unreadable and all are compiled again in the middle of a scan)
        self._lock = threading.RLock()
        self._cache: tuple[Path, bytes] | None = None
        self._rules_db: dict[str, Any] = {}  # "ascii" (byte mode) and "utf8" literals
        self._slots: list[tuple[int, int, int]] = []
        #: utf8 database: literal id -> the slots holding that literal (each distinct literal
        #: is one expression, so a word several rules share costs one callback a place)
        self._utf8_slots: list[list[int]] = []
        self._in_db: frozenset[int] = frozenset()
        self._marks_db: dict[int, Any] = {}
        #: ids of the rules hyperscan runs (the rest run with re over whole views)
        self.hyperscan_rules: tuple[str, ...] = ()
        self._re_only = list(self._compiled)
        if self.engine == "hyperscan":
            self._build_hyperscan(cache_dir, key)

    # ------------------------------------------------------------ building

    def _fingerprint(self) -> str:
        import hyperscan

        from tcg.fingerprint import code_fingerprint

        h = hashlib.sha256(CACHE_FORMAT.encode() + code_fingerprint().encode())
        h.update(f"{sys.version_info[:2]}{platform.machine()}{getattr(hyperscan, '__version__', '')}"
                 f"{chars.confusables_version()}".encode())
        for r in self.rules:
            h.update(json.dumps([r.id, r.regex, r.allow, r.examples_match, r.examples_no_match,
                                 r.prefilter, r.prefilter_reach],
                                ensure_ascii=False).encode("utf-8"))
        return h.hexdigest()[:32]

    def _build_hyperscan(self, cache_dir: Path | None, key: bytes | None) -> None:
        """Read the databases' index from the cache, or compile them all. Each
        database is a signed file of its own, read on first use
        (:meth:`_database`): an ASCII text needs two of the seven, and the MAC
        check of the rest would cost a short check most of its start-up."""
        self._cache = (cache_dir / f"engine-{self._fingerprint()}", key) \
            if cache_dir is not None and key is not None else None
        state = load_state(self._cache_path("json"), key, CACHE_FORMAT)
        if state is not None:
            try:
                accepted = {int(i) for i in state["rules"]}
                self._slots = [tuple(x) for x in state["slots"]]  # type: ignore[misc]
                self._utf8_slots = [[int(i) for i in x] for x in state["utf8_slots"]]
                self._rules_db = {str(k): _STORED for k in state["rules_db"]}
                self._marks_db = {int(k): _STORED for k in state["marks"]}
            except Exception:  # noqa: BLE001 - unreadable cache: rebuild
                state = None
        if state is None:
            accepted = self._compile_all()
        self._accept(accepted)

    def _accept(self, accepted: set[int]) -> None:
        self.hyperscan_rules = tuple(self.rules[i].id for i in sorted(accepted))
        self._in_db = frozenset(accepted)
        self._re_only = [c for c in self._compiled if c.index not in accepted]
        whole = {idx for idx, _alt, k in self._slots if k == WHOLE}
        for c in self._compiled:
            c.set_window(c.index in whole)

    def _cache_path(self, suffix: str) -> Path | None:
        return None if self._cache is None else self._cache[0].with_name(
            f"{self._cache[0].name}.{suffix}")

    def _compile_all(self) -> set[int]:
        """Compile every database and store each in its signed file, the index last
        (best effort: a cache that cannot be written only costs compile time)."""
        import hyperscan

        from tcg.detect import derived
        from tcg.signed import write_signed

        try:
            accepted = self._compile_rules()
        except hyperscan.error:
            try:
                # a whole rule hyperscan refuses: every rule prefiltered by its literals
                accepted = self._compile_rules(whole=False)
            except hyperscan.error:
                # a pair hyperscan refuses ("Pattern is too large"): every literal of other
                # letters one expression of the utf8 database, pairs matched up in Python
                accepted = self._compile_rules(close_pairs=False, whole=False, letters=False)
        self._marks_db = marks.compile_databases()
        if self._cache is not None:
            key = self._cache[1]
            for table, prefix in ((self._rules_db, "rules"), (self._marks_db, "marks")):
                for name, db in table.items():
                    path = self._cache_path(f"{prefix}-{name}.hs")
                    write_signed(path, key, file_tag(CACHE_FORMAT, path),  # type: ignore[arg-type]
                                 derived.dump_hs(db).encode("ascii"))
            store_state(self._cache_path("json"), key, CACHE_FORMAT,
                         {"rules": sorted(accepted), "slots": self._slots, "utf8_slots": self._utf8_slots,
                          "rules_db": sorted(self._rules_db), "marks": sorted(self._marks_db)})
        return accepted

    def _database(self, prefix: str, name: Any) -> Any:
        """The hyperscan database ``name`` of the rules (``prefix`` "rules") or the
        marks ("marks"), read from its signed file on first use. A file that is
        missing or fails the MAC check is never loaded: every database is compiled
        again (callers hold the engine's lock)."""
        table = self._rules_db if prefix == "rules" else self._marks_db
        db = table[name]
        if db is not _STORED:
            return db
        from tcg.detect import derived
        from tcg.signed import read_signed

        path = self._cache_path(f"{prefix}-{name}.hs")
        body = read_signed(path, self._cache[1], file_tag(CACHE_FORMAT, path)) if path and self._cache else None
        if body is None:
            self._accept(self._compile_all())
            table = self._rules_db if prefix == "rules" else self._marks_db
            return table[name]
        db = table[name] = derived.load_hs(body.decode("ascii"))
        return db

    def _compile_rules(self, close_pairs: bool = True, whole: bool = True, letters: bool = True) -> set[int]:
        """Compile the prefilter databases (tcg.inbound.expressions: ``close_pairs``,
        ``whole``, ``letters`` as there). A rule without a prefilter, or whose examples
        the databases do not cover (every ``re`` match must hold a candidate end), is
        left to ``re`` (returns the indices of the rest)."""
        import hyperscan

        slots, utf8_slots, exprs = rule_expressions(self._compiled, close_pairs, whole, letters)
        self._slots = slots
        self._utf8_slots = utf8_slots
        self._rules_db = {}
        for name, part in exprs.items():
            if part:
                db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
                db.compile(expressions=[e for e, _, _ in part], ids=[i for _, _, i in part],
                           flags=[f for _, f, _ in part])
                self._rules_db[name] = db
        return covered(self._compiled, slots, self._candidates)

    def _candidates(self, text: str, u: Utf8 | None = None) -> dict[int, list[int]]:
        """Rule index -> character offsets (ascending) inside every match of the
        rule: the end of the last literal of one of its alternatives' prefilters.
        ``u``: :func:`utf8_of` the text when the caller has it."""
        ascii_only = text.isascii()
        found: dict[int, set[int]] = {}
        halves: dict[int, list[int]] = {}  # utf8 literal id -> byte ends

        by_slot: defaultdict[int, list[int]] = defaultdict(list)  # ends by slot, to rules below

        def on_pair(sid: int, _f: int, to: int, _fl: int, _c: Any) -> None:
            by_slot[sid].append(to)

        def on_letters(sid: int, _f: int, to: int, _fl: int, _c: Any) -> None:
            by_slot[sid].append(at + to)

        at = 0  # where the scanned part of the letters copy starts

        def on_half(sid: int, _f: int, to: int, _fl: int, _c: Any) -> None:
            got = halves.get(sid)
            if got is None:
                halves[sid] = [shift + to]
            else:
                got.append(shift + to)

        shift = 0  # where the scanned part of the UTF-8 starts

        if u is None:
            u = utf8_of(text)  # both databases read it (the ascii one its lead bytes)
        with self._lock:
            # both read before the slots: an unreadable one compiles all again, slots too
            wanted = ("ascii",) if ascii_only else ("ascii", "utf8", "letters")
            dbs: dict[str, Any] = {}
            for _ in range(2):
                dbs = {name: self._database("rules", name) for name in wanted if name in self._rules_db}
                if all(self._rules_db.get(name) is db for name, db in dbs.items()):
                    break
            slots = self._slots
            ascii_db, db = dbs.get("ascii"), dbs.get("utf8")
            if ascii_db is not None:
                ascii_db.scan(u.proxy, match_event_handler=on_pair)
            if db is not None:
                parts = self._utf8_parts(u)
                if parts is None:
                    db.scan(u.data, match_event_handler=on_half)
                view = memoryview(u.data)  # parts scanned without copying them
                for lo, hi in parts or ():
                    shift = lo
                    db.scan(view[lo:hi], match_event_handler=on_half)
            if "letters" in dbs:
                from tcg.inbound.proxyrx import letters_copy

                for lo, hi in self._letter_parts(u, len(text)):
                    at = lo
                    dbs["letters"].scan(letters_copy(text[lo:hi]), match_event_handler=on_letters)
        for sid, ends in by_slot.items():
            got = found.get(slots[sid][0])
            if got is None:
                found[slots[sid][0]] = set(ends)
            else:
                got.update(ends)
        if halves:
            self._match_halves(u, halves, found)
        return {idx: sorted(ends) for idx, ends in found.items() if ends}

    def _utf8_parts(self, u: Utf8) -> list[tuple[int, int]] | None:
        """The byte ranges of ``u.data`` the utf8 database needs to scan, or None for
        all of it: each non-ASCII part with ``max_width`` + 64 bytes of ASCII on each
        side, merged. A candidate from that database matters only inside a match
        holding a non-ASCII literal — within ``max_width`` characters (ASCII around
        the part: bytes) of a non-ASCII character — or else holding ASCII literals
        alone, which the ascii database reports as it does for an ASCII text (a
        single set: the same ends; a pair: a subset of them, as close as the rule
        requires). Only when no rule character folds to an ASCII one."""
        if not self._utf8_local or not u.wide:
            return None
        margin = self.max_width + 64
        parts: list[tuple[int, int]] = []
        for _c_lo, b_lo, _c_hi, b_hi in u.wide:
            lo, hi = max(0, b_lo - margin), min(len(u.data), b_hi + margin)
            if parts and lo <= parts[-1][1]:
                parts[-1] = (parts[-1][0], hi)
            else:
                parts.append((lo, hi))
        return parts if sum(hi - lo for lo, hi in parts) < len(u.data) // 2 else None

    def _letter_parts(self, u: Utf8, n: int) -> list[tuple[int, int]]:
        """The character ranges of a text of ``n`` characters the letters database needs
        to scan: as :meth:`_utf8_parts`, in characters (all of it when those are half)."""
        if not self._utf8_local or not u.wide:
            return [(0, n)]
        margin = self.max_width + 64
        parts: list[tuple[int, int]] = []
        for c_lo, _b_lo, c_hi, _b_hi in u.wide:
            lo, hi = max(0, c_lo - margin), min(n, c_hi + margin)
            if parts and lo <= parts[-1][1]:
                parts[-1] = (parts[-1][0], hi)
            else:
                parts.append((lo, hi))
        return parts if sum(hi - lo for lo, hi in parts) < n // 2 else [(0, n)]

    def _match_halves(self, u: Utf8, halves: dict[int, list[int]],
                      found: dict[int, set[int]]) -> None:
        """Add the candidate ends of the utf8 database's literal sets (byte ends in
        ``halves``) to ``found``, as character offsets."""
        by_alt: dict[tuple[int, int], list[list[int]]] = {}
        byte_ends: dict[int, set[int]] = {}
        for lid, ends in halves.items():
            for sid in self._utf8_slots[lid]:
                idx, alt, k = self._slots[sid]
                if k == PAIR:
                    byte_ends.setdefault(idx, set()).update(ends)
                else:
                    by_alt.setdefault((idx, alt), [[], []])[k].extend(ends)
        for (idx, alt), (first, second) in by_alt.items():
            if len(self._compiled[idx].rule.prefilter[alt]) == 1:
                byte_ends.setdefault(idx, set()).update(first)
            elif first and second:
                # bytes: up to 4 per character
                reach = self._compiled[idx].rule.prefilter_reach[alt] * 4
                byte_ends.setdefault(idx, set()).update(_follows(sorted(first), sorted(second), reach))
        if not byte_ends:
            return
        conv = u.to_char(sorted({b for v in byte_ends.values() for b in v}))
        for idx, at in byte_ends.items():
            found.setdefault(idx, set()).update(conv[b] for b in at)

    # ------------------------------------------------------------ scanning

    def marks(self, text: str, u: Utf8 | None = None) -> Marks:
        """Invisible/expensive/trigger/percent marks of ``text`` (char offsets);
        ``u``: :func:`utf8_of` the text when the caller has it."""
        kinds = marks.kinds_of(text)
        if self.engine != "hyperscan":
            return marks.scan_re(text, kinds)
        u = u if u is not None else utf8_of(text)
        wide = [(w[1], w[3]) for w in u.wide]
        with self._lock:
            raw, capped = marks.scan_hyperscan(lambda kind: self._database("marks", kind), u.data, kinds, wide,
                                               screen=marks.has_screens(self._marks_db))
        out = Marks(capped=capped)
        if raw:
            conv = u.to_char(sorted({b for v in raw.values() for b in v}))
            for kind, hits in raw.items():
                out.at[kind] = [conv[b] for b in hits]
        return out

    @staticmethod
    def count_kind(kind: int, text: str) -> int:
        """Exact number of characters of a mark kind (after a capped scan)."""
        return marks.count_kind(kind, text)

    @staticmethod
    def py_mark(kind: int) -> re.Pattern[str]:
        """The Python pattern of a single-character mark kind (INVISIBLE, EXPENSIVE)."""
        return marks.py_mark(kind)

    def scan_view(self, text: str, u: Utf8 | None = None) -> dict[str, int]:
        """Rule id -> match count in one view (rules that do not match are absent);
        ``u``: :func:`utf8_of` the view when the caller has it."""
        found: dict[str, int] = {}
        if not text:
            return found
        # plain or not, once per view; for a text with a few other characters, window by window
        is_plain = True if plain(text) else None
        if self._rules_db:
            for idx, ends in self._candidates(text, u).items():
                c = self._compiled[idx]
                if c.index in self._in_db:
                    n = count_matches(c, text, _windows(ends, c.before, c.after, len(text)), is_plain)
                    if n:
                        found[c.rule.id] = n
        for c in self._re_only:
            n = count_matches(c, text, None, is_plain)
            if n:
                found[c.rule.id] = n
        return found


# ---------------------------------------------------------------- helpers


def _no_ascii_fold(prefilter: Any) -> bool:
    """Whether no non-ASCII character of a rule's prefilter literals is, or folds case
    to, an ASCII character (KELVIN SIGN, LONG S, DOTLESS I and the like: hyperscan
    may match those caselessly on ASCII text; ``ascii_safe`` says the same of the
    rule's pattern as ``re`` folds it)."""
    return all(c.isascii() or not any(x.isascii() for f in (c.lower(), c.upper(), c.casefold()) for x in f)
               for sets in prefilter for literals in sets for lit in literals for c in lit)


def _follows(first: list[int], second: list[int], reach: int) -> list[int]:
    """Ends in ``second`` with an end of ``first`` before them, at most ``reach``
    bytes back (both lists ascending)."""
    if len(first) < len(second):
        # the shorter list walked: a word of the second set in every sentence and the
        # first set rare costs a bisect per end of the first, not a step per end of the second
        got: list[int] = []
        j = 0
        for a in first:
            lo = max(j, bisect_right(second, a, j))
            j = bisect_right(second, a + reach, lo)
            got.extend(second[lo:j])
        return got
    out = []
    i = 0
    for b in second:
        while i < len(first) and first[i] < b - reach:
            i += 1
        if i < len(first) and first[i] < b:
            out.append(b)
    return out


def _windows(ends: list[int], before: int, after: int, n: int) -> list[tuple[int, int]]:
    """Merged ``[lo, hi)`` ranges that hold every match containing a literal that
    ends at one of ``ends`` (a match starts at most ``before`` characters before
    that end and stops at most ``after`` after it), plus the margin count_matches
    keeps for lookarounds on both sides."""
    out: list[tuple[int, int]] = []
    if not ends:
        return out
    back, ahead = before + LOOKAROUND_MAX, after + LOOKAROUND_MAX + 1
    # ends ascend, so each range's end is past the last one's: only a start can merge
    lo, hi = max(0, ends[0] - back), ends[0] + ahead
    for e in ends:
        if e - back <= hi:
            hi = e + ahead
        else:
            out.append((lo, hi))
            lo, hi = e - back, e + ahead
    out.append((lo, min(n, hi)))
    return out


@lru_cache(maxsize=4)
def _cached_engine(engine: str, digest: str) -> InboundEngine:
    from tcg.keyhash import load_or_create_key
    from tcg.paths import get_paths

    paths = get_paths()
    try:
        key: bytes | None = load_or_create_key(paths)
    except Exception:  # noqa: BLE001 - no key: no cache, only start-up time is lost
        key = None
    cache_dir = paths.cache / "inbound"
    rules = packaged_rules(builtin_rule_files(), cache_dir, key)
    return InboundEngine(rules, engine=engine, cache_dir=cache_dir, key=key)


def load_engine(engine: str | None = None) -> InboundEngine:
    """The engine for the packaged rules (built once per process and rule set)."""
    from tcg.detect.hsdb import default_engine

    files = builtin_rule_files()
    digest = hashlib.sha256(json.dumps(files).encode("utf-8")).hexdigest()
    return _cached_engine(engine or default_engine(), digest)
