"""Effective policies remembered between commands, signed with the install key."""

from __future__ import annotations

import marshal
import os
import sys

from tcg.cachestore import read_cache, write_cache
from tcg.policy.compiled import from_plain, to_plain
from tcg.policy.merge import Policy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from tcg.paths import Paths


class PolicySnapshots:
    """Effective policies remembered in the cache dir, keyed by the exact text of
    every layer (tcg.policy.sources); the file is bound to the code that wrote it
    (tcg.cachestore).

    Parsing and validating the TOML layers costs ~15 ms of every `tcg_shell`
    start; a snapshot hit costs one small read. The file is signed with the
    install key (tcg.signed), so an edited or foreign snapshot is ignored (and
    rebuilt): it cannot loosen the policy. Used only once the install key
    exists — loading a policy never creates files by itself.

    The body is ``marshal`` data (the policy is plain dicts, lists, strings and
    numbers, its compiled model plain tuples of them: tcg.policy.compiled): json
    would add its import to every command. marshal is only ever read after the MAC verified, and the tag names the interpreter's
    marshal format, so another Python's snapshot reads as absent.
    """

    FILE = "policy-snapshots.bin"
    TAG = f"policy-snapshots/marshal-{marshal.version}/py{sys.version_info[0]}.{sys.version_info[1]}"
    KEEP = 8

    def __init__(self, paths: Paths):
        from tcg.keyhash import existing_key

        self.path = os.path.join(paths.cache_dir, self.FILE)
        self._key = existing_key(paths)

    def _entries(self) -> dict[str, Any]:
        if self._key is None:
            return {}
        body = read_cache(self.path, self._key, self.TAG)
        try:
            entries = marshal.loads(body) if body is not None else {}
        except (ValueError, EOFError, TypeError):
            return {}
        return entries if isinstance(entries, dict) else {}

    def get(self, key: str) -> Policy | None:
        entry = self._entries().get(key)
        if not isinstance(entry, dict):
            return None
        try:
            data = entry["data"]
            if not isinstance(data, dict) or not isinstance(entry["fingerprint"], str):
                return None
            return Policy(data=data, fingerprint=entry["fingerprint"],
                          sources=tuple(entry["sources"]), notices=tuple(entry["notices"]),
                          compiled=from_plain(entry["compiled"]))
        except (TypeError, KeyError, ValueError):
            return None

    def put(self, key: str, policy: Policy) -> None:
        """Best effort: a snapshot that cannot be written only costs start-up time."""
        if self._key is None:
            return
        entries = self._entries()
        entries.pop(key, None)
        entries[key] = {"data": policy.data, "fingerprint": policy.fingerprint,
                        "sources": list(policy.sources), "notices": list(policy.notices),
                        "compiled": to_plain(policy.model)}
        while len(entries) > self.KEEP:
            entries.pop(next(iter(entries)))
        body = marshal.dumps(entries)
        write_cache(self.path, self._key, self.TAG, body)

