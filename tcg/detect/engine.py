"""The detector: rules -> findings (span, rule id, category; never the value).

Matching model (identical for both engines, see docs/rules.md "Engine semantics"):

* Rules run on BYTES. For every start offset ``s`` the candidate is Python
  ``re``'s preferred match of the rule at ``s``; it counts when one of the
  rule's keywords (case-insensitive) occurs inside the whole match and the
  value passes the allow-list, entropy floor and validator.
* Engines differ only in how they find the offsets worth trying: hyperscan
  reports every match end of every rule in one pass (the window
  ``[end - max_len, end - min_len]`` is then confirmed with ``re``); the ``re``
  engine tries the windows around keyword occurrences (rules without keywords:
  the whole input). Both cover every offset where a counted candidate can
  start, so their findings are identical (tests compare them).
* Overlaps: secret, then pii, then reference; a candidate overlapping a kept
  finding of an earlier category is dropped. Within a category: leftmost, then
  longest, then rule order; a candidate sticking out of a kept span is clipped.
  The result is sorted and non-overlapping.
"""

from __future__ import annotations

import bisect
import os
import re
import threading
from collections.abc import Iterable, Sequence
from functools import cached_property, lru_cache
from pathlib import Path

from tcg.detect import fold as foldmod
from tcg.detect import regex as rx
from tcg.detect.entropy import shannon_entropy
from tcg.detect.rule import Rule, builtin_rule_files, load_rules
from tcg.detect.validators import VALIDATORS, Validator
from tcg.digest import sha256
from tcg.record import Record

TYPE_CHECKING = False  # typing costs ~9 ms of import before the first masked byte
if TYPE_CHECKING:
    from typing import Any

    from tcg.detect.helper import Helper
    from tcg.policy.load import Policy

# Bytes of right context a match decision may look at beyond the match itself
# (\b and $ inspect the next byte). Left context: \b inspects the byte before.
CONTEXT = 2
ENGINE_ENV = "TCG_DETECT_ENGINE"
# Buffers at least this large are scanned with the dense database (rules with no
# literal, see _HsPair) on a helper thread beside the main one; below it the hand-over
# costs more than it saves. TCG_DETECT_THREADS=1 keeps every scan on one thread.
PARALLEL_MIN = 1 << 17
THREADS_ENV = "TCG_DETECT_THREADS"
# A rule whose matches need no literal run this long goes to the dense database.
DENSE_FACTOR = 2
# Inner categories that make an encoded run a finding.
ENCODED_CATEGORIES = ("secret", "pii")
# Max bytes of UTF-8 per folded character (a fold rule's byte bound is 4x its width).
_FOLD_BYTES_PER_CHAR = 4
_CONT = bytes(range(0x80, 0xC0))
_ASCII = bytes(range(0x80))
_FOLD_BLOCK = 4096


class Finding(Record, fields="start end rule_id category encoding", defaults=("",)):
    """A detected span: byte offsets, the rule and its category, and ``encoding`` ("" = a
    direct hit; "base64" = the span is an encoded run hiding rule_id). There is
    deliberately no field that could hold the value. A Record, not a dataclass: the
    dataclasses import (inspect, ast, dis, tokenize) was a large share of `tcg scan`'s
    start-up."""

    __slots__ = ()

    start: int
    end: int
    rule_id: str
    category: str
    encoding: str


class _Compiled:
    """A rule prepared for matching. The ``re`` patterns compile on first use:
    with hyperscan most rules are never confirmed in a given process, and
    compiling all of them up front cost ~0.2 s of every `tcg_shell` start."""

    def __init__(self, *, index: int, rule: Rule, width: int, min_len: int,
                 kws: tuple[bytes, ...], allow_values: frozenset[bytes],
                 validator: Validator | None, entropy: float | None):
        self.index = index
        self.rule = rule
        self.width = width
        self.min_len = min_len
        self.kws = kws
        self.allow_values = allow_values
        self.validator = validator
        self.entropy = entropy

    @cached_property
    def block_end(self) -> re.Pattern[bytes] | None:
        """The line that closes a block the rule opens (PEM keys); compiled on first use."""
        return rx.compile_bytes(self.rule.block_end) if self.rule.block_end else None

    @cached_property
    def pat(self) -> re.Pattern[bytes]:
        return rx.compile_bytes(self.rule.regex)

    @cached_property
    def low_pat(self) -> re.Pattern[bytes] | None:
        """A case-insensitive rule as a case-sensitive pattern for lowered input
        (rx.lowered_pattern): what _confirm runs, on a lowered copy of the window."""
        return rx.lowered_pattern(self.rule.regex)

    @cached_property
    def allow_pats(self) -> tuple[re.Pattern[bytes], ...]:
        return tuple(re.compile(p.encode("utf-8")) for p in self.rule.allow_patterns)


class NeedsExamplesError(Exception):
    """Rules were restored from the start-up memo without their examples, but the
    hyperscan database must be (re)verified against them: load the rules whole."""


def hyperscan_available() -> bool:
    try:
        import hyperscan  # noqa: F401
    except ImportError:
        return False
    return True


def default_engine() -> str:
    """``hyperscan`` when its wheel imports, else ``re``; ``TCG_DETECT_ENGINE=re`` forces re."""
    forced = os.environ.get(ENGINE_ENV, "").strip().lower()
    if forced == "re":
        return "re"
    return "hyperscan" if hyperscan_available() else "re"


class Detector:
    """Compiled rule set. Build with :meth:`from_rules` or :func:`load_detector`."""

    def __init__(self, rules: Sequence[Rule], engine: str | None = None,
                 cache_dir: Path | None = None, memo: rx.AnalysisMemo | None = None):
        self._memo = memo
        #: where start-up caches live (tcg.detect.derived); None: nothing is cached
        self.cache_dir = cache_dir
        self.rules: tuple[Rule, ...] = tuple(rules)
        self.engine = engine or default_engine()
        if self.engine not in ("hyperscan", "re"):
            raise ValueError(f"unknown detection engine {self.engine!r}")
        self._compiled = [self._compile(i, r) for i, r in enumerate(self.rules)]
        self._fold = [c for c in self._compiled if c.rule.fold]
        widths = [c.width for c in self._compiled] or [0]
        widths += [c.width * _FOLD_BYTES_PER_CHAR for c in self._fold]
        #: bound (bytes) on any single finding's match, PEM blocks excluded
        self.max_match_len: int = max(widths)
        self.hyperscan_rules: tuple[str, ...] = ()
        self._keyword_rules = list(self._compiled)
        self._hs_db: Any = None
        self._hs_kw: list[tuple[int, int]] = []
        self._hs_spans: dict[int, tuple[int, int]] = {}
        self._fold_pre: tuple[list[re.Pattern[str]] | None] | None = None
        self._fold_hs: tuple[Any] | None = None
        self._lock = threading.Lock()
        self._helper: Helper | None = None
        if self.engine == "hyperscan":
            self._build_hyperscan(cache_dir)

    @cached_property
    def block_rules(self) -> dict[str, re.Pattern[bytes]]:
        """Rule id -> regex (bytes) of the line that closes the block the rule opens.
        Compiled on first use: a scan that meets no PEM header never needs them."""
        return {c.rule.id: c.block_end for c in self._compiled if c.block_end is not None}

    @classmethod
    def from_rules(cls, rules: Iterable[Rule], *, engine: str | None = None,
                   cache_dir: Path | None = None, memo: rx.AnalysisMemo | None = None) -> Detector:
        """A detector over ``rules`` (rule order breaks ties between equal spans).

        ``cache_dir``: keep the compiled hyperscan database there (compiling
        ~170 rules takes >1 s, loading the cached one ~1 ms). The cached
        database is re-verified against every rule's examples on load.
        """
        return cls(list(rules), engine, cache_dir, memo)

    # ------------------------------------------------------------ compile

    @staticmethod
    def _compile(index: int, rule: Rule) -> _Compiled:
        return _Compiled(
            index=index, rule=rule, width=rule.max_len,
            min_len=rule.min_len, kws=tuple(k.encode("utf-8") for k in rule.keywords),
            allow_values=frozenset(v.encode("utf-8") for v in rule.allow_values),
            validator=VALIDATORS[rule.validator] if rule.validator else None,
            entropy=rule.entropy,
        )

    def _build_hyperscan(self, cache_dir: Path | None) -> None:
        import hyperscan

        exprs: list[tuple[_Compiled, bytes, int]] = []
        for c in self._compiled:
            try:
                expr, flags = (self._memo.hyperscan_pattern if self._memo
                               else rx.hyperscan_pattern)(c.rule.regex)
            except rx.PatternError:
                continue  # not translatable: the rule runs on keywords + re
            exprs.append((c, expr, flags))

        def compile_one(items: list[tuple[_Compiled, bytes, int]], kws: list[tuple[int, bytes]]) -> Any:
            if not items and not kws:
                return None
            db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
            db.compile(
                expressions=[e for _, e, _ in items] + [_literal(kw) for _, kw in kws],
                ids=[c.index for c, _, _ in items] + [_KW_BASE + j for j in range(len(kws))],
                flags=[f for _, _, f in items] + [hyperscan.HS_FLAG_CASELESS] * len(kws),
            )
            return db

        def compile_set(items: list[tuple[_Compiled, bytes, int]], with_keywords: bool = False) -> Any:
            kws = self._hs_keywords(items) if with_keywords else []
            dense_ids = frozenset(c.index for c, _, _ in items
                                  if rx.literal_factor(c.rule.regex) < DENSE_FACTOR)
            main = [item for item in items if item[0].index not in dense_ids]
            dense = [item for item in items if item[0].index in dense_ids]
            if not main and not kws and not dense:
                return None
            return _HsPair(compile_one(main, kws), compile_one(dense, []), dense_ids)

        cache_file = _hs_cache_file(cache_dir, exprs, self._compiled)
        key = self._memo.key if self._memo else None
        loaded = _hs_cache_load(cache_file, exprs, key)
        if loaded is not None:
            db, accepted = loaded
            # The self-check compiles every rule's re (~0.3 s); skip it when the
            # authenticated memo says this exact file already passed it.
            digest = _file_digest(cache_file)
            name = cache_file.name if cache_file is not None else ""
            if not (self._memo and digest and self._memo.is_verified(name, digest)):
                if any(not c.rule.examples_match for c, _, _ in accepted):
                    raise NeedsExamplesError  # rules came from the memo: reload them whole
                if self._hs_self_check(db, accepted):
                    loaded = None  # stale or tampered cache: rebuild (fail closed)
                elif self._memo and digest:
                    self._memo.mark_verified(name, digest)
        if loaded is None:
            if any(not c.rule.examples_match for c in self._compiled):
                raise NeedsExamplesError
            accepted = exprs
            try:
                db = compile_set(exprs, with_keywords=True)
            except hyperscan.error:
                accepted = []
                for item in exprs:  # find the patterns hyperscan refuses; they use keywords + re
                    try:
                        compile_set([item])
                    except hyperscan.error:
                        continue
                    accepted.append(item)
                db = compile_set(accepted, with_keywords=True)
            bad = self._hs_self_check(db, accepted)
            if bad:
                accepted = [item for item in accepted if item[0].index not in bad]
                db = compile_set(accepted, with_keywords=True)
            _hs_cache_store(cache_file, db, accepted, key)
            digest = _file_digest(cache_file)
            if self._memo and digest and cache_file is not None:
                self._memo.mark_verified(cache_file.name, digest)
        in_hs = {c.index for c, _, _ in accepted}
        self._hs_db = db
        self._hs_kw = [(idx, len(kw)) for idx, kw in self._hs_keywords(accepted)]
        # hyperscan id -> (max width, min width) of the start-offset window it opens
        self._hs_spans = {c.index: (c.width, c.min_len) for c in self._compiled}
        self._hs_spans.update({_KW_BASE + j: (self._compiled[idx].width, k_len)
                               for j, (idx, k_len) in enumerate(self._hs_kw)})
        self.hyperscan_rules = tuple(c.rule.id for c, _, _ in accepted)
        # rules outside the database: their keywords are literals in it; only
        # keyword-less ones need a full re pass
        self._keyword_rules = [c for c in self._compiled if c.index not in in_hs and not c.kws]

    def _fold_precheck_db(self) -> Any:
        """Hyperscan database of the fold-rule keywords as they can appear before
        folding; None if a fold rule has no keywords (every region is folded) or
        hyperscan is not in use. Built on first non-ASCII input (~tens of ms)."""
        if self._fold_hs is None:
            db = None
            if self._hs_db is not None and all(c.kws for c in self._fold):
                import hyperscan

                from tcg.detect import derived

                fp = derived.fingerprint([c.rule for c in self._fold], "fold-precheck", "")
                state = derived.load(self, "fold-precheck", fp)
                if state is not None:
                    try:
                        db = derived.load_hs(state["hs_db"])
                    except Exception:  # noqa: BLE001 - unreadable: rebuild
                        db = None
                if db is None:
                    pre = [foldmod.keyword_precheck_bytes(k.decode("utf-8"))
                           for c in self._fold for k in c.kws]
                    exprs = [e for e in pre if e is not None] or [rb"\x00(?!)"]
                    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
                    db.compile(expressions=exprs, ids=list(range(len(exprs))), flags=[0] * len(exprs))
                    derived.store(self, "fold-precheck", fp, {"hs_db": derived.dump_hs(db)})
            self._fold_hs = (db,)
        return self._fold_hs[0]

    def _hs_keywords(self, accepted: list[tuple[_Compiled, bytes, int]]) -> list[tuple[int, bytes]]:
        """(rule index, keyword) for every rule hyperscan does not run itself, in rule order."""
        in_hs = {c.index for c, _, _ in accepted}
        return [(c.index, kw) for c in self._compiled if c.index not in in_hs for kw in c.kws]

    def _hs_self_check(self, db: Any, items: list[tuple[_Compiled, bytes, int]]) -> set[int]:
        """Rules whose own examples hyperscan does not reproduce (every end offset
        ``re`` finds must be reported). hyperscan 5.4 misses e.g. some caseless
        alternations; such rules are demoted to the keyword + re path."""
        bad: set[int] = set()
        if db is None:
            return bad
        for c, _, _ in items:
            for ex in c.rule.examples_match + c.rule.examples_no_match:
                raw = ex.encode("utf-8")
                for text in (raw, b"padding; " * 7 + raw + b" ;trailing context"):
                    want = {m.end() for m in _all_starts(c.pat, text)}
                    if not want:
                        continue
                    got: set[int] = set()

                    def on_match(rid: int, _f: int, to: int, _fl: int, _ctx: Any,
                                 got: set[int] = got, idx: int = c.index) -> None:
                        if rid == idx:
                            got.add(to)

                    db.scan(text, match_event_handler=on_match)
                    if not want <= got:
                        bad.add(c.index)
        return bad

    # ------------------------------------------------------------ public API

    def find_bytes(self, data: bytes, *, decode: bool = False,
                   overlapping: bool = False, classes: bytes | None = None) -> list[Finding]:
        """Findings in ``data`` with byte offsets. Invalid UTF-8 is fine.

        ``decode=True`` also decodes base64/base64url runs (tcg.detect.encoded)
        and reports a run whose decoded text holds a secret/PII as one finding
        spanning the whole run, with ``encoding="base64"``.
        ``overlapping=True`` returns every candidate (sorted, may overlap)
        instead of the resolved, non-overlapping list.
        ``classes``: ``data.translate(tcg.detect.encoded.CLASSES)`` when the caller
        already has it (the masker's view keeps it); only used with ``decode``.
        """
        data = bytes(data)
        # the dense rules (see _HsPair) scan on the helper thread meanwhile: hyperscan
        # runs without the GIL, so on two CPUs that pass costs next to nothing here
        background = self._dense_in_background(data)
        try:
            cands = self._scan(data, dense=background is None)
            if self._fold and not data.isascii():
                cands.extend(self._scan_folded(data))
            if decode:
                cands.extend(self._scan_encoded(data, classes))
        finally:
            dense_windows = background.result() if background is not None else None
        if dense_windows:
            cands.extend(self._confirm_windows(data, dense_windows))
        return _unresolved(cands) if overlapping else _resolve(cands)

    def find(self, text: str, *, decode: bool = False, overlapping: bool = False) -> list[Finding]:
        """Findings in ``text`` with str offsets (a span is widened to whole characters)."""
        if text.isascii():
            return self.find_bytes(text.encode("ascii"), decode=decode, overlapping=overlapping)
        data = text.encode("utf-8", "surrogatepass")
        out = []
        for f in self.find_bytes(data, decode=decode, overlapping=overlapping):
            s, e = _char_index(data, f.start, ceil=False), _char_index(data, f.end, ceil=True)
            out.append(Finding(s, e, f.rule_id, f.category, f.encoding))
        return out

    # ------------------------------------------------------------ scanning

    def _scan(self, data: bytes, dense: bool = True) -> list[tuple[int, int, int, Finding]]:
        """Direct candidates (start, -length, rule index, Finding). ``dense=False``:
        leave out the dense database (its scan is running in the background)."""
        n = len(data)
        windows: dict[int, list[tuple[int, int]]] = {}
        pair = self._hs_db
        if pair is not None and n:
            with self._lock:  # one scan at a time on the databases' own scratch
                windows = self._hs_windows(data, pair.main, None)
                if dense and pair.dense is not None:
                    windows.update(self._hs_windows(data, pair.dense, None))
        if self._keyword_rules and n:
            lower: bytes | None = None
            occurrences: dict[bytes, list[int]] = {}
            for c in self._keyword_rules:
                if not c.kws:
                    windows.setdefault(c.index, []).append((0, n))
                    continue
                if lower is None:
                    lower = data.lower()
                wins = windows.setdefault(c.index, [])
                for kw in c.kws:
                    occ = occurrences.get(kw)
                    if occ is None:
                        occ = occurrences[kw] = _find_all(lower, kw)
                    k_len = len(kw)
                    wins.extend((k + k_len - c.width, k) for k in occ)
        return self._confirm_windows(data, windows)

    def _confirm_windows(self, data: bytes, windows: dict[int, list[tuple[int, int]]]
                         ) -> list[tuple[int, int, int, Finding]]:
        out: list[tuple[int, int, int, Finding]] = []
        for idx, wins in windows.items():
            if wins:
                self._confirm(self._compiled[idx], data, wins, out)
        return out

    def _hs_windows(self, data: bytes, db: Any, scratch: Any) -> dict[int, list[tuple[int, int]]]:
        """Rule index -> start-offset windows from one scan of ``db`` (``scratch``:
        one of the caller's own, else the database's)."""
        windows: dict[int, list[tuple[int, int]]] = {}
        if db is None:
            return windows
        # start-offset windows per rule, merged as hits arrive (hyperscan reports
        # ends in ascending order) so a run of digits firing at every byte costs
        # one window, not one tuple per byte
        kw_map = self._hs_kw
        spans = self._hs_spans
        current: dict[int, list[int]] = {}

        def on_match(rid: int, _from: int, to: int, _flags: int, _ctx: Any) -> None:
            width, shortest = spans[rid]
            lo, hi = to - width, to - shortest
            win = current.get(rid)
            if win is not None and lo <= win[1] + 1:
                if hi > win[1]:
                    win[1] = hi
                return
            if win is not None:
                windows.setdefault(rid, []).append((win[0], win[1]))
            current[rid] = [lo, hi]

        if scratch is None:
            db.scan(data, match_event_handler=on_match)
        else:
            db.scan(data, match_event_handler=on_match, scratch=scratch)
        for rid, win in current.items():
            windows.setdefault(rid, []).append((win[0], win[1]))
        for rid in [r for r in windows if r >= _KW_BASE]:  # keyword literal of a demoted rule
            windows.setdefault(kw_map[rid - _KW_BASE][0], []).extend(windows.pop(rid))
        return windows

    def _dense_in_background(self, data: bytes) -> _DenseScan | None:
        """Start the dense database's scan of ``data`` on the helper thread, or None
        (no dense database, a small buffer — a hand-over costs tens of µs —, a
        single CPU, or the helper busy with another stream's scan)."""
        pair = self._hs_db
        if pair is None or pair.dense is None or len(data) < PARALLEL_MIN or not _cpus_to_spare():
            return None
        if not pair.helper_lock.acquire(False):
            return None
        try:
            if self._helper is None:
                from tcg.detect.helper import Helper

                self._helper = Helper()
            if pair.helper_scratch is None:
                import hyperscan

                pair.helper_scratch = hyperscan.Scratch(pair.dense)
            scratch = pair.helper_scratch
            self._helper.start(lambda: self._hs_windows(data, pair.dense, scratch))
        except BaseException:
            pair.helper_lock.release()
            raise
        return _DenseScan(self._helper, pair.helper_lock)

    def _confirm(self, c: _Compiled, data: bytes, wins: list[tuple[int, int]],
                 out: list[tuple[int, int, int, Finding]]) -> None:
        n = len(data)
        span = c.width + CONTEXT
        low = c.low_pat
        search = (c.pat if low is None else low).search
        for lo, hi in _merge(wins):
            pos = max(lo, 0)
            endpos = min(n, hi + span)
            if pos > hi:
                continue
            base = 0
            hay = data
            if low is not None:
                # a case-insensitive rule runs lowered on a lowered copy of the window
                # (and of the byte before it: \b and a multiline ^ look at it)
                base = max(pos - 1, 0)
                hay = data[base:endpos].lower()
            p, e_, h = pos - base, endpos - base, hi - base
            while p <= h:
                m = search(hay, p, e_)
                if m is None or m.start() > h:
                    break
                p = m.start() + 1
                f = self._accept(c, data, m, base)
                if f is not None:
                    out.append((f.start, f.start - f.end, c.index, f))

    def _accept(self, c: _Compiled, data: bytes, m: re.Match[bytes], base: int = 0) -> Finding | None:
        s, e = m.span()
        s += base
        e += base
        if c.kws:
            seg = data[s:e].lower()
            if not any(k in seg for k in c.kws):
                return None
        vs, ve = s, e
        if c.rule.has_value_group:
            gs, ge = m.span("value")
            if gs >= 0:
                vs, ve = gs + base, ge + base
        if not self._value_ok(c, data[vs:ve]):
            return None
        if c.rule.category == "pii" and not _in_text(data, s, e):
            return None
        if c.block_end is not None:
            end = c.block_end.search(data, ve)
            ve = end.end() if end is not None else len(data)  # no END line: fail closed
        return Finding(vs, ve, c.rule.id, c.rule.category)

    @staticmethod
    def _value_ok(c: _Compiled, value: bytes) -> bool:
        if not value or value in c.allow_values:
            return False
        if any(p.search(value) for p in c.allow_pats):
            return False
        if c.entropy is not None and shannon_entropy(value) < c.entropy:
            return False
        return c.validator is None or c.validator(value)

    def _scan_folded(self, data: bytes) -> list[tuple[int, int, int, Finding]]:
        """Fold rules on homoglyph/width-folded text; spans map back to original bytes.

        Only regions around non-ASCII 4 KB blocks are decoded and folded (a block
        test is one C call), so mostly-ASCII input with a stray "✓" stays fast.
        A region reaches ``radius`` bytes past its block: every match holding a
        folded (hence non-ASCII) character, with its context, lies inside it.
        """
        table = foldmod.fold_table()
        foldable = foldmod.foldable().search
        width = max(c.width for c in self._fold)
        # Every kept match sits within ~2 widths of a folded character of the block, and
        # needs its width + CONTEXT of folded bytes around it (folded bytes can be 4x
        # denser than the original): 16 widths is a safe reach.
        radius = 16 * width + 32
        n = len(data)
        # one region per non-ASCII block, not merged: a hit in a long Russian text
        # then folds ~4 KB, not the whole text (overlaps only duplicate findings)
        regions = [(max(0, i - radius), min(n, i + _FOLD_BLOCK + radius))
                   for i in range(0, n, _FOLD_BLOCK) if not data[i:i + _FOLD_BLOCK].isascii()]
        out: list[tuple[int, int, int, Finding]] = []
        # A region is folded only if a fold rule's keyword can occur in it once folded:
        # a small hyperscan database answers on the raw bytes, else a regex on the text.
        pre_db = self._fold_precheck_db()
        prechecks = self._fold_prechecks() if pre_db is None else None
        for lo, hi in regions:
            # Nothing here folds (fold() only maps non-ASCII characters, and deleting
            # the ASCII bytes keeps every valid UTF-8 sequence whole): the direct scan
            # sees it all. Far cheaper than folding to find out.
            if not foldable(data[lo:hi].translate(None, _ASCII).decode("utf-8", "surrogateescape")):
                continue
            if pre_db is not None and not _hs_any(pre_db, data[lo:hi]):
                continue
            text = data[lo:hi].decode("utf-8", "surrogateescape")
            if prechecks is not None and not any(p.search(text) for p in prechecks):
                continue  # no fold rule's keyword can occur here, folded or not
            folded = text.translate(table)
            if folded == text:
                continue
            fb = folded.encode("utf-8", "surrogateescape")
            lower = fb.lower()
            found: list[tuple[int, int, int, Finding]] = []
            for c in self._fold:
                if c.kws:
                    wins = [(k + len(kw) - c.width, k) for kw in c.kws for k in _find_all(lower, kw)]
                else:
                    wins = [(0, len(fb))]
                if wins:
                    self._confirm(c, fb, wins, found)
            for _s, _neg, idx, f in found:
                reach = self._compiled[idx].width + CONTEXT + 4  # +4: a char cut at the edge
                if (lo > 0 and f.end - reach < 0) or (hi < n and f.start + reach > len(fb)):
                    continue  # too close to a cut edge: the neighbouring region decides
                cs = len(fb[:f.start].decode("utf-8", "surrogateescape"))
                ce = len(fb[:f.end].decode("utf-8", "surrogateescape"))
                near = slice(max(0, cs - width), ce + CONTEXT)
                if text[near] == folded[near]:
                    continue  # nothing folded here: the direct scan owns this match
                bs = lo + len(text[:cs].encode("utf-8", "surrogateescape"))
                be = lo + len(text[:ce].encode("utf-8", "surrogateescape"))
                out.append((bs, bs - be, idx, Finding(bs, be, f.rule_id, f.category)))
        return out

    def _fold_prechecks(self) -> list[re.Pattern[str]] | None:
        """Keyword prechecks for the fold rules (None if one has no keywords), built once."""
        if self._fold_pre is None:
            pats = [foldmod.keyword_precheck([k.decode("utf-8") for k in c.kws]) for c in self._fold]
            self._fold_pre = (None if any(p is None for p in pats)
                              else [p for p in pats if p is not None],)
        return self._fold_pre[0]

    def _scan_encoded(self, data: bytes, classes: bytes | None = None
                      ) -> list[tuple[int, int, int, Finding]]:
        from tcg.detect.encoded import encoded_runs

        out: list[tuple[int, int, int, Finding]] = []
        for s, e, decoded in encoded_runs(data, classes):
            inner = [t for t in self._scan(decoded) if t[3].category in ENCODED_CATEGORIES]
            if not inner:
                continue
            # secrets before PII, then rule order: deterministic choice of the reported id
            _, _, idx, f = min(inner, key=lambda t: (t[3].category != "secret", t[2], t[0]))
            out.append((s, s - e, idx, Finding(s, e, f.rule_id, f.category, "base64")))
        return out


_HS_CACHE_FORMAT = b"tcg-hsdb-5"  # 5: main + dense databases (change when the split rule changes)
class _HsPair:
    """The rule set's hyperscan databases: ``main`` (rules with a literal, and the
    keyword literals) and ``dense`` (rules whose matches need no literal run of
    DENSE_FACTOR bytes, see tcg.detect.regex.literal_factor: card numbers, IBAN,
    phone numbers, e-mail). Such rules run as automata over every byte and cost
    more than all the others together; in a database of their own they scan on a
    second core while this thread does the rest (Detector.find_bytes).
    ``scan`` runs both in turn, for small buffers and the self-check."""

    def __init__(self, main: Any, dense: Any, dense_ids: frozenset[int]) -> None:
        self.main = main
        self.dense = dense
        self.dense_ids = dense_ids if dense is not None else frozenset()
        # the helper thread's scan of the dense database: a scratch of its own
        self.helper_lock = threading.Lock()
        self.helper_scratch: Any = None

    def scan(self, data: bytes, match_event_handler: Any) -> None:
        for db in (self.main, self.dense):
            if db is not None:
                db.scan(data, match_event_handler=match_event_handler)


class _DenseScan:
    """A dense-database scan running on the helper thread (Detector.find_bytes)."""

    def __init__(self, helper: Helper, lock: Any) -> None:
        self._helper = helper
        self._lock = lock

    def result(self) -> dict[int, list[tuple[int, int]]]:
        try:
            return self._helper.result()  # type: ignore[no-any-return]
        finally:
            self._lock.release()


@lru_cache(maxsize=1)
def _cpus_to_spare() -> bool:
    """More than one CPU is ours (the affinity mask where the OS has one), unless
    TCG_DETECT_THREADS=1 asks for a single thread. Asked once per process."""
    if os.environ.get(THREADS_ENV, "").strip() == "1":
        return False
    try:
        return len(os.sched_getaffinity(0)) > 1
    except (AttributeError, OSError):  # macOS, Windows
        return (os.cpu_count() or 1) > 1


_KW_BASE = 1 << 20  # hyperscan ids at and above this are keyword literals, not rules


def _literal(kw: bytes) -> bytes:
    return b"".join(b"\\x%02x" % b for b in kw)


def _hs_cache_file(cache_dir: Path | None, exprs: list[tuple[_Compiled, bytes, int]],
                   compiled: list[_Compiled]) -> Path | None:
    """Cache path keyed by everything the database is built from."""
    if cache_dir is None:
        return None
    import platform

    import hyperscan

    h = sha256(_HS_CACHE_FORMAT + b"\0dense-factor-%d" % DENSE_FACTOR)
    h.update(str(getattr(hyperscan, "__version__", "")).encode())
    h.update(platform.machine().encode())
    for c, expr, flags in exprs:
        h.update(b"\0%d\0%d\0" % (c.index, flags) + expr)
    for c in compiled:  # keyword literals of demoted rules come from these
        h.update(b"\1%d\0" % c.index + b"\0".join(c.kws))
    return cache_dir / f"hs-{h.hexdigest()[:32]}.db"


def _file_digest(path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        return sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


_HS_TAG = "hyperscan-db"


def _hs_cache_load(path: Path | None, exprs: list[tuple[_Compiled, bytes, int]], key: bytes | None
                   ) -> tuple[Any, list[tuple[_Compiled, bytes, int]]] | None:
    """The cached database, read only when its MAC verifies under the install key
    and names this code (tcg.cachestore).

    The cache dir is writable by anything running as the user: an unsigned or
    forged database (one that matches nothing, or a blob crafted against
    hyperscan's deserializer) must never be loaded. No key: no cache.
    """
    if path is None or key is None:
        return None
    import json

    import hyperscan

    from tcg.cachestore import read_cache

    try:
        raw = read_cache(path, key, _HS_TAG)
        if raw is None:
            return None
        head, _, blobs = raw.partition(b"\n")
        meta = json.loads(head.decode("ascii"))
        indices, dense = set(meta["rules"]), frozenset(meta["dense"])
        accepted = [item for item in exprs if item[0].index in indices]
        main_len = int.from_bytes(blobs[:8], "big")
        main_blob, dense_blob = blobs[8 : 8 + main_len], blobs[8 + main_len :]
        if not main_blob and not dense_blob:
            return (None, accepted) if not accepted else None

        def load(blob: bytes) -> Any:
            if not blob:
                return None
            db = hyperscan.loadb(blob, hyperscan.HS_MODE_BLOCK)
            db.scratch = hyperscan.Scratch(db)
            return db

        return _HsPair(load(main_blob), load(dense_blob), dense), accepted
    except (OSError, ValueError, TypeError, KeyError, hyperscan.error):
        return None


def _hs_cache_store(path: Path | None, db: Any, accepted: list[tuple[_Compiled, bytes, int]],
                    key: bytes | None) -> None:
    """Best effort: a cache that cannot be written only costs compile time. Signed
    with the install key (see _hs_cache_load); without a key nothing is written."""
    if path is None or key is None:
        return
    import json

    import hyperscan

    from tcg.cachestore import write_cache
    from tcg.paths import ensure_private_dir

    try:
        ensure_private_dir(path.parent)
        meta = {"rules": sorted(c.index for c, _, _ in accepted),
                "dense": sorted(db.dense_ids) if db is not None else []}
        main = bytes(hyperscan.dumpb(db.main)) if db is not None and db.main is not None else b""
        dense = bytes(hyperscan.dumpb(db.dense)) if db is not None and db.dense is not None else b""
        body = json.dumps(meta).encode("ascii") + b"\n" + len(main).to_bytes(8, "big") + main + dense
        write_cache(path, key, _HS_TAG, body)
    except (OSError, hyperscan.error):
        return


# Bytes that occur in text next to an e-mail address or a phone number: printable ASCII,
# tab/CR/LF, ESC and backspace (terminal output).
_TEXT_BYTES = frozenset(range(0x20, 0x7F)) | frozenset(b"\t\n\r\x1b\x08")


def _in_text(data: bytes, s: int, e: int) -> bool:
    """The match ``data[s:e]`` (ASCII) sits in text, judged by the byte before it and the
    two after it (the context the engine may look at, see CONTEXT): each is a text byte
    or a UTF-8 sequence that can border ASCII there (a continuation byte ending a
    character before it; a lead byte followed by a continuation after it). Random binary
    fails this about 7 times in 8, so personal data is not "found" in images or archives,
    where masking a lucky e-mail-shaped run would corrupt the bytes."""
    if s > 0:
        b = data[s - 1]
        if b not in _TEXT_BYTES and not 0x80 <= b <= 0xBF:
            return False
    if e < len(data):
        b = data[e]
        if b in _TEXT_BYTES:
            return True
        if not 0xC2 <= b <= 0xF4:
            return False
        return e + 1 >= len(data) or 0x80 <= data[e + 1] <= 0xBF
    return True


def _all_starts(pat: re.Pattern[bytes], data: bytes) -> list[re.Match[bytes]]:
    out: list[re.Match[bytes]] = []
    pos = 0
    while True:
        m = pat.search(data, pos)
        if m is None:
            return out
        out.append(m)
        pos = m.start() + 1


def _hs_any(db: Any, data: bytes) -> bool:
    """Whether the hyperscan database ``db`` matches anywhere in ``data``."""
    seen: list[int] = []

    def on_match(_rid: int, _f: int, _t: int, _fl: int, _c: Any) -> bool:
        seen.append(1)
        return True  # stop at the first match

    import hyperscan

    try:
        db.scan(data, match_event_handler=on_match)
    except hyperscan.ScanTerminated:  # how the binding reports the early stop
        pass
    return bool(seen)


def _find_all(haystack: bytes, needle: bytes) -> list[int]:
    out = []
    find = haystack.find
    i = find(needle)
    while i >= 0:
        out.append(i)
        i = find(needle, i + 1)
    return out


def _merge(wins: list[tuple[int, int]]) -> list[tuple[int, int]]:
    wins.sort()
    merged: list[tuple[int, int]] = []
    for lo, hi in wins:
        if merged and lo <= merged[-1][1] + 1:
            if hi > merged[-1][1]:
                merged[-1] = (merged[-1][0], hi)
        else:
            merged.append((lo, hi))
    return merged


_CATEGORY_ORDER = ("secret", "pii", "reference")


def _resolve(cands: list[tuple[int, int, int, Finding]]) -> list[Finding]:
    """Sorted, non-overlapping findings.

    Categories are resolved in the order secret, pii, reference: a candidate
    that overlaps a kept finding of an earlier category is dropped (an e-mail
    regex swallowing ``token@host`` must not hide the token). Within a category
    the leftmost, then longest, then first rule wins; a candidate sticking out
    of a kept span is clipped, so the union of the category's candidates stays
    covered.
    """
    cands.sort(key=lambda t: (t[0], t[1], t[2]))
    kept: list[Finding] = []
    for cat in _CATEGORY_ORDER:
        starts = [f.start for f in kept]
        ends = [f.end for f in kept]
        added: list[Finding] = []
        last_end = -1
        for _s, _neg, _idx, f in cands:
            if f.category != cat or f.end <= last_end:
                continue
            i = bisect.bisect_left(starts, f.end) - 1
            if i >= 0 and ends[i] > f.start:
                continue  # overlaps a finding of a more important category
            if f.start < last_end:
                f = Finding(last_end, f.end, f.rule_id, f.category, f.encoding)
            added.append(f)
            last_end = f.end
        kept = sorted(kept + added, key=lambda f: f.start)
    return kept


def _unresolved(cands: list[tuple[int, int, int, Finding]]) -> list[Finding]:
    cands.sort(key=lambda t: (t[0], t[1], t[2]))
    seen: set[Finding] = set()
    out = []
    for t in cands:
        if t[3] not in seen:
            seen.add(t[3])
            out.append(t[3])
    return out


def _char_index(data: bytes, b: int, *, ceil: bool) -> int:
    """str index of byte offset ``b`` in UTF-8 ``data`` (rounded to a whole character)."""
    count = len(data[:b].translate(None, _CONT))
    mid = b < len(data) and data[b] in _CONT
    return count if (ceil or not mid) else count - 1


# ---------------------------------------------------------------- loading


def disabled_rules(policy: Policy | None) -> frozenset[str]:
    if policy is None:
        return frozenset()
    value = policy.get("detect.disabled_rules", []) or []
    return frozenset(str(v) for v in value)


@lru_cache(maxsize=8)
def _cached_detector(disabled: frozenset[str], engine: str,
                     categories: frozenset[str] | None = None) -> Detector:
    from tcg.keyhash import load_or_create_key
    from tcg.paths import get_paths

    paths = get_paths()
    cache_dir = paths.cache / "detect"
    try:
        key: bytes | None = load_or_create_key(paths)
    except Exception:  # noqa: BLE001 - no key, no memo: only start-up time is lost
        key = None
    memo = rx.AnalysisMemo(cache_dir / "analysis.memo", key)
    digest = rule_files_digest(builtin_rule_files())
    remembered = memo.rules_for(digest)

    def wanted(rules: list[Rule]) -> list[Rule]:
        return [r for r in rules if r.id not in disabled
                and (categories is None or r.category in categories)]

    detector = None
    if remembered is not None:
        try:
            rules = [_rule_from_memo(d) for d in remembered]
            detector = Detector.from_rules(wanted(rules), engine=engine, cache_dir=cache_dir,
                                           memo=memo)
        except (NeedsExamplesError, TypeError, ValueError, KeyError):
            detector = None
    if detector is None:
        full = load_rules(memo=memo)
        memo.store_rules(digest, [_rule_to_memo(r) for r in full])
        detector = Detector.from_rules(wanted(full), engine=engine, cache_dir=cache_dir, memo=memo)
    memo.save()
    return detector


def rule_files_digest(files: list[tuple[str, str]]) -> str:
    """SHA-256 over the rule files' names and texts, each length-prefixed (unambiguous)."""
    h = sha256()
    for name, text in files:
        for part in (name, text):
            raw = part.encode("utf-8", "surrogatepass")
            h.update(b"%d\0" % len(raw) + raw)
    return h.hexdigest()


_MEMO_FIELDS = ("id", "category", "description", "regex", "keywords", "entropy", "validator",
                "fold", "max_len", "min_len", "allow_values", "allow_patterns", "block_end",
                "has_value_group", "source")


def _rule_to_memo(rule: Rule) -> dict[str, Any]:
    # Examples stay out of the cache: they are only needed to verify a database.
    return {f: getattr(rule, f) for f in _MEMO_FIELDS}


_NO_EXAMPLES = {"examples_match": (), "examples_no_match": ()}


def _rule_from_memo(d: dict[str, Any]) -> Rule:
    fields = {**_NO_EXAMPLES, **{f: d[f] for f in _MEMO_FIELDS}}
    for f in ("keywords", "allow_values", "allow_patterns"):
        fields[f] = tuple(fields[f])
    if fields["validator"] is not None and fields["validator"] not in VALIDATORS:
        raise ValueError("unknown validator in memo")
    return Rule(*[fields[f] for f in Rule._fields])  # positional: the Record's fast path


def load_detector(policy: Policy | None = None, *, engine: str | None = None,
                  categories: Iterable[str] | None = None) -> Detector:
    """The detector for the packaged rules minus the policy's ``detect.disabled_rules``
    (and, with ``categories``, only the rules of those categories: a secret scan leaves
    out the PII rules, the most expensive ones on source code).

    Built once per process for each distinct (disabled set, engine, categories): the part
    of the policy that matters to detection. The compiled database and the parsed rules
    come from the signed start-up cache (tcg.signed), so only the first call after an
    install or a rule change pays for compiling.
    """
    cats = frozenset(categories) if categories is not None else None
    return _cached_detector(disabled_rules(policy), engine or default_engine(), cats)
