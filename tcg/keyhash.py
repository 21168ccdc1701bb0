"""Keyed hashes: how tcg refers to a secret without holding it.

HMAC-SHA256 under a per-install random key stored 0600 in the state dir. The
same value maps to the same hash on one install (placeholders are stable across
processes); different installs differ, and a small keyspace (PII) cannot be
brute-forced offline from the logs without the key.
"""

from __future__ import annotations

import os

from tcg.digest import hmac_sha256
from tcg.errors import TcgError
from tcg.paths import ensure_private_dir, get_paths

TYPE_CHECKING = False  # typing costs ~3 ms of import on the hot path
if TYPE_CHECKING:
    from tcg.paths import Paths

KEY_BYTES = 32


class KeyFileError(TcgError):
    """The per-install key cannot be read or created."""


def load_or_create_key(paths: Paths | None = None) -> bytes:
    """Read the install's key, creating it (0600, in a 0700 dir) on first use.

    Creation is race-free: the key is written completely to a private temp file
    and hard-linked into place, so concurrent first users all end up with the
    one key that won the link, and nobody ever reads a half-written key.
    """
    p = paths or get_paths()
    key_file = p.key_path
    key = _read_key(key_file)
    if key is not None:
        return key
    ensure_private_dir(p.state_dir)
    tmp = os.path.join(p.state_dir, f".key.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, os.urandom(KEY_BYTES))
    finally:
        os.close(fd)
    try:
        try:
            os.link(tmp, key_file)
        except FileExistsError:
            # Someone else won (keep theirs), or the file is damaged (replace it).
            if _read_key(key_file) is None:
                os.replace(tmp, key_file)
        except OSError:
            # Filesystems without hard links: rename is atomic but last-wins.
            if _read_key(key_file) is None:
                os.replace(tmp, key_file)
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
    key = _read_key(key_file)
    if key is None:
        raise KeyFileError(
            f"cannot create the tcg key file {key_file}",
            hint="check permissions of the tcg state directory (tcg doctor)",
        )
    return key


def existing_key(paths: Paths) -> bytes | None:
    """The install key if it exists and is readable, else None (never creates it).

    For start-up caches, which are only trusted under the key: no key, no cache.
    """
    try:
        return _read_key(paths.key_path)
    except KeyFileError:
        return None


def _read_key(key_file: str) -> bytes | None:
    try:
        with open(key_file, "rb") as fh:
            data = fh.read(KEY_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise KeyFileError(
            f"cannot read the tcg key file {key_file}: {exc.strerror}",
            hint="check its permissions (it must be readable by you only: chmod 600)",
        ) from exc
    return data[:KEY_BYTES] if len(data) >= KEY_BYTES else None


class KeyedHasher:
    """HMAC helper bound to one key. ``h8`` is the placeholder form."""

    def __init__(self, key: bytes):
        self._key = key

    @property
    def key(self) -> bytes:
        """The install key (to sign tcg's own cache files with)."""
        return self._key

    @classmethod
    def for_install(cls, paths: Paths | None = None) -> KeyedHasher:
        return cls(load_or_create_key(paths))

    def hexdigest(self, value: bytes | str) -> str:
        if isinstance(value, str):
            value = value.encode("utf-8", "surrogateescape")
        return hmac_sha256(self._key, value)

    def h8(self, value: bytes | str) -> str:
        return self.hexdigest(value)[:8]

    def h16(self, value: bytes | str) -> str:
        return self.hexdigest(value)[:16]
