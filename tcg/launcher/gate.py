"""The launch gate: find the repository, look up the cache, scan on a miss.

The state key is always computed with git (tcg.launcher.state: refs, status,
the bytes of modified and untracked files), keyed with the install key; the
cache (tcg.launcher.cache) is keyed by (state key, policy fingerprint, scanner
id) and holds metadata only. The decision is taken by tcg.launcher.launch from
the GateResult.
"""

from __future__ import annotations

import os
import time
from typing import Any

from tcg.keyhash import KeyedHasher, load_or_create_key
from tcg.launcher import cache
from tcg.launcher.state import StateError, repo_state
from tcg.paths import Paths

PROGRESS_LABEL = "tcg launch: scanning the repository for secrets"
# Counts one per scan run in this process: tests prove a cache hit by it (events say `scanned`).
SCAN_RUNS = [0]


class GateResult:
    """What the gate found (never a path or a value, except ``root`` for terminal messages)."""

    def __init__(self, repo_hash: str | None, status: str, cache: str, scanned: bool, *, files: int = 0,
                 blobs: int = 0, counts_by_rule: dict[str, int] | None = None, complete: bool = True,
                 duration_ms: int = 0, error: str | None = None, root: str | None = None):
        self.repo_hash = repo_hash  # keyed hash of the repo root; None: not in a repository
        self.status = status  # clean | findings | partial | error | none
        self.cache = cache  # hit | miss | none
        self.scanned = scanned
        self.files = files
        self.blobs = blobs
        self.counts_by_rule = dict(counts_by_rule or {})
        self.complete = complete
        self.duration_ms = duration_ms
        self.error = error
        self.root = root  # for messages on the terminal only: never recorded or cached

    @property
    def findings(self) -> int:
        return sum(self.counts_by_rule.values())

    def fields(self) -> dict[str, Any]:
        """The ``launch_gate`` event's gate fields (no path, no value)."""
        return {
            "repo": self.repo_hash, "status": self.status, "cache": self.cache, "scanned": self.scanned,
            "files": self.files, "blobs": self.blobs, "findings": self.findings,
            "counts_by_rule": self.counts_by_rule, "complete": self.complete, "duration_ms": self.duration_ms,
        }


class CacheKeys:
    """What a scan needs to store its result where the next lookup finds it."""

    __slots__ = ("key", "policy", "repo", "root", "scanner", "state", "t0")

    def __init__(self, *, root: str, repo: str, state: str, policy: str, scanner: str, key: bytes, t0: float):
        self.root, self.repo, self.state, self.policy = root, repo, state, policy
        self.scanner, self.key, self.t0 = scanner, key, t0


def _ms(t0: float) -> int:
    return int((time.perf_counter() - t0) * 1000)


def lookup(cwd: str | os.PathLike[str], fingerprint: str, paths: Paths) -> GateResult | CacheKeys:
    """The gate result for ``cwd`` when it is known without scanning, else the
    keys a scan stores its result under.

    Known without scanning: no repository (status "none"), a repository git
    cannot read (status "error"), or a cache entry for the current state key,
    policy fingerprint and scanner id.
    """
    t0 = time.perf_counter()
    try:
        found = repo_state(cwd)
    except (StateError, OSError) as exc:
        return GateResult(None, "error", "none", False, error=getattr(exc, "message", None) or str(exc),
                          duration_ms=_ms(t0))
    if found is None:
        return GateResult(None, "none", "none", False, duration_ms=_ms(t0))
    key = load_or_create_key(paths)
    hasher = KeyedHasher(key)
    keys = CacheKeys(root=found.root, repo=hasher.h16(os.fsencode(found.root)), state=hasher.hexdigest(found.material),
                     policy=fingerprint, scanner=cache.scanner_id(), key=key, t0=t0)
    hit = cache.load_cached(cache.cache_path(cache.scan_cache_dir(paths), keys.repo), keys.state, fingerprint,
                            keys.scanner, key)
    if hit is None:
        return keys
    return GateResult(
        keys.repo, str(hit["status"]), "hit", False,
        files=int(hit.get("files", 0)), blobs=int(hit.get("blobs", 0)),
        counts_by_rule=dict(hit["counts_by_rule"]), complete=bool(hit.get("complete", True)),
        duration_ms=_ms(t0), root=found.root,
    )


def run_gate(agent: str, cwd: str | os.PathLike[str], policy: Any, *, paths: Paths,
             progress: bool = False) -> GateResult:
    """Scan state of the repository holding ``cwd`` (cached). Never raises for scan errors."""
    keys = lookup(cwd, policy.fingerprint, paths)
    if isinstance(keys, GateResult):
        return keys
    from tcg.scan.engine import scan_paths
    from tcg.scan.progress import Progress

    bar = Progress(progress, label=PROGRESS_LABEL)
    SCAN_RUNS[0] += 1
    try:
        result = scan_paths([keys.root], policy, history=True, progress=bar)
    except Exception as exc:  # noqa: BLE001 - a scan that cannot run is status "error" (fail closed)
        return GateResult(keys.repo, "error", "miss", True, error=type(exc).__name__, duration_ms=_ms(keys.t0),
                          root=keys.root)
    finally:
        bar.done()
    gate = GateResult(
        keys.repo, result.status, "miss", True,
        files=result.files_scanned, blobs=result.blobs_scanned,
        counts_by_rule={str(k): int(v) for k, v in result.counts_by_rule.items()},
        complete=result.complete, duration_ms=_ms(keys.t0),
        error=f"{len(result.errors)} scan error(s)" if result.errors else None, root=keys.root,
    )
    if result.status in cache.CACHED_STATUSES:
        try:
            cache.store_cached(cache.cache_path(cache.scan_cache_dir(paths), keys.repo), {
                "v": cache.CACHE_VERSION, "repo": keys.repo, "state": keys.state,
                "policy": keys.policy, "scanner": keys.scanner, "agent": agent,
                "status": gate.status, "complete": gate.complete, "files": gate.files,
                "blobs": gate.blobs, "findings": gate.findings, "counts_by_rule": gate.counts_by_rule,
                "scanned_at": int(time.time()), "duration_ms": gate.duration_ms,
            }, keys.key)
        except OSError:
            pass  # an unwritable cache costs a rescan next time, never a wrong decision
    return gate
