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
* Overlaps resolve by category, then position, then rule order
  (tcg.detect.findings.resolve); the result is sorted and non-overlapping.
* hyperscan's databases — availability, build, self-check, signed cache, the
  dense database's helper thread — live in tcg.detect.hsdb.
"""

from __future__ import annotations

import os

from tcg._lean.threads import allocate_lock
from tcg.detect import regex as rx
from tcg.detect.compiled import CompiledRule
from tcg.detect.findings import Finding, char_index, resolve, unresolved
from tcg.detect.rule import (
    Rule,
    load_rules,
    rule_from_memo,
    rule_to_memo,
)

# Not imported at the top: re (with enum behind it), pathlib, the validators and the
# homoglyph folding (non-ASCII input only) cost ~10 ms of a one-commit `tcg scan`,
# which may never compile a pattern (tests/structure keeps it so). Patterns compile
# on first use, validators load on the first candidate.
TYPE_CHECKING = False  # typing costs ~9 ms of import before the first masked byte
if TYPE_CHECKING:
    import re
    from collections.abc import Iterable, Sequence
    from typing import Any

    from tcg.policy.load import Policy

# Bytes of right context a match decision may look at beyond the match itself
# (\b and $ inspect the next byte). Left context: \b inspects the byte before.
CONTEXT = 2
# Inner categories that make an encoded run a finding.
ENCODED_CATEGORIES = ("secret", "pii")
# Max bytes of UTF-8 per folded character (a fold rule's byte bound is 4x its width).
_FOLD_BYTES_PER_CHAR = 4
_ASCII = bytes(range(0x80))
_FOLD_BLOCK = 4096
# The start-up memo's key for the rules of the packaged rule files.
PACKAGED_RULES = "packaged"


class Detector:
    """Compiled rule set. Build with :meth:`from_rules` or :func:`load_detector`."""

    def __init__(self, rules: Sequence[Rule], engine: str | None = None,
                 cache_dir: str | os.PathLike[str] | None = None, memo: rx.AnalysisMemo | None = None):
        self._memo = memo
        #: where start-up caches live (tcg.detect.derived); None: nothing is cached
        self.cache_dir = cache_dir
        self.rules: tuple[Rule, ...] = tuple(rules)
        if not engine:
            from tcg.detect.hsdb import default_engine

            engine = default_engine()
        self.engine = engine
        if self.engine not in ("hyperscan", "re"):
            raise ValueError(f"unknown detection engine {self.engine!r}")
        self._compiled = [CompiledRule.of(i, r) for i, r in enumerate(self.rules)]
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
        self._lock = allocate_lock()
        self._block_rules: dict[str, re.Pattern[bytes]] | None = None
        if self.engine == "hyperscan":
            self._build_hyperscan(cache_dir)

    @property
    def block_rules(self) -> dict[str, re.Pattern[bytes]]:
        """Rule id -> regex (bytes) of the line that closes the block the rule opens.
        Compiled on first use: a scan that meets no PEM header never needs them."""
        if self._block_rules is None:
            self._block_rules = {c.rule.id: c.block_end for c in self._compiled if c.block_end is not None}
        return self._block_rules

    @classmethod
    def from_rules(cls, rules: Iterable[Rule], *, engine: str | None = None,
                   cache_dir: str | os.PathLike[str] | None = None,
                   memo: rx.AnalysisMemo | None = None) -> Detector:
        """A detector over ``rules`` (rule order breaks ties between equal spans).

        ``cache_dir``: keep the compiled hyperscan database there (compiling
        ~170 rules takes >1 s, loading the cached one ~1 ms). The cached
        database is re-verified against every rule's examples on load.
        """
        return cls(list(rules), engine, cache_dir, memo)

    # ------------------------------------------------------------ compile

    def _build_hyperscan(self, cache_dir: str | os.PathLike[str] | None) -> None:
        from tcg.detect import hsdb

        db, accepted = hsdb.build(self._compiled, self._memo, cache_dir)
        in_hs = {c.index for c, _, _ in accepted}
        self._hs_db = db
        self._hs_kw = [(idx, len(kw)) for idx, kw in hsdb.keyword_literals(self._compiled, accepted)]
        # hyperscan id -> (max width, min width) of the start-offset window it opens
        self._hs_spans = {c.index: (c.width, c.min_len) for c in self._compiled}
        self._hs_spans.update({hsdb.KW_BASE + j: (self._compiled[idx].width, k_len)
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
                from tcg._lean import hs as hyperscan
                from tcg.detect import derived
                from tcg.detect import fold as foldmod

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
        # the dense rules (see tcg.detect.hsdb.HsPair) scan on the helper thread meanwhile:
        # hyperscan runs without the GIL, so on two CPUs that pass costs next to nothing here
        pair = self._hs_db
        background = None if pair is None else pair.dense_in_background(data, self._hs_windows)
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
        return unresolved(cands) if overlapping else resolve(cands)

    def find(self, text: str, *, decode: bool = False, overlapping: bool = False) -> list[Finding]:
        """Findings in ``text`` with str offsets (a span is widened to whole characters)."""
        if text.isascii():
            return self.find_bytes(text.encode("ascii"), decode=decode, overlapping=overlapping)
        data = text.encode("utf-8", "surrogatepass")
        out = []
        for f in self.find_bytes(data, decode=decode, overlapping=overlapping):
            s, e = char_index(data, f.start, ceil=False), char_index(data, f.end, ceil=True)
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
        from tcg.detect.hsdb import KW_BASE

        for rid in [r for r in windows if r >= KW_BASE]:  # keyword literal of a demoted rule
            windows.setdefault(kw_map[rid - KW_BASE][0], []).extend(windows.pop(rid))
        return windows

    def _confirm(self, c: CompiledRule, data: bytes, wins: list[tuple[int, int]],
                 out: list[tuple[int, int, int, Finding]]) -> None:
        n = len(data)
        span = c.width + CONTEXT
        # (first start, end of the searched range, last start) of each window that has a
        # start left and room for the rule's shortest match; the pattern compiles only
        # when one does
        todo = [(max(lo, 0), min(n, hi + span), hi) for lo, hi in _merge(wins)]
        todo = [w for w in todo if w[0] <= w[2] and w[1] - w[0] >= c.min_len]
        if not todo:
            return
        low = c.low_pat
        search = (c.pat if low is None else low).search
        for pos, endpos, hi in todo:
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

    def _accept(self, c: CompiledRule, data: bytes, m: re.Match[bytes], base: int = 0) -> Finding | None:
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
    def _value_ok(c: CompiledRule, value: bytes) -> bool:
        if not value or value in c.allow_values:
            return False
        # every test is a pure function of the value, so their order only sets the cost: the
        # entropy floor (one Counter) before the allow-list (~28 searches in a generic rule),
        # since a run of low-entropy candidates (token="aaaa…) otherwise pays for all of them
        if c.entropy is not None:
            from tcg.detect.entropy import (
                shannon_entropy,  # a candidate's value: loaded on the first
            )

            if shannon_entropy(value) < c.entropy:
                return False
        if any(p.search(value) for p in c.allow_pats):
            return False
        return c.validator is None or c.validator(value)

    def _scan_folded(self, data: bytes) -> list[tuple[int, int, int, Finding]]:
        """Fold rules on homoglyph/width-folded text; spans map back to original bytes.

        Only regions around non-ASCII 4 KB blocks are decoded and folded (a block
        test is one C call), so mostly-ASCII input with a stray "✓" stays fast.
        A region reaches ``radius`` bytes past its block: every match holding a
        folded (hence non-ASCII) character, with its context, lies inside it.
        """
        from tcg.detect import fold as foldmod  # non-ASCII input only
        from tcg.detect import hsdb

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
            if pre_db is not None and not hsdb.matches_anywhere(pre_db, data[lo:hi]):
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
            from tcg.detect import fold as foldmod

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


# ---------------------------------------------------------------- loading


def disabled_rules(policy: Policy | None) -> frozenset[str]:
    if policy is None:
        return frozenset()
    return frozenset(policy.model.scan.disabled_rules)


_DETECTORS: dict[tuple[frozenset[str], str, frozenset[str] | None], Detector] = {}
_MAX_DETECTORS = 8


def _cached_detector(disabled: frozenset[str], engine: str,
                     categories: frozenset[str] | None = None) -> Detector:
    """One detector per (disabled set, engine, categories) in a process, the last
    eight kept (a dict, not functools.lru_cache: see CompiledRule.__getattr__)."""
    key = (disabled, engine, categories)
    got = _DETECTORS.pop(key, None)
    if got is None:
        got = _build_detector(disabled, engine, categories)
        while len(_DETECTORS) >= _MAX_DETECTORS:
            del _DETECTORS[next(iter(_DETECTORS))]  # the least recently used
    _DETECTORS[key] = got
    return got


def _build_detector(disabled: frozenset[str], engine: str, categories: frozenset[str] | None) -> Detector:
    from tcg.keyhash import load_or_create_key
    from tcg.paths import get_paths

    paths = get_paths()
    cache_dir = os.path.join(paths.cache_dir, "detect")
    try:
        key: bytes | None = load_or_create_key(paths)
    except Exception:  # noqa: BLE001 - no key, no memo: only start-up time is lost
        key = None
    memo = rx.AnalysisMemo(os.path.join(cache_dir, "analysis.memo"), key)
    # The memo is signed and bound to the code that wrote it, the packaged rule files
    # included (tcg.fingerprint): a memo that verifies holds these files' rules, so they
    # are neither read nor hashed here (~2 ms of a one-commit `tcg scan`).
    remembered = memo.rules_for(PACKAGED_RULES)

    def wanted(rules: list[Rule]) -> list[Rule]:
        return [r for r in rules if r.id not in disabled
                and (categories is None or r.category in categories)]

    detector = None
    if remembered is not None:
        try:
            rules = [rule_from_memo(entry) for entry in remembered]
            detector = Detector.from_rules(wanted(rules), engine=engine, cache_dir=cache_dir, memo=memo)
        except (TypeError, ValueError, KeyError):  # hsdb.NeedsExamplesError is a ValueError
            detector = None
    if detector is None:
        full = load_rules(memo=memo)
        memo.store_rules(PACKAGED_RULES, [rule_to_memo(r) for r in full])
        detector = Detector.from_rules(wanted(full), engine=engine, cache_dir=cache_dir, memo=memo)
    memo.save()
    return detector


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
    if not engine:
        from tcg.detect.hsdb import default_engine

        engine = default_engine()
    return _cached_detector(disabled_rules(policy), engine, cats)
