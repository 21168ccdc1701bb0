"""The gate cache: one small file per repository, metadata only.

Named by the keyed hash of the repository root; holds the latest result for
(state key, policy fingerprint, scanner id). Only CACHE_FIELDS are ever written:
keyed repo hash, agent name, scan status, counts of files, blobs and findings
by rule, and the (keyed) lookup keys — never a path, never a value.

The files are ``marshal`` data (a dict of str/int/bool), not JSON: the cache-hit
launch reads them, and ``import json`` (with ``re``) costs more than the whole
read. They live in tcg's private cache directory (0700, files 0600) and are
validated field by field after loading; anything unexpected is a miss.

The policy stamp (``launch-policy.stamp``) remembers the effective policy's
fingerprint and the few values a launch needs, keyed by the identity of every
policy layer's file (path, size, mtime_ns, inode) and of tcg's own policy code,
so a cache-hit launch need not parse TOML. Any change to any layer file — or a
layer appearing or disappearing — changes the stamp and forces a full load.
"""

from __future__ import annotations

import os

from tcg.launcher.fastpath import (
    CACHE_FIELDS,
    CACHE_SUFFIX,
    CACHE_VERSION,
    PRIVATE_TAG,
    STAMP_FILE,
    STAMP_VERSION,
    cache_path,
    load_cached,
    load_stamp,
    policy_stamp,
)

TYPE_CHECKING = False  # typing costs ~3 ms of import on the cache-hit path
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "CACHE_FIELDS", "CACHE_SUFFIX", "CACHE_VERSION", "PRIVATE_TAG", "STAMP_FILE", "STAMP_VERSION", "cache_path", "load_cached",
    "load_stamp", "policy_stamp", "store_cached", "store_stamp", "write_private",
]


def write_private(path: str | os.PathLike[str], data: bytes, key: bytes) -> None:
    """Write ``path`` atomically, 0600 in a 0700 directory, signed with the install
    key (load_marshal reads it back only when the MAC verifies). OSError on failure."""
    from tcg.signed import write_signed

    if not write_signed(path, key, PRIVATE_TAG, data):
        raise OSError(f"cannot write {os.fspath(path)}")


def store_cached(path: str | os.PathLike[str], entry: dict[str, Any], key: bytes) -> None:
    """Write the entry atomically (0600 in a 0700 dir). Only CACHE_FIELDS are kept."""
    import marshal

    clean = {k: v for k, v in entry.items() if k in CACHE_FIELDS}
    write_private(path, marshal.dumps(clean), key)


def store_stamp(cache_dir: str | os.PathLike[str], stamp: str, policy: Any, key: bytes) -> None:
    import marshal

    entry = {
        "v": STAMP_VERSION,
        "stamp": stamp,
        "fingerprint": str(policy.fingerprint),
        "snapshot": str(policy.snapshot_id),
        "known": sorted(str(a) for a in policy.get("agents.known", []) or []),
    }
    try:
        write_private(os.path.join(os.fspath(cache_dir), STAMP_FILE), marshal.dumps(entry), key)
    except OSError:
        pass
