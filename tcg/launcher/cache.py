"""The gate cache: one small signed file per repository, metadata only.

Named by the keyed hash of the repository root; holds the latest result for
(state key, policy fingerprint, scanner id). Only CACHE_FIELDS are ever written:
keyed repo hash, agent name, scan status, counts of files, blobs and findings
by rule, and the (keyed) lookup keys — never a path, never a value.

The body is ``marshal`` data (a dict of str/int/bool), signed with the install
key (tcg.signed): the cache dir is writable by anything running as the user,
and a forged entry must neither pass the gate nor reach marshal, which is not
hardened against malicious data. Entries are validated field by field after
the MAC verifies; anything unexpected is a miss. The MAC also binds the code
that wrote the entry (tcg.cachestore), and the scanner id names it.
"""

from __future__ import annotations

import marshal
import os
from typing import Any

from tcg.cachestore import read_cache, write_cache
from tcg.fingerprint import code_fingerprint
from tcg.paths import Paths

TAG = "launcher-cache/marshal"
CACHE_VERSION = 2
CACHE_SUFFIX = ".gate"
CACHE_FIELDS = frozenset({
    "v", "repo", "state", "policy", "scanner", "agent", "status", "complete",
    "files", "blobs", "findings", "counts_by_rule", "scanned_at", "duration_ms",
})
CACHED_STATUSES = ("clean", "findings", "partial")  # errors are never cached: the next launch tries again


def scan_cache_dir(paths: Paths) -> str:
    return os.path.join(paths.cache_dir, "scan")


def cache_path(scan_cache: str | os.PathLike[str], repo_hash: str) -> str:
    return os.path.join(os.fspath(scan_cache), repo_hash + CACHE_SUFFIX)


def scanner_id() -> str:
    """The scanning code, rules included (tcg.fingerprint): a new rule set or an
    edited detector must not reuse an old 'clean'."""
    return code_fingerprint()[:16]


def load_cached(path: str | os.PathLike[str], state: str, fingerprint: str, scanner: str,
                key: bytes) -> dict[str, Any] | None:
    """The cached entry when its MAC verifies and it matches all three keys; None otherwise."""
    body = read_cache(path, key, TAG)
    if body is None:
        return None
    try:
        entry = marshal.loads(body)
    except (ValueError, EOFError, TypeError):
        return None
    if type(entry) is not dict or entry.get("v") != CACHE_VERSION:
        return None
    if (entry.get("state"), entry.get("policy"), entry.get("scanner")) != (state, fingerprint, scanner):
        return None
    if entry.get("status") not in CACHED_STATUSES:
        return None
    counts = entry.get("counts_by_rule")
    if type(counts) is not dict or not all(type(k) is str and type(v) is int for k, v in counts.items()):
        return None
    if not all(type(entry.get(k, 0)) is int for k in ("files", "blobs")):
        return None
    return entry


def store_cached(path: str | os.PathLike[str], entry: dict[str, Any], key: bytes) -> None:
    """Write the entry atomically (0600 in a 0700 dir), signed. Only CACHE_FIELDS are kept.
    OSError when it cannot be written."""
    clean = {k: v for k, v in entry.items() if k in CACHE_FIELDS}
    if not write_cache(path, key, TAG, marshal.dumps(clean)):
        raise OSError(f"cannot write {os.fspath(path)}")
