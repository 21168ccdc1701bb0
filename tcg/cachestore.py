"""Start-up cache files: signed with the install key, bound to the code that wrote them.

A cache file is a tcg.signed file whose MAC tag is ``<kind>\\0<code
fingerprint>`` (tcg.fingerprint). A file written by other tcg code (an
upgrade, an edited module in an editable install) fails the MAC exactly like
an edited or forged one: it reads as absent and the caller rebuilds it. So a
cache never needs its own list of the modules its content depends on, and a
forged or stale cache can only cost the time to rebuild it.

Records that must outlive an upgrade (the trash's transaction records,
approvals) use tcg.signed directly.
"""

from __future__ import annotations

import os

from tcg import signed
from tcg.fingerprint import code_fingerprint


def cache_tag(kind: str) -> str:
    """The MAC tag of a cache of ``kind`` written by this code."""
    return f"{kind}\0{code_fingerprint()}"


def read_cache(path: str | os.PathLike[str], key: bytes, kind: str) -> bytes | None:
    """The body of the cache file, or None when absent, forged or written by other code."""
    return signed.read_signed(path, key, cache_tag(kind))


def read_cache_view(path: str | os.PathLike[str], key: bytes, kind: str) -> tuple[bytes, memoryview] | None:
    """``(MAC line, body)`` without copying the body, or None (tcg.signed.read_signed_view)."""
    return signed.read_signed_view(path, key, cache_tag(kind))


def read_cache_json(path: str | os.PathLike[str], key: bytes, kind: str) -> dict[str, object] | None:
    """A JSON object cached by write_cache, or None (see read_cache)."""
    return signed.read_signed_json(path, key, cache_tag(kind))


def write_cache(path: str | os.PathLike[str], key: bytes, kind: str, body: bytes) -> bool:
    """Atomically replace the cache file (0600, private dir). Best effort: False on failure."""
    return signed.write_signed(path, key, cache_tag(kind), body)
