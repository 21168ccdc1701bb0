"""Secret stores that git holds: a finding of their own, whatever their content.

An agent's view of the working tree replaces a `.env` with a masked copy, and its
commands are refused a path-addressed read of one (`cat .env`, `git show HEAD:.env`).
Git's object database is not masked: once a store is committed (or staged), `git diff`,
`git log -p`, `git grep` print its content, and the masked copy differs from the
committed blob, so `git status` invites exactly that diff. The detector cannot vouch for
such a file: `NAME=value` lines without a keyword are not secrets to it. So any blob at a
path the policy's ``[secret_stores]`` calls a store — in the history, the index (staged)
or, without ``--history``, among the tracked files — is reported as rule
:data:`STORE_RULE`, one finding per distinct blob. Its identity is a keyed hash of the
blob id: the content is never read for it, so a binary keystore (`*.p12`) or a file over
the size limit is reported too. An untracked store is not a finding: git does not hold it.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

STORE_RULE = "secret-store-in-git"
STORE_CATEGORY = "secret"
STORE_DESCRIPTION = "a secret store (policy [secret_stores]) that git holds: git diff/log -p/grep print it"
_HASH_DOMAIN = b"tcg-scan-store-blob\0"  # keeps a blob-id hash apart from value hashes


class StoreMatcher:
    """Whether a repository path is a secret store, by the policy's own matcher
    (SecretStores.match: basenames, directory names, exceptions), plus its absolute path
    globs against the path under the work tree (a dotfiles repository holding
    `.config/gh/hosts.yml`). Answers are remembered per path: a history lists the same
    path once per version."""

    def __init__(self, stores: Any, root: str | None):
        self._stores = stores
        self._root = root
        self._abs = None
        if stores is not None and stores.paths and root:
            self._abs = type(stores)((), (), stores.paths, stores.allow_basenames, False)
        self._memo: dict[str, bool] = {}

    def __call__(self, path: str) -> bool:
        hit = self._memo.get(path)
        if hit is None:
            hit = False
            if self._stores is not None and path:
                hit = self._stores.match(path) is not None
                if not hit and self._abs is not None and self._root:
                    hit = self._abs.match(os.path.join(self._root, path).replace(os.sep, "/")) is not None
            self._memo[path] = hit
        return hit


def policy_stores(policy: Any) -> Any:
    """The policy's secret stores with ``~`` expanded (None when the policy has none)."""
    stores = getattr(getattr(policy, "model", None), "secret_stores", None)
    return stores.for_home(os.path.expanduser("~")) if stores is not None else None


def store_digest(key: bytes, oid: str) -> str:
    """The finding's identity: a keyed hash of the blob id (16 hex), never of content."""
    from tcg.digest import hmac_sha256

    return hmac_sha256(key, _HASH_DOMAIN + oid.encode("ascii", "replace"))[:16]


def store_rows(items: list[tuple[str, str, str | None, str, int]], key: bytes) -> list[tuple[Any, ...]]:
    """Finding rows (the scanner's row layout) for (oid, path, commit, source, size)
    items: line and column 1, the length is the blob's size."""
    return [(STORE_RULE, STORE_CATEGORY, path, 1, 1, commit, oid, source, store_digest(key, oid), size)
            for oid, path, commit, source, size in items]
