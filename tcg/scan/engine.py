"""Repository scanner: working tree + full history, parallel, values never kept.

``scan_repo(path, policy)`` is the API the launch gate calls; ``scan_paths``
scans several targets in one pool. Work is cut into batches (by bytes) of blob
ids or file paths; worker processes — forked after the detector is compiled,
so each has it without recompiling — read the contents themselves (their own
``git cat-file --batch`` per repository, or the file on disk) and send back
only finding records: rule id, category, path, line, commit, keyed hash of the
value. Content bytes never cross a process boundary and no value is returned.
"""

from __future__ import annotations

import os
import sys
import time

from tcg.errors import TcgError
from tcg.policy.glob import fnmatchcase
from tcg.record import Record
from tcg.scan import gitobjects, worktree
from tcg.scan.findings import (
    STAT_FIELDS,
    ScanFinding,
    ScanResult,
    add_counts,
    group_distinct,
    new_stats,
)
from tcg.scan.stores import STORE_CATEGORY, STORE_RULE, StoreMatcher, policy_stores, store_rows

TYPE_CHECKING = False  # typing costs ~8 ms on every scan's start-up
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any, Protocol

    class _Detector(Protocol):
        def find_bytes(self, data: bytes) -> list[Any]: ...

__all__ = ["STAT_FIELDS", "ScanFinding", "ScanResult", "scan_paths", "scan_repo"]

DEFAULT_MAX_BLOB_BYTES = 10 * 1024 * 1024
DEFAULT_CATEGORIES = ("secret",)
BATCH_BYTES = 4 * 1024 * 1024  # per task: small enough to spread, large enough to amortise IPC
BATCH_ITEMS = 1000
BINARY_SNIFF = 8000  # git's own heuristic: a NUL in the first 8000 bytes means binary
ALLOW_MARKER = b"tcg:allow"
# Below this much content the keyword + re engine finishes before hyperscan would have
# been imported and its database loaded (a commit, a pre-commit hook's staged files).
RE_ENGINE_MAX_BYTES = 16 * 1024

STATUS_CLEAN = "clean"
STATUS_FINDINGS = "findings"
STATUS_PARTIAL = "partial"
STATUS_ERROR = "error"


# ------------------------------------------------------------------ workers

# Worker state. Set in the parent before the pool forks, so children inherit the
# compiled detector instead of each compiling it again.
_W: dict[str, Any] = {}
_READERS: dict[str, gitobjects.BlobReader] = {}  # least recently used first
_MAX_READERS = 4

# (rule_id, category, path, line, column, commit, blob, source, hash, length)
_Row = tuple[str, str, str, int, int, "str | None", "str | None", str, str, int]


def _set_state(
    detector: _Detector, key: bytes, max_blob: int, disabled: frozenset[str], categories: frozenset[str]
) -> None:
    _W.clear()
    _W.update(detector=detector, key=key, max_blob=max_blob, disabled=disabled, categories=categories)


def _reader(repo: str) -> gitobjects.BlobReader:
    rd = _READERS.pop(repo, None)
    if rd is not None:
        _READERS[repo] = rd  # now the most recently used
        return rd
    while len(_READERS) >= _MAX_READERS:
        old = _READERS.pop(next(iter(_READERS)))
        old.close()
    rd = _READERS[repo] = gitobjects.BlobReader(repo)
    return rd


def _close_readers() -> None:
    while _READERS:
        _, rd = _READERS.popitem()
        rd.close()


def _scan_data(
    data: bytes,
    path: str,
    commit: str | None,
    blob: str | None,
    source: str,
    stats: dict[str, int],
    out: list[_Row],
) -> None:
    detector: _Detector = _W["detector"]
    key: bytes = _W["key"]
    disabled: frozenset[str] = _W["disabled"]
    categories: frozenset[str] = _W["categories"]
    stats["bytes_scanned"] += len(data)
    for f in detector.find_bytes(data):
        if f.rule_id in disabled or f.category not in categories:
            continue
        start, end = f.start, f.end
        line_start = data.rfind(b"\n", 0, start) + 1
        line_end = data.find(b"\n", end)
        if line_end < 0:
            line_end = len(data)
        if data.find(ALLOW_MARKER, line_start, line_end) >= 0:
            stats["suppressed_inline"] += 1
            continue
        import hashlib  # here: a clean scan never loads OpenSSL
        import hmac

        digest = hmac.new(key, data[start:end], hashlib.sha256).hexdigest()[:16]
        line = data.count(b"\n", 0, start) + 1
        column = len(data[line_start:start].decode("utf-8", "replace")) + 1  # code points
        out.append((f.rule_id, f.category, path, line, column, commit, blob, source, digest, end - start))


def _scan_task(task: tuple[Any, ...]) -> tuple[int, list[_Row], dict[str, int]]:
    """One batch: (its sequence number, finding rows in item order, stats)."""
    kind, root, seq, items = task
    stats = new_stats()
    out: list[_Row] = []
    if kind == "blobs":
        reader = _reader(root)
        try:
            contents = reader.read_many([it[0] for it in items])
            for (oid, path, commit, source), (_, data) in zip(items, contents, strict=True):
                if data is None:
                    stats["blobs_missing"] += 1
                elif len(data) > _W["max_blob"]:
                    stats["blobs_skipped_large"] += 1
                elif data.find(b"\0", 0, BINARY_SNIFF) >= 0:
                    stats["blobs_skipped_binary"] += 1
                else:
                    stats["blobs_scanned"] += 1
                    if data:
                        _scan_data(data, path, commit, oid, source, stats, out)
        except BaseException:
            # Unread answers may be left in the pipe: this reader cannot be reused.
            _READERS.pop(root, None)
            reader.close()
            raise
    else:
        max_blob = _W["max_blob"]
        for rel, source in items:
            state, data, _size = worktree.read_regular(os.path.join(root, rel), max_blob)
            if state == "large":
                stats["files_skipped_large"] += 1
            elif data is None:
                continue
            elif data.find(b"\0", 0, BINARY_SNIFF) >= 0:
                stats["files_skipped_binary"] += 1
            else:
                stats["files_scanned"] += 1
                if data:
                    _scan_data(data, rel, None, None, source, stats, out)
    return seq, out, dict(stats)


def _pool_init() -> None:
    # Pool workers leave through os._exit (atexit does not run); Finalize does.
    from multiprocessing.util import Finalize

    Finalize(None, _close_readers, exitpriority=10)


# ------------------------------------------------------------------ planning


class _Target(Record, fields="index path repo bare", defaults=(False,)):
    """A PATH to scan: its position, the path as given (absolute), the work tree root or
    git dir when it is a repository (else None), whether that repository is bare. Plain
    strings and os.path: pathlib (with urllib.parse and ipaddress) is a visible share of
    a small scan's start-up."""

    __slots__ = ()

    index: int  # type: ignore[assignment]  # shadows tuple.index on purpose
    path: str
    repo: str | None
    bare: bool


class _Plan(Record, fields="blobs files stats stores"):
    """One target's work: blob items, file items (each with its size), pre-read stats, and
    the blobs git holds at secret-store paths (oid, path, commit, source, size)."""

    __slots__ = ()

    blobs: list[tuple[tuple[str, str, str | None, str], int]]
    files: list[tuple[tuple[str, str], int]]
    stats: dict[str, int]
    stores: list[tuple[str, str, str | None, str, int]]


def _allowed(path: str, patterns: tuple[str, ...]) -> bool:
    base = path.rsplit("/", 1)[-1]
    return any(fnmatchcase(path, p) or fnmatchcase(base, p) for p in patterns)


class _Budget:
    """Object/byte budget shared by all targets, consumed in target order."""

    def __init__(self, max_objects: int | None, max_bytes: int | None):
        self.max_objects = max_objects
        self.max_bytes = max_bytes
        self.objects = 0
        self.bytes = 0
        self.exceeded = False

    def take(self, size: int) -> bool:
        if self.exceeded:
            return False
        if self.max_objects is not None and self.objects + 1 > self.max_objects:
            self.exceeded = True
            return False
        if self.max_bytes is not None and self.bytes + size > self.max_bytes:
            self.exceeded = True
            return False
        self.objects += 1
        self.bytes += size
        return True


def _batches(kind: str, root: str, items: Iterable[tuple[Any, int]]) -> Iterator[tuple[str, str, list[Any]]]:
    batch: list[Any] = []
    size = 0
    for item, n in items:
        batch.append(item)
        size += n
        if size >= BATCH_BYTES or len(batch) >= BATCH_ITEMS:
            yield (kind, root, batch)
            batch, size = [], 0
    if batch:
        yield (kind, root, batch)


def _index_items(repo: str, pairs: list[tuple[str, str]], allow: tuple[str, ...],
                 max_blob: int, stats: dict[str, int], is_store: StoreMatcher,
                 stores: list[tuple[str, str, str | None, str, int]]) -> list[tuple[tuple[str, str, str | None, str], int]]:
    """Blob items for (oid, path) pairs of the index, with their sizes from git; the
    pairs at secret-store paths are added to ``stores``."""
    sizes = gitobjects.blob_sizes(repo, [oid for oid, _ in pairs]) if pairs else {}
    out: list[tuple[tuple[str, str, str | None, str], int]] = []
    for oid, path in pairs:
        size = sizes.get(oid, 0)
        if _allowed(path, allow):
            stats["blobs_skipped_allowed"] += 1
            continue
        if is_store(path):
            stores.append((oid, path, None, "index", size))
        if size > max_blob:
            stats["blobs_skipped_large"] += 1
        else:
            out.append(((oid, path, None, "index"), size))
    return out


def _enumerate(target: _Target, history: bool, staged: bool, max_blob: int,
               allow: tuple[str, ...], secret_stores: Any = None) -> _Plan:
    """The work of one target. Runs in a thread when there are several targets."""
    stats = new_stats()
    blobs: list[tuple[tuple[str, str, str | None, str], int]] = []
    files: list[tuple[tuple[str, str], int]] = []
    stores: list[tuple[str, str, str | None, str, int]] = []
    if target.repo is None:
        if staged:
            raise TcgError(f"--staged needs a git repository: {target.path} is not the root of one")
        is_file = os.path.isfile(target.path)
        names = [os.path.basename(target.path)] if is_file else worktree.dir_files(target.path)
        root = os.path.dirname(target.path) if is_file else target.path
        for rel in names:
            if _allowed(rel, allow):
                stats["files_skipped_allowed"] += 1
            else:
                files.append(((rel, "file"), _size_of(root, rel)))
        return _Plan(blobs, files, stats, stores)
    repo = target.repo
    is_store = StoreMatcher(secret_stores, None if target.bare else repo)
    if staged:
        # What the next commit would add: the index against HEAD (an unborn branch:
        # against the empty tree). Nothing from history or the working tree.
        blobs = _index_items(repo, gitobjects.staged_blobs(repo), allow, max_blob, stats, is_store, stores)
        return _Plan(blobs, files, stats, stores)
    if history:
        seen: set[str] = set()
        for ref in gitobjects.iter_reachable_blobs(repo):
            seen.add(ref.oid)
            if ref.size < 0:
                stats["blobs_missing"] += 1
            elif _allowed(ref.path, allow):
                stats["blobs_skipped_allowed"] += 1
            else:
                if is_store(ref.path):
                    stores.append((ref.oid, ref.path, ref.commit, "history", ref.size))
                if ref.size > max_blob:
                    stats["blobs_skipped_large"] += 1
                else:
                    blobs.append(((ref.oid, ref.path, ref.commit, "history"), ref.size))
        if not target.bare:
            # Staged but never committed content is readable by anyone with the repo.
            fresh = []
            for oid, path in gitobjects.index_blobs(repo):
                if oid not in seen:
                    seen.add(oid)
                    fresh.append((oid, path))
            blobs.extend(_index_items(repo, fresh, allow, max_blob, stats, is_store, stores))
    if not target.bare:
        named_store = False
        for rel in worktree.repo_files(repo, changed_only=history):
            if _allowed(rel, allow):
                stats["files_skipped_allowed"] += 1
            else:
                named_store = named_store or is_store(rel)
                files.append(((rel, "worktree"), _size_of(repo, rel)))
        if named_store and not history:
            # Without the history, the index says which of them git holds (an untracked
            # store is not a finding); only then is it listed.
            held = [(oid, path) for oid, path in gitobjects.index_blobs(repo)
                    if not _allowed(path, allow) and is_store(path)]
            sizes = gitobjects.blob_sizes(repo, [oid for oid, _ in held]) if held else {}
            stores.extend((oid, path, None, "index", sizes.get(oid, 0)) for oid, path in held)
    return _Plan(blobs, files, stats, stores)


def _size_of(root: str, rel: str) -> int:
    try:
        return os.lstat(os.path.join(root, rel)).st_size
    except OSError:
        return 0


def _resolve_targets(paths: Iterable[str | os.PathLike[str]]) -> list[_Target]:
    targets = []
    for i, p in enumerate(paths):
        path = os.path.abspath(os.path.expanduser(os.fspath(p)))
        repo = None
        bare = False
        dot_git = os.path.join(path, ".git")
        if os.path.isdir(dot_git) and os.path.isfile(os.path.join(dot_git, "HEAD")):
            repo = path  # the common case, without spawning git
        elif os.path.isdir(path):
            found = gitobjects.repo_root(path)
            # Only a repository rooted exactly here: a subdirectory of a checkout is
            # scanned as a plain directory (its history is the whole repository's).
            if found is not None and os.path.realpath(found[0]) == os.path.realpath(path):
                repo = path
                bare = found[1]
        targets.append(_Target(i, path, repo, bare))
    return targets


def _plan_all(targets: list[_Target], history: bool, staged: bool, max_blob: int,
              allow: tuple[str, ...], errors: list[str], secret_stores: Any = None) -> list[tuple[_Target, _Plan]]:
    """Every target's plan, in target order. Several targets list in threads (git does the
    work in child processes); one target lists here, without starting a thread."""
    live = []
    for t in targets:
        if os.path.exists(t.path):
            live.append(t)
        else:
            errors.append(f"{t.path}: no such file or directory")

    def one(t: _Target) -> _Plan | str:
        try:
            return _enumerate(t, history, staged, max_blob, allow, secret_stores)
        except (TcgError, OSError) as exc:
            return f"{t.path}: {getattr(exc, 'message', None) or exc}"

    if len(live) > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=4) as pool:
            plans = list(pool.map(one, live))
    else:
        plans = [one(t) for t in live]
    out = []
    for t, plan in zip(live, plans, strict=True):
        if isinstance(plan, str):
            errors.append(plan)
        else:
            out.append((t, plan))
    return out


# ------------------------------------------------------------------ running


def _jobs(jobs: int | None) -> int:
    if jobs is not None and jobs > 0:
        return jobs
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - macOS/Windows
        return max(1, os.cpu_count() or 1)


def _load_detector(policy: Any, disabled: frozenset[str], categories: frozenset[str],
                   engine: str | None = None) -> _Detector:
    """The packaged rules of the scanned categories, minus the policy's disabled ones
    (``disabled`` is the policy's own ``detect.disabled_rules``, which load_detector
    reads from the policy itself).

    Rules of other categories are left out of the compiled database, so they cost
    nothing (PII rules such as e-mail addresses are the slowest ones on source code).
    The station's loader: the compiled database comes from the signed start-up cache,
    so a scan (and the launch gate's cache miss) does not compile anything after the
    first run of an install.
    """
    from tcg.detect.engine import load_detector

    return load_detector(policy, categories=categories, engine=engine)


def _load_key() -> bytes:
    from tcg.keyhash import load_or_create_key

    return load_or_create_key()


def scan_paths(
    paths: Iterable[str | os.PathLike[str]],
    policy: Any = None,
    *,
    history: bool = True,
    staged: bool = False,
    max_objects: int | None = None,
    max_bytes: int | None = None,
    jobs: int | None = None,
    baseline: set[tuple[str, str]] | None = None,
    detector: _Detector | None = None,
    key: bytes | None = None,
    progress: Callable[[dict[str, int]], None] | None = None,
    keep_occurrences: bool = False,
) -> ScanResult:
    """Scan repositories and/or plain directories. Never raises for a bad target:
    it is reported in ``errors`` and the status becomes ``error``.

    ``staged``: only the blobs the next commit would add or change (the index against
    HEAD), for pre-commit hooks. ``keep_occurrences``: keep every place each distinct
    secret was seen in ``ScanResult.occurrences`` (``--all-occurrences``).
    """
    t0 = time.perf_counter()
    if policy is None:
        from tcg.policy.load import load_policy

        policy = load_policy()
    settings = policy.model.scan
    max_blob = settings.max_blob_bytes or DEFAULT_MAX_BLOB_BYTES
    allow = settings.allow_paths
    disabled = frozenset(settings.disabled_rules)
    categories = frozenset(settings.categories or DEFAULT_CATEGORIES)
    targets = _resolve_targets(paths)
    errors: list[str] = []
    stats = new_stats()
    budget = _Budget(max_objects, max_bytes)

    # 1. List every target's work, then cut it into batches in target order, so a
    #    budget always cuts the same objects.
    tasks: list[tuple[Any, ...]] = []
    planned = 0
    held: list[tuple[int, list[tuple[str, str, str | None, str, int]]]] = []  # stores git holds
    report_stores = STORE_RULE not in disabled and STORE_CATEGORY in categories
    for t, plan in _plan_all(targets, history, staged, max_blob, allow, errors,
                             policy_stores(policy) if report_stores else None):
        add_counts(stats, plan.stats)
        if plan.stores:
            held.append((t.index, plan.stores))
        root = os.path.dirname(t.path) if os.path.isfile(t.path) else t.path  # a single file: its dir
        kept_b = [(item, n) for item, n in plan.blobs if budget.take(n)]
        kept_f = [(item, n) for item, n in plan.files if budget.take(n)]
        planned += sum(n for _, n in kept_b) + sum(n for _, n in kept_f)
        for kind, where, items in (*_batches("blobs", str(t.repo), kept_b),
                                   *_batches("files", str(root), kept_f)):
            tasks.append((kind, where, len(tasks), (t.index, items)))

    # 2. The detector (from the signed cache) and the install key. A small scan uses the
    #    keyword + re engine: it is done before hyperscan would have been loaded.
    engine = "re" if planned <= RE_ENGINE_MAX_BYTES else None
    det = detector if detector is not None else _load_detector(policy, disabled, categories, engine)
    secret_key = key if key is not None else _load_key()

    # 3. Scan: in this process when the work is small, else in a forked pool.
    njobs = _jobs(jobs)
    if jobs is None and len(tasks) <= 1:
        njobs = 1  # one batch cannot be split: forking workers would only cost time
    _set_state(det, secret_key, max_blob, disabled, categories)
    pool = None
    if njobs > 1 and len(tasks) > 1 and sys.platform.startswith("linux"):
        import multiprocessing

        pool = multiprocessing.get_context("fork").Pool(min(njobs, len(tasks)), initializer=_pool_init)
    batches: dict[int, tuple[int, list[_Row]]] = {}
    work = [(kind, where, seq, items) for kind, where, seq, (_tidx, items) in tasks]
    try:
        results: Iterable[tuple[int, list[_Row], dict[str, int]]] = (
            pool.imap_unordered(_scan_task, work) if pool is not None else map(_scan_task, work)
        )
        for seq, out, st in results:
            add_counts(stats, st)
            batches[seq] = (tasks[seq][3][0], out)
            if progress is not None:
                progress(dict(stats))
    except (TcgError, OSError) as exc:
        errors.append(getattr(exc, "message", None) or str(exc))
        if pool is not None:
            pool.terminate()
    except BaseException:
        if pool is not None:
            pool.terminate()
        raise
    finally:
        if pool is not None:
            pool.close()
            pool.join()
        _close_readers()

    # 4. One finding per distinct secret, at its first location in scan order.
    #    A store git holds needs no content: it is found whatever the budget scanned.
    def occurrences() -> Iterator[ScanFinding]:
        for seq in sorted(batches):
            tidx, rows = batches[seq]
            for r in rows:
                yield ScanFinding(r[0], r[1], str(targets[tidx].path), *r[2:])
        for tidx, items in held:
            for r in store_rows(items, secret_key):
                yield ScanFinding(r[0], r[1], str(targets[tidx].path), *r[2:])

    findings, every = group_distinct(occurrences())
    if baseline:
        known = [f for f in findings if f.key in baseline]
        stats["suppressed_baseline"] += len(known)
        findings = [f for f in findings if f.key not in baseline]
        every = [o for o in every if o.key not in baseline]
    counts: dict[str, int] = {}
    for f in findings:
        counts[f.rule_id] = counts.get(f.rule_id, 0) + 1
    # Blobs absent from a partial clone were not scanned, yet an agent can fetch them.
    complete = not budget.exceeded and stats["blobs_missing"] == 0
    if errors:
        status = STATUS_ERROR
    elif findings:
        status = STATUS_FINDINGS
    elif not complete:
        status = STATUS_PARTIAL
    else:
        status = STATUS_CLEAN
    return ScanResult(
        status=status,
        complete=complete,
        history=history and not staged,
        staged=staged,
        targets=[str(t.path) for t in targets],
        findings=findings,
        counts_by_rule=dict(sorted(counts.items())),
        stats={k: int(stats.get(k, 0)) for k in STAT_FIELDS},
        errors=errors,
        duration_s=time.perf_counter() - t0,
        policy=policy.ref() if hasattr(policy, "ref") else None,
        budget={"max_objects": max_objects, "max_bytes": max_bytes},
        budget_exceeded=budget.exceeded,
        occurrences=every if keep_occurrences else [],
    )


def scan_repo(
    path: str | os.PathLike[str],
    policy: Any = None,
    *,
    history: bool = True,
    max_objects: int | None = None,
    max_bytes: int | None = None,
    jobs: int | None = None,
    detector: _Detector | None = None,
) -> ScanResult:
    """Scan one repository (or plain directory): the launch gate's entry point."""
    return scan_paths(
        [path],
        policy,
        history=history,
        max_objects=max_objects,
        max_bytes=max_bytes,
        jobs=jobs,
        detector=detector,
    )
