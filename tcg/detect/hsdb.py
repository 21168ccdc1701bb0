"""Hyperscan for the detector: whether it is there, which engine to use, and the rule
set's compiled databases (built, checked against every rule's examples, cached signed).

A module of its own so that a surface which only asks "hyperscan or re?" (the inbound
gate picks its engine the same way) does not load the detector, and so the database's
build / verify / cache cycle reads in one place. hyperscan itself is imported only
inside the functions that need it: asking whether it is available is the only cost
at import (the rule analysis in tcg.detect.regex loads with the first build).
"""

from __future__ import annotations

import os

from tcg.digest import sha256

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Callable
    from typing import Any

    from tcg.detect.compiled import CompiledRule
    from tcg.detect.helper import Helper
    from tcg.detect.regex import AnalysisMemo

    Entry = tuple[CompiledRule, bytes, int]  # a rule, its hyperscan expression and flags

ENGINE_ENV = "TCG_DETECT_ENGINE"
# A rule whose matches need no literal run this long goes to the dense database.
DENSE_FACTOR = 2
# Buffers at least this large are scanned with the dense database (rules with no
# literal, see HsPair) on a helper thread beside the main one; below it the hand-over
# costs more than it saves. TCG_DETECT_THREADS=1 keeps every scan on one thread.
PARALLEL_MIN = 1 << 17
THREADS_ENV = "TCG_DETECT_THREADS"
KW_BASE = 1 << 20  # hyperscan ids at and above this are keyword literals, not rules
# Seconds a process waits for another one compiling the same database, and how often it looks.
BUILD_WAIT = 30.0
BUILD_POLL = 0.02
_HS_CACHE_FORMAT = b"tcg-hsdb-6"  # 6: the file name in the MAC tag (5: main + dense databases)
_HS_TAG = "hyperscan-db"
DEMOTED_FILE = "hs-demoted"  # expressions the self-check demoted (_demoted_before)
_DEMOTED_TAG = "hyperscan-demoted"
DEMOTED_MAX = 512


class NeedsExamplesError(ValueError):
    """Rules were restored from the start-up memo without their examples, but the
    hyperscan database must be (re)verified against them: load the rules whole. A
    ValueError, like every other memo entry that does not fit (tcg.detect.engine)."""


def hyperscan_available() -> bool:
    try:
        from tcg._lean import hs as hyperscan  # noqa: F401
    except ImportError:
        return False
    return True


def default_engine() -> str:
    """``hyperscan`` when its wheel imports, else ``re``; ``TCG_DETECT_ENGINE=re`` forces re."""
    forced = os.environ.get(ENGINE_ENV, "").strip().lower()
    if forced == "re":
        return "re"
    return "hyperscan" if hyperscan_available() else "re"


class HsPair:
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
        from tcg._lean.threads import allocate_lock  # not threading: a masking process's start

        self.helper_lock = allocate_lock()
        self.helper_scratch: Any = None
        self.helper: Helper | None = None

    def scan(self, data: bytes, match_event_handler: Any) -> None:
        for db in (self.main, self.dense):
            if db is not None:
                db.scan(data, match_event_handler=match_event_handler)

    def dense_in_background(self, data: bytes, windows: Callable[[bytes, Any, Any], Any]
                            ) -> DenseScan | None:
        """Start ``windows(data, dense database, scratch)`` on the helper thread, or None
        (no dense database, a small buffer — a hand-over costs tens of µs —, a single
        CPU, or the helper busy with another stream's scan)."""
        if self.dense is None or len(data) < PARALLEL_MIN or not _cpus_to_spare():
            return None
        if not self.helper_lock.acquire(False):
            return None
        try:
            if self.helper is None:
                from tcg.detect.helper import Helper

                self.helper = Helper()
            if self.helper_scratch is None:
                from tcg._lean import hs as hyperscan

                self.helper_scratch = hyperscan.Scratch(self.dense)
            dense, scratch = self.dense, self.helper_scratch
            self.helper.start(lambda: windows(data, dense, scratch))
        except BaseException:
            self.helper_lock.release()
            raise
        return DenseScan(self.helper, self.helper_lock)


class DenseScan:
    """A dense-database scan running on the helper thread (Detector.find_bytes)."""

    def __init__(self, helper: Helper, lock: Any) -> None:
        self._helper = helper
        self._lock = lock

    def result(self) -> dict[int, list[tuple[int, int]]]:
        try:
            return self._helper.result()  # type: ignore[no-any-return]
        finally:
            self._lock.release()


_SPARE: list[bool] = []  # _cpus_to_spare's answer, once asked


def _cpus_to_spare() -> bool:
    """More than one CPU is ours (the affinity mask where the OS has one), unless
    TCG_DETECT_THREADS=1 asks for a single thread. Asked once per process."""
    if not _SPARE:
        if os.environ.get(THREADS_ENV, "").strip() == "1":
            spare = False
        else:
            try:
                spare = len(os.sched_getaffinity(0)) > 1
            except (AttributeError, OSError):  # macOS, Windows
                spare = (os.cpu_count() or 1) > 1
        _SPARE.append(spare)
    return _SPARE[0]


def build(compiled: list[CompiledRule], memo: AnalysisMemo | None,
          cache_dir: str | os.PathLike[str] | None) -> tuple[HsPair | None, list[Entry]]:
    """The databases for ``compiled`` and the entries they run (the rules hyperscan
    takes; the others run on keywords + re). Loaded from the signed cache in
    ``cache_dir`` when it verifies, else compiled, self-checked and stored.

    Raises NeedsExamplesError when the database must be verified but the rules came
    from the memo without their examples."""
    from tcg._lean import hs as hyperscan
    from tcg.detect import regex as rx

    exprs: list[Entry] = []
    for c in compiled:
        try:
            expr, flags = (memo.hyperscan_pattern if memo else rx.hyperscan_pattern)(c.rule.regex)
        except rx.PatternError:
            continue  # not translatable: the rule runs on keywords + re
        exprs.append((c, expr, flags))

    def compile_one(items: list[Entry], kws: list[tuple[int, bytes]]) -> Any:
        if not items and not kws:
            return None
        db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        db.compile(
            expressions=[e for _, e, _ in items] + [_literal(kw) for _, kw in kws],
            ids=[c.index for c, _, _ in items] + [KW_BASE + j for j in range(len(kws))],
            flags=[f for _, _, f in items] + [hyperscan.HS_FLAG_CASELESS] * len(kws),
        )
        return db

    def compile_set(items: list[Entry], with_keywords: bool = False) -> Any:
        kws = keyword_literals(compiled, items) if with_keywords else []
        dense_ids = frozenset(c.index for c, _, _ in items
                              if rx.literal_factor(c.rule.regex) < DENSE_FACTOR)
        main = [item for item in items if item[0].index not in dense_ids]
        dense = [item for item in items if item[0].index in dense_ids]
        if not main and not kws and not dense:
            return None
        return HsPair(compile_one(main, kws), compile_one(dense, []), dense_ids)

    cache_file = _cache_path(cache_dir, exprs, compiled)
    key = memo.key if memo else None

    def load_verified() -> tuple[Any, list[Entry]] | None:
        loaded = _cache_load(cache_file, exprs, key)
        if loaded is None:
            return None
        db, accepted, digest = loaded
        # The self-check compiles every rule's re (~0.3 s); skip it when the
        # authenticated memo says this exact file already passed it.
        name = os.path.basename(cache_file) if cache_file is not None else ""
        if not (memo and digest and memo.is_verified(name, digest)):
            if any(not c.rule.examples_match for c, _, _ in accepted):
                raise NeedsExamplesError  # rules came from the memo: reload them whole
            if self_check(db, accepted):
                return None  # stale or tampered cache: rebuild (fail closed)
            if memo and digest:
                memo.mark_verified(name, digest)
        return db, accepted

    got = load_verified()
    if got is not None:
        return got
    if any(not c.rule.examples_match for c in compiled):
        raise NeedsExamplesError
    lock = _build_lock(cache_file) if key is not None else None  # no key: nothing to share
    try:
        # Another process may have compiled it while this one waited for the lock.
        got = load_verified() if lock is not None else None
        if got is not None:
            return got
        # Expressions an earlier build's self-check demoted are left out from the start:
        # each found afterwards costs a second compile of the whole database (~1.3 s).
        demoted = _demoted_before(cache_dir, key)
        first = [item for item in exprs if _expr_id(item[1], item[2]) not in demoted]
        accepted = first
        try:
            db = compile_set(first, with_keywords=True)
        except hyperscan.error:
            accepted = []
            for item in first:  # find the patterns hyperscan refuses; they use keywords + re
                try:
                    compile_set([item])
                except hyperscan.error:
                    continue
                accepted.append(item)
            db = compile_set(accepted, with_keywords=True)
        bad = self_check(db, accepted)
        if bad:
            _remember_demoted(cache_dir, key, demoted | {_expr_id(e, f) for c, e, f in accepted
                                                         if c.index in bad})
            accepted = [item for item in accepted if item[0].index not in bad]
            db = compile_set(accepted, with_keywords=True)
        # The identity marked verified is the MAC line this process wrote, never a
        # re-read of the path: what is there now may be another file (a replayed one
        # after a failed write). A failed write: this process still uses ``db``, but
        # nothing is remembered.
        stored = _cache_store(cache_file, db, accepted, key)
        if memo and stored is not None and cache_file is not None:
            memo.mark_verified(os.path.basename(cache_file), stored)
    finally:
        if lock is not None:
            os.close(lock)  # the lock goes with it (flock)
    return db, accepted


def _expr_id(expr: bytes, flags: int) -> str:
    """What a demotion is remembered by: the expression as hyperscan gets it, its
    flags, hyperscan's version and the machine (a fixed hyperscan tries it again)."""
    from tcg._lean import hs as hyperscan
    from tcg.osutil import machine

    h = sha256(b"tcg-hs-demoted\0" + str(getattr(hyperscan, "__version__", "")).encode()
               + b"\0" + machine().encode() + b"\0%d\0" % flags + expr)
    return h.hexdigest()[:32]


def _demoted_before(cache_dir: str | os.PathLike[str] | None, key: bytes | None) -> set[str]:
    """The expressions earlier builds' self-checks demoted (_expr_id), from a file
    signed with the install key (tcg.signed, not a code-bound cache: it outlives
    upgrades, whose first build is the one it saves time for). A wrong entry can
    only cost speed: a demoted rule runs on keywords + re, which find the same."""
    if cache_dir is None or key is None:
        return set()
    from tcg.signed import read_signed_json

    doc = read_signed_json(os.path.join(cache_dir, DEMOTED_FILE), key, _DEMOTED_TAG)
    ids = doc.get("demoted") if doc is not None else None
    return {x for x in ids if isinstance(x, str)} if isinstance(ids, list) else set()


def _remember_demoted(cache_dir: str | os.PathLike[str] | None, key: bytes | None,
                      ids: set[str]) -> None:
    """Best effort (see _demoted_before); at most DEMOTED_MAX are kept."""
    if cache_dir is None or key is None:
        return
    import json

    from tcg.paths import ensure_private_dir
    from tcg.signed import write_signed

    try:
        ensure_private_dir(os.fspath(cache_dir))
        body = json.dumps({"demoted": sorted(ids)[-DEMOTED_MAX:]}).encode("ascii")
        write_signed(os.path.join(cache_dir, DEMOTED_FILE), key, _DEMOTED_TAG, body)
    except OSError:
        pass


def _build_lock(cache_file: str | None) -> int | None:
    """A descriptor holding the lock on compiling ``cache_file``'s database, or None
    (no cache; no flock; held elsewhere for BUILD_WAIT, or by a process that is
    stopped or gone: then this process compiles as well). Terminals opened together after an upgrade (a terminal restoring its
    tabs) otherwise each compiled the same database at once: 4 sessions on 2 CPUs
    waited ~14 s each for their first prompt, ~4 s with the lock. The lock file
    stays (removing it would let a waiter and a newcomer hold two locks)."""
    if cache_file is None:
        return None
    from tcg.osutil import lock_exclusive
    from tcg.paths import ensure_private_dir

    try:
        ensure_private_dir(os.path.dirname(cache_file))
        fd = os.open(cache_file + ".lock", os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError:
        return None
    if lock_exclusive(fd, BUILD_WAIT, poll=BUILD_POLL, give_up=lambda: _holder_stopped(fd)):
        try:  # who holds it: a waiter stops waiting for a holder that is stopped or gone
            os.ftruncate(fd, 0)
            os.pwrite(fd, b"%d\n" % os.getpid(), 0)
        except OSError:
            pass
        return fd
    os.close(fd)
    return None


def _holder_stopped(fd: int) -> bool:
    """Is the process that wrote its pid into the lock file stopped (Ctrl-Z, a
    debugger) or gone? A terminal waiting for its compile would show nothing
    until BUILD_WAIT otherwise. Not known (no pid yet, no /proc): False."""
    from tcg.osutil import stopped_process

    try:
        text = os.pread(fd, 32, 0).strip()
    except OSError:
        return False
    return text.isdigit() and stopped_process(int(text))


def keyword_literals(compiled: list[CompiledRule], accepted: list[Entry]) -> list[tuple[int, bytes]]:
    """(rule index, keyword) for every rule hyperscan does not run itself, in rule order:
    the database reports its keywords' occurrences instead (ids from KW_BASE on)."""
    in_hs = {c.index for c, _, _ in accepted}
    return [(c.index, kw) for c in compiled if c.index not in in_hs for kw in c.kws]


def self_check(db: Any, items: list[Entry]) -> set[int]:
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
                want = {m.end() for m in all_starts(c.pat, text)}
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


def _literal(kw: bytes) -> bytes:
    return b"".join(b"\\x%02x" % b for b in kw)


def _cache_path(cache_dir: str | os.PathLike[str] | None, exprs: list[Entry],
                compiled: list[CompiledRule]) -> str | None:
    """Cache path keyed by everything the database is built from."""
    if cache_dir is None:
        return None
    from tcg._lean import hs as hyperscan
    from tcg.osutil import machine

    h = sha256(_HS_CACHE_FORMAT + b"\0dense-factor-%d" % DENSE_FACTOR)
    h.update(str(getattr(hyperscan, "__version__", "")).encode())
    h.update(machine().encode())
    for c, expr, flags in exprs:
        h.update(b"\0%d\0%d\0" % (c.index, flags) + expr)
    for c in compiled:  # keyword literals of demoted rules come from these
        h.update(b"\1%d\0" % c.index + b"\0".join(c.kws))
    return os.path.join(cache_dir, f"hs-{h.hexdigest()[:32]}.db")


def _cache_load(path: str | None, exprs: list[Entry], key: bytes | None
                ) -> tuple[Any, list[Entry], str] | None:
    """The cached database, the entries it runs and the file's identity for the
    memo, read only when its MAC verifies under the install key and names this
    code and this file name (tcg.cachestore): the name is the hash of the rule
    set, so another rule set's genuine database copied here fails and is rebuilt.

    The cache dir is writable by anything running as the user: an unsigned or
    forged database (one that matches nothing, or a blob crafted against
    hyperscan's deserializer) must never be loaded. No key: no cache.

    The identity is the verified MAC line: it names this exact content (a file
    that passed the self-check once is known by it), so the file is not hashed a
    second time, and each database is read straight into the bytes hyperscan.loadb
    takes (it takes bytes only), never copied out of a buffer of the whole file.
    """
    if path is None or key is None:
        return None
    from tcg._lean import hs as hyperscan
    from tcg.cachestore import read_cache_pieces
    from tcg.leanjson import loads  # not json: its import compiles regexes (~1.5 ms)

    try:
        got = read_cache_pieces(path, key, _HS_TAG, _cut)
        if got is None:
            return None
        mac, (head, main_blob, dense_blob) = got
        meta: Any = loads(head[:-9].decode("ascii"))
        indices, dense = set(meta["rules"]), frozenset(meta["dense"])
        accepted = [item for item in exprs if item[0].index in indices]
        identity = "mac:" + mac.decode("ascii")
        if not main_blob and not dense_blob:
            return (None, accepted, identity) if not accepted else None

        def load(blob: bytes) -> Any:
            if not blob:
                return None
            db = hyperscan.loadb(blob, hyperscan.HS_MODE_BLOCK)
            db.scratch = hyperscan.Scratch(db)
            return db

        return HsPair(load(main_blob), load(dense_blob), dense), accepted, identity
    except (OSError, ValueError, TypeError, KeyError, hyperscan.error):
        return None


def _cut(start: bytes, size: int) -> list[int] | None:
    """Where the cached file's body (_cache_store) divides: the metadata line with
    the main database's 8-byte length, the main database, the dense one (the rest)."""
    end = start.find(b"\n")  # the metadata line is short
    if end < 0 or len(start) < end + 9:
        return None
    head = end + 9
    main_len = int.from_bytes(start[end + 1 : head], "big")
    return [head, main_len, size - head - main_len] if head + main_len <= size else None


def _cache_store(path: str | None, db: Any, accepted: list[Entry],
                 key: bytes | None) -> str | None:
    """Best effort: a cache that cannot be written only costs compile time. Signed
    with the install key (see _cache_load); without a key nothing is written.
    The identity of the file written (as _cache_load returns it), or None when
    nothing was written."""
    if path is None or key is None:
        return None
    import json

    from tcg._lean import hs as hyperscan
    from tcg.cachestore import write_cache_mac
    from tcg.paths import ensure_private_dir

    try:
        ensure_private_dir(os.path.dirname(path))
        meta = {"rules": sorted(c.index for c, _, _ in accepted),
                "dense": sorted(db.dense_ids) if db is not None else []}
        main = bytes(hyperscan.dumpb(db.main)) if db is not None and db.main is not None else b""
        dense = bytes(hyperscan.dumpb(db.dense)) if db is not None and db.dense is not None else b""
        body = json.dumps(meta).encode("ascii") + b"\n" + len(main).to_bytes(8, "big") + main + dense
        mac = write_cache_mac(path, key, _HS_TAG, body)
    except (OSError, hyperscan.error):
        return None
    return None if mac is None else "mac:" + mac.decode("ascii")


def all_starts(pat: re.Pattern[Any], data: Any) -> list[re.Match[Any]]:
    """A match at every start position, overlapping ones included (``finditer``
    skips them): what a hyperscan database reports, for its self-checks."""
    out: list[re.Match[Any]] = []
    pos = 0
    while True:
        m = pat.search(data, pos)
        if m is None:
            return out
        out.append(m)
        pos = m.start() + 1


def matches_anywhere(db: Any, data: bytes) -> bool:
    """Whether the hyperscan database ``db`` matches anywhere in ``data``."""
    seen: list[int] = []

    def on_match(_rid: int, _f: int, _t: int, _fl: int, _c: Any) -> bool:
        seen.append(1)
        return True  # stop at the first match

    from tcg._lean import hs as hyperscan

    try:
        db.scan(data, match_event_handler=on_match)
    except hyperscan.ScanTerminated:  # how the binding reports the early stop
        pass
    return bool(seen)
