"""The gate cache: one small JSON file per repository, metadata only.

Named by the keyed hash of the repository root; holds the latest result for
(state key, policy fingerprint, scanner id). Only CACHE_FIELDS are ever written:
keyed repo hash, agent name, scan status, counts of files, blobs and findings
by rule, and the (keyed) lookup keys — never a path, never a value. Light
imports: the cache-hit launch path reads it.

The policy stamp (``launch-policy.json``) remembers the effective policy's
fingerprint and the few values a launch needs, keyed by the identity of every
policy layer's file (path, size, mtime_ns, inode) and of tcg's own policy code,
so a cache-hit launch need not parse TOML. Any change to any layer file — or a
layer appearing or disappearing — changes the stamp and forces a full load.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

CACHE_VERSION = 1
CACHE_FIELDS = frozenset({
    "v", "repo", "state", "policy", "scanner", "agent", "status", "complete",
    "files", "blobs", "findings", "counts_by_rule", "scanned_at", "duration_ms",
})
STAMP_FILE = "launch-policy.json"


def cache_path(scan_cache: Path, repo_hash: str) -> Path:
    return scan_cache / f"{repo_hash}.json"


def load_cached(path: Path, state: str, fingerprint: str, scanner: str) -> dict[str, Any] | None:
    """The cached entry when it matches all three keys; None otherwise (or when unreadable)."""
    try:
        with open(path, "rb") as fh:
            entry = json.loads(fh.read())
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


def _write_private(path: Path, data: bytes) -> None:
    from tcg.paths import ensure_private_dir

    ensure_private_dir(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def store_cached(path: Path, entry: dict[str, Any]) -> None:
    """Write the entry atomically (0600 in a 0700 dir). Only CACHE_FIELDS are kept."""
    clean = {k: v for k, v in entry.items() if k in CACHE_FIELDS}
    _write_private(path, json.dumps(clean, sort_keys=True, separators=(",", ":")).encode("ascii"))


# ------------------------------------------------------------ policy stamp


def _file_id(path: str) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return f"{path}:absent"
    return f"{path}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"


def policy_stamp(cwd: str, user_policy: str) -> str:
    """Identity of every file the effective policy is built from, seen from ``cwd``.

    Mirrors tcg.policy.load: the built-in default (and the loader's code), the
    user file (or TCG_POLICY), and the repository layer found by walking up from
    ``cwd`` to the first directory holding ``.git`` (find_repo_policy).
    """
    import tcg
    import tcg.policy

    pkg = os.path.dirname(os.path.abspath(tcg.policy.__file__))
    parts = [tcg.__version__, _file_id(os.path.join(pkg, "default.toml")), _file_id(os.path.join(pkg, "load.py")),
             "user=" + _file_id(user_policy)]
    cur = os.path.realpath(cwd)
    while True:
        cand = os.path.join(cur, ".tcg", "policy.toml")
        if os.path.isfile(cand):
            parts.append("repo=" + _file_id(cand))
            break
        if os.path.exists(os.path.join(cur, ".git")):
            parts.append("repo-stop=" + cur)
            break
        parent = os.path.dirname(cur)
        if parent == cur:
            parts.append("repo=none")
            break
        cur = parent
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()


def load_stamp(cache_dir: Path, stamp: str) -> dict[str, Any] | None:
    try:
        with open(cache_dir / STAMP_FILE, "rb") as fh:
            entry = json.loads(fh.read())
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("stamp") != stamp:
        return None
    if not isinstance(entry.get("fingerprint"), str) or not isinstance(entry.get("snapshot"), str):
        return None
    if not isinstance(entry.get("known"), list):
        return None
    return entry


def store_stamp(cache_dir: Path, stamp: str, policy: Any) -> None:
    entry = {
        "stamp": stamp,
        "fingerprint": policy.fingerprint,
        "snapshot": policy.snapshot_id,
        "known": sorted(str(a) for a in policy.get("agents.known", []) or []),
    }
    try:
        _write_private(cache_dir / STAMP_FILE, json.dumps(entry, sort_keys=True).encode("ascii"))
    except OSError:
        pass
