"""The launch gate: find the repository, look up the cache, scan on a miss.

Cache (DESIGN §8, tcg/launcher/cache.py): per repository, keyed by (state key,
policy fingerprint, scanner id), metadata only. The decision is taken by
tcg.launcher.launch from the GateResult.
"""

from __future__ import annotations

import os
import time

from tcg.launcher.fastpath import (
    cache_path,
    gate_fields,
    load_cached,
    scan_cache_dir,
    scanner_id,
    witness_key,
)

TYPE_CHECKING = False  # typing costs ~3 ms of import on the cache-hit path
if TYPE_CHECKING:
    from typing import Any

    from tcg.paths import Paths

PROGRESS_LABEL = "tcg launch: scanning the repository for secrets"
# Counts one per scan run in this process: tests prove a cache hit by it (events say `scanned`).
SCAN_RUNS = [0]
# Counts the state keys computed with git in this process (a witness hit computes none).
GIT_KEYS = [0]


def __getattr__(name: str) -> Any:
    if name == "Progress":  # re-exported for tests; imported lazily (the cache-hit path never shows it)
        from tcg.scan.progress import Progress

        return Progress
    raise AttributeError(name)


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
        """The event fields (no path, no value)."""
        return gate_fields(self.repo_hash, self.status, self.cache, self.scanned, self.files, self.blobs,
                           self.counts_by_rule, self.complete, self.duration_ms)


def _ms(t0: float) -> int:
    return int((time.perf_counter() - t0) * 1000)


def lookup(cwd: str | os.PathLike[str], fingerprint: str, paths: Paths,
           witnessed: tuple[Any, ...] | None = None) -> tuple[GateResult | None, dict[str, Any]]:
    """The cached result for ``cwd``'s repository, or None (with what a scan needs to store one).

    The state key comes from the stat witness when it still holds (no git at
    all), else from git — which then records a fresh witness. ``witnessed``:
    what fastpath.witness_key already said for ``cwd`` (not asked again).
    """
    from tcg.launcher import state as st
    from tcg.launcher import witness

    t0 = time.perf_counter()
    cwd = os.fspath(cwd)
    root, repo_hash, state_key, hasher = witnessed or witness_key(cwd, paths)
    if root == "":
        return GateResult(None, "none", "none", False, duration_ms=_ms(t0)), {}
    if state_key is None:
        GIT_KEYS[0] += 1
        try:
            found = st.repo_state(cwd)
        except (st.StateError, OSError) as exc:
            return GateResult(None, "error", "none", False, error=getattr(exc, "message", None) or str(exc),
                              duration_ms=_ms(t0)), {}
        if found is None:
            return GateResult(None, "none", "none", False, duration_ms=_ms(t0)), {}
        from tcg.keyhash import KeyedHasher

        root = found.root
        hasher = hasher or KeyedHasher.for_install(paths)
        repo_hash = hasher.h16(os.fsencode(root))
        state_key = hasher.hexdigest(found.material)
        try:
            witness.store(scan_cache_dir(paths), repo_hash, found, state_key, hasher)
        except OSError:
            pass  # no witness: the next launch asks git again
    if hasher is None:
        from tcg.keyhash import KeyedHasher

        hasher = KeyedHasher.for_install(paths)
    keys = {"root": root, "repo": repo_hash, "state": state_key, "policy": fingerprint,
            "scanner": scanner_id(), "t0": t0, "key": hasher.key}
    hit = load_cached(cache_path(scan_cache_dir(paths), repo_hash), state_key, fingerprint, keys["scanner"],
                      hasher.key)
    if hit is None:
        return None, keys
    return GateResult(
        repo_hash, str(hit["status"]), "hit", False,
        files=int(hit.get("files", 0)), blobs=int(hit.get("blobs", 0)),
        counts_by_rule=dict(hit["counts_by_rule"]), complete=bool(hit.get("complete", True)),
        duration_ms=_ms(t0), root=root,
    ), keys


def run_gate(agent: str, cwd: str | os.PathLike[str], policy: Any, *, paths: Paths | None = None,
             progress: bool = False) -> GateResult:
    """Scan state of the repository holding ``cwd`` (cached). Never raises for scan errors."""
    from tcg.paths import get_paths

    p = paths or get_paths()
    found, keys = lookup(cwd, policy.fingerprint, p)
    if found is not None:
        return found
    root, repo_hash, t0 = keys["root"], keys["repo"], keys["t0"]

    from tcg.launcher.cache import CACHE_VERSION, store_cached
    from tcg.scan.engine import scan_paths
    from tcg.scan.progress import Progress

    bar = Progress(progress, label=PROGRESS_LABEL)
    SCAN_RUNS[0] += 1
    try:
        result = scan_paths([root], policy, history=True, progress=bar)
    except Exception as exc:  # noqa: BLE001 - a scan that cannot run is status "error" (fail closed)
        return GateResult(repo_hash, "error", "miss", True, error=type(exc).__name__, duration_ms=_ms(t0), root=root)
    finally:
        bar.done()
    gate = GateResult(
        repo_hash, result.status, "miss", True,
        files=result.files_scanned, blobs=result.blobs_scanned,
        counts_by_rule={str(k): int(v) for k, v in result.counts_by_rule.items()},
        complete=result.complete, duration_ms=_ms(t0),
        error=f"{len(result.errors)} scan error(s)" if result.errors else None, root=root,
    )
    if result.status != "error":
        try:
            store_cached(cache_path(scan_cache_dir(p), repo_hash), {
                "v": CACHE_VERSION, "repo": repo_hash, "state": keys["state"],
                "policy": keys["policy"], "scanner": keys["scanner"], "agent": agent,
                "status": gate.status, "complete": gate.complete, "files": gate.files,
                "blobs": gate.blobs, "findings": gate.findings, "counts_by_rule": gate.counts_by_rule,
                "scanned_at": int(time.time()), "duration_ms": gate.duration_ms,
            }, keys["key"])
        except OSError:
            pass  # an unwritable cache costs a rescan next time, never a wrong decision
    return gate
