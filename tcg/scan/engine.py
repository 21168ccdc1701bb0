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

import fnmatch
import hashlib
import hmac
import multiprocessing
import os
import sys
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from tcg.errors import TcgError
from tcg.scan import gitobjects, worktree

DEFAULT_MAX_BLOB_BYTES = 10 * 1024 * 1024
DEFAULT_CATEGORIES = ("secret",)
BATCH_BYTES = 4 * 1024 * 1024  # per task: small enough to spread, large enough to amortise IPC
BATCH_ITEMS = 1000
BINARY_SNIFF = 8000  # git's own heuristic: a NUL in the first 8000 bytes means binary
ALLOW_MARKER = b"tcg:allow"

STATUS_CLEAN = "clean"
STATUS_FINDINGS = "findings"
STATUS_PARTIAL = "partial"
STATUS_ERROR = "error"

STAT_FIELDS = (
    "files_scanned",
    "files_skipped_binary",
    "files_skipped_large",
    "files_skipped_allowed",
    "blobs_scanned",
    "blobs_skipped_binary",
    "blobs_skipped_large",
    "blobs_skipped_allowed",
    "blobs_missing",
    "bytes_scanned",
    "suppressed_inline",
    "suppressed_baseline",
)


class _Detector(Protocol):
    def find_bytes(self, data: bytes) -> list[Any]: ...


@dataclass(frozen=True)
class ScanFinding:
    """One finding. Carries where and what kind — never the value (only its keyed hash)."""

    rule_id: str
    category: str
    target: str  # the scanned PATH as given (absolute)
    path: str  # file path relative to the target
    line: int  # 1-based
    column: int  # 1-based, in Unicode code points
    commit: str | None  # commit that introduced the blob (history) or None (working tree)
    blob: str | None  # object id for history/index findings
    source: str  # "history" | "index" | "worktree" | "file"
    hash: str  # KeyedHasher.h16 of the value bytes (per-install key)
    length: int  # value length in bytes

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ScanResult:
    """Outcome of one scan. ``metadata()`` is the value-free summary the gate caches."""

    status: str  # clean | findings | partial | error
    complete: bool  # False when a budget stopped the scan or blobs were missing (partial clone)
    history: bool
    targets: list[str]
    findings: list[ScanFinding]
    counts_by_rule: dict[str, int]
    stats: dict[str, int]  # STAT_FIELDS -> count
    errors: list[str]
    duration_s: float
    policy: dict[str, str] | None
    budget: dict[str, int | None]
    budget_exceeded: bool = False

    @property
    def files_scanned(self) -> int:
        return self.stats.get("files_scanned", 0)

    @property
    def blobs_scanned(self) -> int:
        return self.stats.get("blobs_scanned", 0)

    def metadata(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "complete": self.complete,
            "history": self.history,
            "targets": list(self.targets),
            "findings": len(self.findings),
            "counts_by_rule": dict(self.counts_by_rule),
            **{k: self.stats.get(k, 0) for k in STAT_FIELDS},
            "errors": list(self.errors),
            "duration_s": round(self.duration_s, 3),
            "policy": self.policy,
            "budget": dict(self.budget),
            "budget_exceeded": self.budget_exceeded,
        }


# ------------------------------------------------------------------ workers

# Worker state. Set in the parent before the pool forks, so children inherit the
# compiled detector instead of each compiling it again.
_W: dict[str, Any] = {}
_READERS: OrderedDict[str, gitobjects.BlobReader] = OrderedDict()
_MAX_READERS = 4

# (rule_id, category, path, line, column, commit, blob, source, hash, length)
_Row = tuple[str, str, str, int, int, "str | None", "str | None", str, str, int]


def _set_state(
    detector: _Detector, key: bytes, max_blob: int, disabled: frozenset[str], categories: frozenset[str]
) -> None:
    _W.clear()
    _W.update(detector=detector, key=key, max_blob=max_blob, disabled=disabled, categories=categories)


def _reader(repo: str) -> gitobjects.BlobReader:
    rd = _READERS.get(repo)
    if rd is not None:
        _READERS.move_to_end(repo)
        return rd
    while len(_READERS) >= _MAX_READERS:
        _, old = _READERS.popitem(last=False)
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
    stats: Counter[str],
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
        digest = hmac.new(key, data[start:end], hashlib.sha256).hexdigest()[:16]
        line = data.count(b"\n", 0, start) + 1
        column = len(data[line_start:start].decode("utf-8", "replace")) + 1  # code points
        out.append((f.rule_id, f.category, path, line, column, commit, blob, source, digest, end - start))


def _scan_task(task: tuple[Any, ...]) -> tuple[int, list[_Row], dict[str, int]]:
    kind, root, tidx, items = task
    stats: Counter[str] = Counter()
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
    return tidx, out, dict(stats)


def _pool_init() -> None:
    # Pool workers leave through os._exit (atexit does not run); Finalize does.
    from multiprocessing.util import Finalize

    Finalize(None, _close_readers, exitpriority=10)


# ------------------------------------------------------------------ planning


@dataclass
class _Target:
    index: int
    path: Path  # as given, absolute
    repo: Path | None  # work tree root / git dir when a repository
    bare: bool = False


def _allowed(path: str, patterns: tuple[str, ...]) -> bool:
    base = path.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(path, p) or fnmatch.fnmatchcase(base, p) for p in patterns)


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


def _batches(kind: str, root: str, tidx: int, items: Iterable[tuple[Any, int]]) -> Iterator[tuple[Any, ...]]:
    batch: list[Any] = []
    size = 0
    for item, n in items:
        batch.append(item)
        size += n
        if size >= BATCH_BYTES or len(batch) >= BATCH_ITEMS:
            yield (kind, root, tidx, batch)
            batch, size = [], 0
    if batch:
        yield (kind, root, tidx, batch)


def _enumerate(target: _Target, history: bool, max_blob: int, allow: tuple[str, ...]) -> tuple[list[Any], list[Any], Counter[str]]:
    """(blob items, file items, pre-read stats) for one target. Runs in a thread."""
    stats: Counter[str] = Counter()
    blobs: list[tuple[tuple[str, str, str | None, str], int]] = []
    files: list[tuple[tuple[str, str], int]] = []
    if target.repo is None:
        names = [target.path.name] if target.path.is_file() else worktree.dir_files(target.path)
        for rel in names:
            if _allowed(rel, allow):
                stats["files_skipped_allowed"] += 1
            else:
                files.append(((rel, "file"), 0))
        return blobs, files, stats
    repo = target.repo
    if history:
        seen: set[str] = set()
        for ref in gitobjects.iter_reachable_blobs(repo):
            seen.add(ref.oid)
            if ref.size < 0:
                stats["blobs_missing"] += 1
            elif _allowed(ref.path, allow):
                stats["blobs_skipped_allowed"] += 1
            elif ref.size > max_blob:
                stats["blobs_skipped_large"] += 1
            else:
                blobs.append(((ref.oid, ref.path, ref.commit, "history"), ref.size))
        if not target.bare:
            # Staged but never committed content is readable by anyone with the repo.
            for oid, path in gitobjects.index_blobs(repo):
                if oid in seen:
                    continue
                seen.add(oid)
                if _allowed(path, allow):
                    stats["blobs_skipped_allowed"] += 1
                else:
                    blobs.append(((oid, path, None, "index"), 0))
    if not target.bare:
        for rel in worktree.repo_files(repo, changed_only=history):
            if _allowed(rel, allow):
                stats["files_skipped_allowed"] += 1
            else:
                files.append(((rel, "worktree"), 0))
    return blobs, files, stats


def _file_sizes(root: Path, files: list[Any]) -> list[Any]:
    out = []
    for (rel, source), _ in files:
        try:
            n = os.lstat(os.path.join(root, rel)).st_size
        except OSError:
            n = 0
        out.append(((rel, source), n))
    return out


def _resolve_targets(paths: Iterable[str | os.PathLike[str]]) -> list[_Target]:
    targets = []
    for i, p in enumerate(paths):
        path = Path(p).expanduser().absolute()
        repo = None
        bare = False
        if path.is_dir() and (path / ".git").is_dir() and (path / ".git" / "HEAD").is_file():
            repo = path  # the common case, without spawning git
        elif path.is_dir():
            found = gitobjects.repo_root(path)
            # Only a repository rooted exactly here: a subdirectory of a checkout is
            # scanned as a plain directory (its history is the whole repository's).
            if found is not None and found[0].resolve() == path.resolve():
                repo = path
                bare = found[1]
        targets.append(_Target(i, path, repo, bare))
    return targets


# ------------------------------------------------------------------ running


def _jobs(jobs: int | None) -> int:
    if jobs is not None and jobs > 0:
        return jobs
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - macOS/Windows
        return max(1, os.cpu_count() or 1)


_DETECTORS: dict[tuple[frozenset[str], frozenset[str]], _Detector] = {}
_RULES: list[Any] = []


def _packaged_rules(load: Callable[[], list[Any]]) -> list[Any]:
    """The packaged rules, parsed once per process (parsing validates every regex)."""
    if not _RULES:
        _RULES.extend(load())
    return _RULES


def _load_detector(policy: Any, disabled: frozenset[str], categories: frozenset[str]) -> _Detector:
    """The packaged rules of the scanned categories, minus disabled ones.

    Rules of other categories are left out of the compiled database, so they
    cost nothing (PII rules such as e-mail addresses are the slowest ones on
    source code). Cached per process; the compiled hyperscan database is cached
    on disk by the detection engine (same cache dir as load_detector).
    """
    key = (disabled, categories)
    det = _DETECTORS.get(key)
    if det is None:
        from tcg.detect.engine import Detector
        from tcg.detect.rule import load_rules
        from tcg.paths import get_paths

        rules = [r for r in _packaged_rules(load_rules) if r.category in categories and r.id not in disabled]
        det = _DETECTORS[key] = Detector.from_rules(rules, cache_dir=get_paths().cache / "detect")
    return det


def _load_key() -> bytes:
    from tcg.keyhash import load_or_create_key

    return load_or_create_key()


ProgressFn = Callable[[dict[str, int]], None]


def scan_paths(
    paths: Iterable[str | os.PathLike[str]],
    policy: Any = None,
    *,
    history: bool = True,
    max_objects: int | None = None,
    max_bytes: int | None = None,
    jobs: int | None = None,
    baseline: set[tuple[str, str]] | None = None,
    detector: _Detector | None = None,
    key: bytes | None = None,
    progress: ProgressFn | None = None,
) -> ScanResult:
    """Scan repositories and/or plain directories. Never raises for a bad target:
    it is reported in ``errors`` and the status becomes ``error``."""
    t0 = time.perf_counter()
    if policy is None:
        from tcg.policy.load import load_policy

        policy = load_policy()
    max_blob = int(policy.get("scan.max-blob-bytes", DEFAULT_MAX_BLOB_BYTES) or DEFAULT_MAX_BLOB_BYTES)
    allow = tuple(str(p) for p in policy.get("scan.allow_paths", []) or [])
    disabled = frozenset(str(r) for r in policy.get("detect.disabled_rules", []) or [])
    categories = frozenset(
        str(c) for c in policy.get("scan.categories", DEFAULT_CATEGORIES) or DEFAULT_CATEGORIES
    )
    targets = _resolve_targets(paths)
    errors: list[str] = []
    stats: Counter[str] = Counter()
    budget = _Budget(max_objects, max_bytes)
    rows: list[tuple[int, _Row]] = []

    # 1. List every target's work in threads (git does the work in child processes)
    #    while this thread loads the detector; all threads are joined before the
    #    pool forks, so no worker is forked from a multi-threaded parent.
    tasks: list[tuple[Any, ...]] = []
    with ThreadPoolExecutor(max_workers=4) as enum_pool:
        futures = []
        for t in targets:
            if not t.path.exists():
                futures.append(None)
                errors.append(f"{t.path}: no such file or directory")
            else:
                futures.append(enum_pool.submit(_enumerate, t, history, max_blob, allow))
        try:
            det = detector if detector is not None else _load_detector(policy, disabled, categories)
            secret_key = key if key is not None else _load_key()
        except BaseException:
            for fut in futures:
                if fut is not None:
                    fut.cancel()
            raise
        # Targets in the order given, so a budget always cuts the same objects.
        for t, fut in zip(targets, futures, strict=True):
            if fut is None:
                continue
            try:
                blobs, files, pre = fut.result()
            except (TcgError, OSError) as exc:
                errors.append(f"{t.path}: {getattr(exc, 'message', None) or exc}")
                continue
            stats.update(pre)
            root = t.path.parent if t.path.is_file() else t.path  # a single file: its dir
            if max_bytes is not None:
                files = _file_sizes(root, files)
            kept_b = [(item, n) for item, n in blobs if budget.take(n)]
            kept_f = [(item, n) for item, n in files if budget.take(n)]
            tasks.extend(_batches("blobs", str(t.repo), t.index, kept_b))
            tasks.extend(_batches("files", str(root), t.index, kept_f))

    # 2. Scan: in this process when the work is small, else in a forked pool.
    njobs = _jobs(jobs)
    if jobs is None and len(tasks) <= 1:
        njobs = 1  # one batch cannot be split: forking workers would only cost time
    _set_state(det, secret_key, max_blob, disabled, categories)
    ctx = multiprocessing.get_context("fork") if sys.platform.startswith("linux") else None
    pool = ctx.Pool(min(njobs, len(tasks)), initializer=_pool_init) if (ctx and njobs > 1 and len(tasks) > 1) else None
    try:
        if pool is not None:
            results: Iterable[tuple[int, list[_Row], dict[str, int]]] = pool.imap_unordered(
                _scan_task, tasks
            )
        else:
            results = map(_scan_task, tasks)
        for tidx, out, st in results:
            stats.update(st)
            rows.extend((tidx, r) for r in out)
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

    findings = []
    for tidx, r in rows:
        f = ScanFinding(r[0], r[1], str(targets[tidx].path), *r[2:])
        if baseline and (f.rule_id, f.hash) in baseline:
            stats["suppressed_baseline"] += 1
            continue
        findings.append(f)
    findings.sort(key=lambda f: (f.target, f.path, f.line, f.column, f.rule_id, f.source, f.commit or ""))
    counts = Counter(f.rule_id for f in findings)
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
        history=history,
        targets=[str(t.path) for t in targets],
        findings=findings,
        counts_by_rule=dict(sorted(counts.items())),
        stats={k: int(stats.get(k, 0)) for k in STAT_FIELDS},
        errors=errors,
        duration_s=time.perf_counter() - t0,
        policy=policy.ref() if hasattr(policy, "ref") else None,
        budget={"max_objects": max_objects, "max_bytes": max_bytes},
        budget_exceeded=budget.exceeded,
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
