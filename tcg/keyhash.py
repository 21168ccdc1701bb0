"""Keyed hashes: how tcg refers to a secret without holding it.

HMAC-SHA256 under a per-install random key stored 0600 in the state dir. The
same value maps to the same hash on one install (placeholders are stable across
processes); different installs differ, and a small keyspace (PII) cannot be
brute-forced offline from the logs without the key.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

from tcg.paths import Paths, ensure_private_dir, get_paths

KEY_BYTES = 32


def load_or_create_key(paths: Paths | None = None) -> bytes:
    p = paths or get_paths()
    key_file = p.key_file
    try:
        data = key_file.read_bytes()
        if len(data) >= KEY_BYTES:
            return data[:KEY_BYTES]
    except FileNotFoundError:
        pass
    ensure_private_dir(key_file.parent)
    key = secrets.token_bytes(KEY_BYTES)
    tmp = key_file.with_name(f".key.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, key)
    finally:
        os.close(fd)
    try:
        # First writer wins; a concurrent creator's key is read back instead of ours.
        os.link(tmp, key_file)
    except FileExistsError:
        pass
    finally:
        os.unlink(tmp)
    return Path(key_file).read_bytes()[:KEY_BYTES]


class KeyedHasher:
    """HMAC helper bound to one key. ``h8`` is the placeholder form."""

    def __init__(self, key: bytes):
        self._key = key

    @classmethod
    def for_install(cls, paths: Paths | None = None) -> KeyedHasher:
        return cls(load_or_create_key(paths))

    def hexdigest(self, value: bytes | str) -> str:
        if isinstance(value, str):
            value = value.encode("utf-8", "surrogateescape")
        return hmac.new(self._key, value, hashlib.sha256).hexdigest()

    def h8(self, value: bytes | str) -> str:
        return self.hexdigest(value)[:8]

    def h16(self, value: bytes | str) -> str:
        return self.hexdigest(value)[:16]
