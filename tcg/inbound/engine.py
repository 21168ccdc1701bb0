"""The inbound rule engine: one multi-pattern database run over each view of a text.

Rules are Python ``re`` patterns with Unicode semantics (tcg/inbound/rules.py).
hyperscan runs their prefilter literals (tcg/inbound/prefilter.py), all rules in
ONE database, over the UTF-8 bytes of a view; Python ``re`` then confirms each
rule only inside windows around the places where its literals occur (for a
pair of literal sets: where the second follows the first closely enough).
Without hyperscan, or for a rule hyperscan cannot prefilter (no literals, or
examples the database does not cover), the rule runs with ``re`` over the whole
view. Both paths count the same matches: the confirmation is one loop
(:func:`count_matches`).

Marks (invisible characters, expensive-script characters, confusable-letter
triggers, characters NFKC changes and percent-encodings) are found by small
exact databases over the raw text, with a per-kind cap so a flood costs a
bounded number of callbacks; ``re`` does the same work when hyperscan is missing.

The compiled databases are kept in the cache dir in one file signed with the
install key (tcg.signed): a file that fails the MAC check reads as absent.
"""

from __future__ import annotations

import hashlib
import json
import platform
import re
import sys
import threading
from dataclasses import dataclass, field
from functools import cache, cached_property, lru_cache
from pathlib import Path
from typing import Any

from tcg.inbound import chars
from tcg.inbound.prefilter import SPACE, SPACE_RUN
from tcg.inbound.rules import (
    FLAGS,
    LOOKAROUND_MAX,
    InboundRule,
    builtin_rule_files,
    load_rules,
    rule_from_record,
)

#: a database in the cache, not read yet (InboundEngine._database)
_STORED = object()
MAX_COUNT = 100  # matches counted per rule and view; more adds nothing to a verdict
CACHE_FORMAT = "tcg-inbound-1"
RULES_FORMAT = "tcg-inbound-rules-1"  # the parsed packaged rules (signed like the databases)
# Mark kinds (hyperscan ids of the marks databases).
INVISIBLE, EXPENSIVE, TRIGGER, PERCENT, NFKC = 1, 2, 3, 4, 5
#: marks kept per database before it stops (a flood is a flood at any larger count)
MARK_CAPS = {INVISIBLE: 20_000, EXPENSIVE: 2_001, TRIGGER: 4_000, PERCENT: 2_000, NFKC: 4_000}


@dataclass
class Marks:
    """Character offsets of each kind of mark in a text (ascending), and whether a
    kind stopped at its cap (then only the first ``MARK_CAPS[kind]`` are listed)."""

    at: dict[int, list[int]] = field(default_factory=dict)
    capped: set[int] = field(default_factory=set)

    def of(self, kind: int) -> list[int]:
        return self.at.get(kind, [])


# A whitespace run inside a literal (prefilter.SPACE). ASCII only: the nfkc view turns
# every other whitespace character into a space, so a phrase joined by NBSP in the
# raw text is still seen there.
_WS = b"[\\x09-\\x0d\\x1c-\\x20]{1,%d}" % SPACE_RUN


def _literal(s: str) -> tuple[bytes, int]:
    """(hyperscan expression, flags) for one prefilter literal: caseless, in UTF-8
    mode when it holds non-ASCII letters (hyperscan folds their case there), in
    byte mode otherwise (cheaper to compile)."""
    import hyperscan

    body = _WS.join(b"".join(c.encode("utf-8") if c.isalnum() and not c.isascii()
                             else b"\\x%02x" % ord(c) if c.isascii() else
                             b"\\x{%x}" % ord(c) for c in piece) for piece in s.split(SPACE))
    flags = hyperscan.HS_FLAG_CASELESS
    if not s.isascii():
        flags |= hyperscan.HS_FLAG_UTF8
    return body, flags


def _marks_patterns() -> dict[int, list[tuple[str, str]]]:
    """(hyperscan expression, Python expression) per mark kind; the two spell the
    same character classes."""
    table = chars.skeleton_table()
    foreign = chars.ranges_of({cp for cp in table if chr(cp) not in chars.NATIVE_CYRILLIC})
    cyr = [(0x0400, 0x04FF)]
    latin = "[A-Za-z]"
    exp = list(chars.EXPENSIVE.values())
    return {
        INVISIBLE: [(chars.class_pattern(chars.ALL_INVISIBLE), chars.py_class(chars.ALL_INVISIBLE))],
        EXPENSIVE: [(chars.class_pattern(exp), chars.py_class(exp))],
        TRIGGER: [
            (chars.class_pattern(foreign), chars.py_class(foreign)),
            (latin + chars.class_pattern(cyr), latin + chars.py_class(cyr)),
            (chars.class_pattern(cyr) + latin, chars.py_class(cyr) + latin),
        ],
        PERCENT: [("%[0-9A-Fa-f]{2}", "%[0-9A-Fa-f]{2}"),
                  (r"[?&][A-Za-z0-9_.-]{1,40}=[A-Za-z0-9_.%-]{0,64}\+",
                   r"[?&][A-Za-z0-9_.-]{1,40}=[A-Za-z0-9_.%-]{0,64}\+")],
        NFKC: [(chars.class_pattern(chars.nfkc_unstable()), chars.py_class(chars.nfkc_unstable()))],
    }


#: the mark kinds whose Python pattern is one character class (used to count and cut)
_SIMPLE = {INVISIBLE: chars.ALL_INVISIBLE, EXPENSIVE: tuple(chars.EXPENSIVE.values())}


class _Compiled:
    """A rule ready to count: its pattern, allow patterns and width. The patterns
    are compiled on first use: with the databases and rules from the cache, a
    process compiles only the rules whose literals occur in what it checks."""

    def __init__(self, index: int, rule: InboundRule):
        self.index = index
        self.rule = rule
        self.width = rule.max_width

    @cached_property
    def pat(self) -> re.Pattern[str]:
        return re.compile(self.rule.regex, FLAGS)

    @cached_property
    def allow(self) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(a, FLAGS) for a in self.rule.allow)


def count_matches(c: _Compiled, text: str, windows: list[tuple[int, int]] | None) -> int:
    """Non-overlapping matches of ``c`` in ``text``, leftmost first, allow-listed
    ones skipped, capped at MAX_COUNT. ``windows``: the only (merged, ascending)
    ranges ``[lo, hi)`` where a match may lie, each with a margin of
    LOOKAROUND_MAX characters at its end that only lookarounds may read; None =
    the whole text (the ``re`` path).

    An allow-listed match is skipped whole (so "never send your key" does not
    count as "send your key"); a match ending inside a margin, where the window's
    edge may have faked a ``\\b`` or a lookahead, moves the search one character
    on. Both paths count the same matches."""
    n = 0
    spans = windows if windows is not None else [(0, len(text))]
    search = c.pat.search
    size = len(text)
    last = 0
    for lo, hi in spans:
        limit = hi if hi >= size else hi - LOOKAROUND_MAX - 1
        pos = max(lo, last)
        while pos <= limit and n < MAX_COUNT:
            m = search(text, pos, hi)
            if m is None:
                break
            s, e = m.span()
            if e > limit:
                pos = s + 1  # the window's edge may have faked the match: look further on
            elif any(a.search(m.group(0)) for a in c.allow):
                pos = e if e > s else e + 1  # allow-listed as a whole ("never send …")
            else:
                n += 1
                pos = e if e > s else e + 1
                last = pos
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
        self._py_marks: dict[int, list[re.Pattern[str]]] | None = None  # the re engine's marks
        # one scan at a time on each database's scratch (re-entered when a cached
        # database is unreadable and all are compiled again in the middle of a scan)
        self._lock = threading.RLock()
        self._cache: tuple[Path, bytes] | None = None
        self._rules_db: dict[str, Any] = {}  # "ascii" (byte mode) and "utf8" literals
        self._slots: list[tuple[int, int, int]] = []
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

        h = hashlib.sha256(CACHE_FORMAT.encode())
        from tcg.inbound import prefilter

        for mod in (__file__, chars.__file__, prefilter.__file__):
            h.update(Path(mod).read_bytes())
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
        state = _load_state(self._cache_path("json"), key, CACHE_FORMAT)
        if state is not None:
            try:
                accepted = {int(i) for i in state["rules"]}
                self._slots = [tuple(x) for x in state["slots"]]  # type: ignore[misc]
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

    def _cache_path(self, suffix: str) -> Path | None:
        return None if self._cache is None else self._cache[0].with_name(
            f"{self._cache[0].name}.{suffix}")

    def _compile_all(self) -> set[int]:
        """Compile every database and store each in its signed file, the index last
        (best effort: a cache that cannot be written only costs compile time)."""
        from tcg.detect import derived
        from tcg.signed import write_signed

        accepted = self._compile_rules()
        self._compile_marks()
        if self._cache is not None:
            key = self._cache[1]
            for table, prefix in ((self._rules_db, "rules"), (self._marks_db, "marks")):
                for name, db in table.items():
                    write_signed(self._cache_path(f"{prefix}-{name}.hs"), key,  # type: ignore[arg-type]
                                 CACHE_FORMAT, derived.dump_hs(db).encode("ascii"))
            _store_state(self._cache_path("json"), key, CACHE_FORMAT,
                         {"rules": sorted(accepted), "slots": self._slots,
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
        body = read_signed(path, self._cache[1], CACHE_FORMAT) if path and self._cache else None
        if body is None:
            self._accept(self._compile_all())
            table = self._rules_db if prefix == "rules" else self._marks_db
            return table[name]
        db = table[name] = derived.load_hs(body.decode("ascii"))
        return db

    def _compile_rules(self) -> set[int]:
        """Compile the prefilter database: the literal sets of every rule
        (tcg.inbound.prefilter), one hyperscan id per set. A rule without a
        prefilter, or whose examples the database does not cover (every ``re``
        match must hold a candidate end), is left to ``re`` (returns the indices
        of the rest)."""
        import hyperscan

        slots: list[tuple[int, int, int]] = []  # (rule index, alternative, 0/1)
        exprs: list[tuple[bytes, int, int]] = []
        for c in self._compiled:
            for alt, sets in enumerate(c.rule.prefilter):
                for k, literals in enumerate(sets):
                    exprs.extend((*_literal(s), len(slots)) for s in literals)
                    slots.append((c.index, alt, k))
        self._slots = slots
        # two databases: literals with non-ASCII letters need UTF-8 mode to fold case,
        # which costs seconds to compile; the rest compile in a fraction of that, and
        # an ASCII text is never scanned for the others
        self._rules_db = {}
        for name in ("ascii", "utf8"):
            part = [x for x in exprs if bool(x[1] & hyperscan.HS_FLAG_UTF8) == (name == "utf8")]
            if part:
                db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
                db.compile(expressions=[e for e, _, _ in part], ids=[i for _, _, i in part],
                           flags=[f for _, f, _ in part])
                self._rules_db[name] = db
        good = {c.index for c in self._compiled if c.rule.prefilter}
        for c in self._compiled:
            if c.index not in good:
                continue
            for ex in c.rule.examples_match + c.rule.examples_no_match:
                for text in (ex, "padding " * 5 + ex + " trailing"):
                    ends = self._candidates(text).get(c.index, [])
                    for m in _all_matches(c.pat, text):
                        if not any(m.start() < e <= m.end() for e in ends):
                            good.discard(c.index)
        return good

    def _candidates(self, text: str, data: bytes | None = None) -> dict[int, list[int]]:
        """Rule index -> character offsets (ascending) inside every match of the
        rule: the end of the last literal of one of its alternatives' prefilters."""
        data = encode(text) if data is None else data
        hits: dict[int, list[int]] = {}

        def on_match(sid: int, _f: int, to: int, _fl: int, _c: Any) -> None:
            got = hits.get(sid)
            if got is None:
                hits[sid] = [to]
            else:
                got.append(to)

        with self._lock:
            for name in self._rules_db:
                if name == "ascii" or len(data) != len(text):
                    self._database("rules", name).scan(data, match_event_handler=on_match)
        if not hits:
            return {}
        ascii_only = len(data) == len(text)
        by_alt: dict[tuple[int, int], list[list[int]]] = {}
        for sid, ends in hits.items():
            idx, alt, k = self._slots[sid]
            pair = by_alt.setdefault((idx, alt), [[], []])
            pair[k] = ends
        found: dict[int, set[int]] = {}
        for (idx, alt), (first, second) in by_alt.items():
            if len(self._compiled[idx].rule.prefilter[alt]) == 1:
                found.setdefault(idx, set()).update(first)
            elif first and second:
                # bytes: one per character in ASCII text, up to 4 otherwise
                reach = self._compiled[idx].rule.prefilter_reach[alt] * (1 if ascii_only else 4)
                found.setdefault(idx, set()).update(_follows(first, second, reach))
        found = {k: v for k, v in found.items() if v}
        if not found:
            return {}
        conv = byte_to_char(data, sorted({b for v in found.values() for b in v}), text.isascii())
        return {idx: sorted(conv[b] for b in ends) for idx, ends in found.items()}

    def _compile_marks(self) -> None:
        import hyperscan

        for kind, pats in _marks_patterns().items():
            db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
            # percent marks are ASCII: byte mode keeps their bounded repeats cheap
            flags = 0 if kind == PERCENT else hyperscan.HS_FLAG_UTF8
            db.compile(expressions=[hs.encode("ascii") for hs, _ in pats], ids=[kind] * len(pats),
                       flags=[flags] * len(pats))
            self._marks_db[kind] = db

    @staticmethod
    def _hs_ends(db: Any, data: bytes) -> dict[int, set[int]]:
        ends: dict[int, set[int]] = {}
        if db is None:
            return ends

        def on_match(rid: int, _f: int, to: int, _fl: int, _c: Any) -> None:
            ends.setdefault(rid, set()).add(to)

        db.scan(data, match_event_handler=on_match)
        return ends

    # ------------------------------------------------------------ scanning

    def marks(self, text: str, data: bytes | None = None) -> Marks:
        """Invisible/expensive/trigger/percent marks of ``text`` (char offsets)."""
        out = Marks()
        ascii_only = text.isascii()
        kinds = (PERCENT,) if ascii_only else (INVISIBLE, EXPENSIVE, TRIGGER, PERCENT, NFKC)
        if self.engine == "hyperscan":
            data = data if data is not None else encode(text)
            raw: dict[int, list[int]] = {}
            with self._lock:
                for kind in kinds:
                    hits = _scan_capped(self._database("marks", kind), data, MARK_CAPS[kind])
                    if len(hits) >= MARK_CAPS[kind]:
                        out.capped.add(kind)
                    if hits:
                        raw[kind] = hits
            if raw:
                conv = byte_to_char(data, sorted({b for v in raw.values() for b in v}), ascii_only)
                for kind, hits in raw.items():
                    out.at[kind] = [conv[b] for b in hits]
            return out
        if self._py_marks is None:
            self._py_marks = {k: [re.compile(py) for _, py in v] for k, v in _marks_patterns().items()}
        for kind in kinds:
            found: list[int] = []
            for pat in self._py_marks[kind]:
                for m in pat.finditer(text):
                    found.append(m.end())
                    if len(found) >= MARK_CAPS[kind]:
                        break
            if found:
                found = sorted(set(found))
                if len(found) >= MARK_CAPS[kind]:
                    out.capped.add(kind)
                    found = found[:MARK_CAPS[kind]]
                out.at[kind] = found
        return out

    def count_kind(self, kind: int, text: str) -> int:
        """Exact number of characters of a mark kind (after a capped scan)."""
        return len(self.py_mark(kind).findall(text))

    @staticmethod
    def py_mark(kind: int) -> re.Pattern[str]:
        """The Python pattern of a single-character mark kind (INVISIBLE, EXPENSIVE)."""
        return _simple_pattern(kind)

    def scan_view(self, text: str, data: bytes | None = None) -> dict[str, int]:
        """Rule id -> match count in one view (rules that do not match are absent);
        ``data``: the view's UTF-8 (:func:`encode`) when the caller has it."""
        found: dict[str, int] = {}
        if not text:
            return found
        if self._rules_db:
            for idx, ends in self._candidates(text, data).items():
                c = self._compiled[idx]
                if c.index in self._in_db:
                    n = count_matches(c, text, _windows(ends, c.width, len(text)))
                    if n:
                        found[c.rule.id] = n
        for c in self._re_only:
            n = count_matches(c, text, None)
            if n:
                found[c.rule.id] = n
        return found


# ---------------------------------------------------------------- helpers


@cache
def _simple_pattern(kind: int) -> re.Pattern[str]:
    return re.compile(chars.py_class(_SIMPLE[kind]))


def encode(text: str) -> bytes:
    """UTF-8 for the databases: a lone surrogate becomes "?" (one character for one,
    so character offsets survive; hyperscan's UTF-8 mode needs valid UTF-8)."""
    return text.encode("utf-8", "replace")


def byte_to_char(data: bytes, offsets: list[int], ascii_only: bool) -> dict[int, int]:
    """Byte offsets (ascending, on character boundaries) -> character offsets."""
    if ascii_only:
        return {b: b for b in offsets}
    out = {}
    prev_b = prev_c = 0
    for b in offsets:
        prev_c += len(data[prev_b:b].decode("utf-8", "replace"))
        prev_b = b
        out[b] = prev_c
    return out


def _follows(first: list[int], second: list[int], reach: int) -> list[int]:
    """Ends in ``second`` with an end of ``first`` before them, at most ``reach``
    bytes back (both lists ascending)."""
    out = []
    i = 0
    for b in second:
        while i < len(first) and first[i] < b - reach:
            i += 1
        if i < len(first) and first[i] < b:
            out.append(b)
    return out


def _windows(ends: list[int], width: int, n: int) -> list[tuple[int, int]]:
    """Merged ``[lo, hi)`` ranges that hold every match containing a literal that
    ends at one of ``ends`` (a match is at most ``width`` long), plus the margin
    count_matches keeps for lookarounds on both sides."""
    out: list[tuple[int, int]] = []
    reach = width + LOOKAROUND_MAX
    for e in ends:
        lo, hi = max(0, e - reach), min(n, e + reach + 1)
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _scan_capped(db: Any, data: bytes, cap: int) -> list[int]:
    import hyperscan

    hits: list[int] = []
    append = hits.append

    def on_match(_rid: int, _f: int, to: int, _fl: int, _c: Any) -> bool | None:
        append(to)
        return True if len(hits) >= cap else None

    try:
        db.scan(data, match_event_handler=on_match)
    except hyperscan.ScanTerminated:
        pass
    if len(hits) > 1:
        hits = sorted(set(hits))
    return hits


def _all_matches(pat: re.Pattern[str], text: str) -> list[re.Match[str]]:
    """Every match at every start (for the database self-check)."""
    out: list[re.Match[str]] = []
    pos = 0
    while True:
        m = pat.search(text, pos)
        if m is None:
            return out
        out.append(m)
        pos = m.start() + 1


def _load_state(path: Path | None, key: bytes | None, tag: str) -> dict[str, Any] | None:
    """A signed cache file's JSON object; None when absent, forged or unreadable."""
    if path is None or key is None:
        return None
    from tcg.signed import read_signed_json

    return read_signed_json(path, key, tag)


def _store_state(path: Path | None, key: bytes | None, tag: str, state: dict[str, Any]) -> None:
    """Best effort: a cache that cannot be written only costs compile time."""
    if path is None or key is None:
        return
    from tcg.signed import write_signed

    write_signed(path, key, tag, json.dumps(state, separators=(",", ":")).encode("ascii"))


def packaged_rules(files: list[tuple[str, str]], cache_dir: Path | None,
                   key: bytes | None) -> list[InboundRule]:
    """The packaged rules (``files``: builtin_rule_files()), read from a signed cache
    file when neither the rule files nor the code that parses them changed since it
    was written; else parsed and validated (tcg.inbound.rules.load_rules) and stored.
    Parsing analyses every pattern's tree for its prefilter: most of a cold
    process's start-up. A file that fails the MAC check reads as absent."""
    from tcg.inbound import prefilter
    from tcg.inbound import rules as rules_mod

    h = hashlib.sha256(RULES_FORMAT.encode())
    for mod in (rules_mod.__file__, prefilter.__file__):
        h.update(Path(mod).read_bytes())
    h.update(sys.version.encode())
    h.update(json.dumps(files, ensure_ascii=False).encode("utf-8"))
    path = cache_dir / f"rules-{h.hexdigest()[:32]}.json" if cache_dir is not None else None
    state = _load_state(path, key, RULES_FORMAT)
    if state is not None:
        try:
            return [rule_from_record(r) for r in state["rules"]]
        except (KeyError, TypeError):
            pass  # a record of another shape: parse again
    rules = load_rules()
    _store_state(path, key, RULES_FORMAT, {"rules": [r.record() for r in rules]})
    return rules


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
