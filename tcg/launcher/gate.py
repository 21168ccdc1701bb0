"""The launch gate: find the repository, look up the cache, scan on a miss, decide.

Cache (DESIGN §8): one JSON file per repository under ``get_paths().scan_cache``,
named by the keyed hash of the repository root, holding the latest result for
(state key, policy fingerprint, scanner id). It stores ONLY metadata — keyed
repo hash, agent name, scan status, counts of files, blobs and findings by
rule, and the (keyed) lookup keys — never a path, never a value (CACHE_FIELDS;
a test checks every key).
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tcg.paths import Paths, ensure_private_dir, get_paths

CACHE_VERSION = 1
CACHE_FIELDS = frozenset({
    "v", "repo", "state", "policy", "scanner", "agent", "status", "complete",
    "files", "blobs", "findings", "counts_by_rule", "scanned_at", "duration_ms",
})

# Counts one per scan run in this process: tests and the bench prove a cache hit by it.
SCAN_RUNS = [0]


@dataclass
class GateResult:
    """What the gate found; the decision is taken by ``decide``."""

    repo_hash: str | None  # keyed hash of the repo root; None: not in a repository
    status: str  # clean | findings | partial | error | none
    cache: str  # hit | miss | none
    scanned: bool
    files: int = 0
    blobs: int = 0
    counts_by_rule: dict[str, int] = field(default_factory=dict)
    complete: bool = True
    duration_ms: int = 0
    error: str | None = None
    root: Path | None = None  # for messages on the terminal only: never recorded or cached

    @property
    def findings(self) -> int:
        return sum(self.counts_by_rule.values())


class Progress:
    """A one-line counter on stderr, only on a terminal, only once the scan passed ~1 s."""

    def __init__(self, enabled: bool, delay: float = 1.0, every: float = 0.25):
        self.enabled = enabled
        self.start = time.monotonic()
        self.delay = delay
        self.every = every
        self.last = 0.0
        self.shown = False

    def __call__(self, stats: dict[str, int]) -> None:
        now = time.monotonic()
        if not self.enabled or now - self.start < self.delay or now - self.last < self.every:
            return
        self.last = now
        self.shown = True
        sys.stderr.write(
            f"\rtcg launch: scanning the repository for secrets: {stats.get('blobs_scanned', 0)} blobs, "
            f"{stats.get('files_scanned', 0)} files, {stats.get('bytes_scanned', 0) / 1e6:.1f} MB …"
        )
        sys.stderr.flush()

    def done(self) -> None:
        if self.shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def cache_path(repo_hash: str, paths: Paths | None = None) -> Path:
    return (paths or get_paths()).scan_cache / f"{repo_hash}.json"


def load_cached(path: Path, state: str, fingerprint: str, scanner: str) -> dict[str, Any] | None:
    """The cached entry when it matches all three keys; None otherwise (or when unreadable)."""
    try:
        entry = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("v") != CACHE_VERSION:
        return None
    if (entry.get("state"), entry.get("policy"), entry.get("scanner")) != (state, fingerprint, scanner):
        return None
    if entry.get("status") not in ("clean", "findings", "partial"):
        return None  # errors are never cached: the next launch tries again
    counts = entry.get("counts_by_rule")
    if not isinstance(counts, dict) or not all(isinstance(v, int) for v in counts.values()):
        return None
    return entry


def store_cached(path: Path, entry: dict[str, Any]) -> None:
    """Write the entry atomically (0600 in a 0700 dir). Only CACHE_FIELDS are kept."""
    clean = {k: v for k, v in entry.items() if k in CACHE_FIELDS}
    ensure_private_dir(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, json.dumps(clean, sort_keys=True, separators=(",", ":")).encode("ascii"))
    finally:
        os.close(fd)
    os.replace(tmp, path)


def run_gate(agent: str, cwd: Path, policy: Any, *, paths: Paths | None = None,
             progress: bool = False) -> GateResult:
    """Scan state of the repository holding ``cwd`` (cached). Never raises for scan errors."""
    from tcg.keyhash import KeyedHasher
    from tcg.launcher import state as st

    t0 = time.perf_counter()
    try:
        root = st.find_repo(cwd)
    except st.StateError as exc:
        return GateResult(None, "error", "none", False, error=exc.message)
    if root is None:
        return GateResult(None, "none", "none", False)
    hasher = KeyedHasher.for_install(paths)
    repo_hash = hasher.h16(os.fsencode(str(root)))
    try:
        state_key = hasher.hexdigest(st.state_material(root))
    except (st.StateError, OSError) as exc:
        return GateResult(repo_hash, "error", "none", False, error=getattr(exc, "message", None) or str(exc),
                          duration_ms=int((time.perf_counter() - t0) * 1000), root=root)
    scanner = st.scanner_id()
    cpath = cache_path(repo_hash, paths)
    hit = load_cached(cpath, state_key, policy.fingerprint, scanner)
    if hit is not None:
        return GateResult(
            repo_hash, str(hit["status"]), "hit", False,
            files=int(hit.get("files", 0)), blobs=int(hit.get("blobs", 0)),
            counts_by_rule=dict(hit["counts_by_rule"]), complete=bool(hit.get("complete", True)),
            duration_ms=int((time.perf_counter() - t0) * 1000), root=root,
        )

    from tcg.scan.engine import scan_paths

    bar = Progress(progress)
    SCAN_RUNS[0] += 1
    try:
        result = scan_paths([root], policy, history=True, progress=bar)
    except Exception as exc:  # noqa: BLE001 - a scan that cannot run is status "error" (fail closed)
        return GateResult(repo_hash, "error", "miss", True, error=type(exc).__name__,
                          duration_ms=int((time.perf_counter() - t0) * 1000), root=root)
    finally:
        bar.done()
    gate = GateResult(
        repo_hash, result.status, "miss", True,
        files=result.files_scanned, blobs=result.blobs_scanned,
        counts_by_rule={str(k): int(v) for k, v in result.counts_by_rule.items()},
        complete=result.complete,
        duration_ms=int((time.perf_counter() - t0) * 1000),
        error=f"{len(result.errors)} scan error(s)" if result.errors else None, root=root,
    )
    if result.status != "error":
        try:
            store_cached(cpath, {
                "v": CACHE_VERSION, "repo": repo_hash, "state": state_key,
                "policy": policy.fingerprint, "scanner": scanner, "agent": agent,
                "status": gate.status, "complete": gate.complete, "files": gate.files,
                "blobs": gate.blobs, "findings": gate.findings, "counts_by_rule": gate.counts_by_rule,
                "scanned_at": int(time.time()), "duration_ms": gate.duration_ms,
            })
        except OSError:
            pass  # an unwritable cache costs a rescan next time, never a wrong decision
    return gate
