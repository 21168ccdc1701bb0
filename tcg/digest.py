"""SHA-256 and HMAC-SHA256 without importing hashlib.

``import hashlib`` loads OpenSSL (``_hashlib``): ~2 ms on every `tcg_shell`
and `tcg launch` start, which is a fifth of the whole budget. CPython ships its
own SHA-256 as a small builtin module (``_sha256`` up to 3.11, ``_sha2`` from
3.12); hashlib is the fallback where neither exists. HMAC is RFC 2104 over that
hash, exactly what the stdlib ``hmac`` module computes (tests compare the two).
"""

from __future__ import annotations

try:  # CPython >= 3.12
    from _sha2 import sha256
except ImportError:  # pragma: no cover - depends on the interpreter version
    try:
        from _sha256 import sha256  # CPython <= 3.11
    except ImportError:
        from hashlib import sha256

from _operator import _compare_digest as compare_digest

_BLOCK = 64  # SHA-256 block size in bytes
_IPAD = bytes(x ^ 0x36 for x in range(256))
_OPAD = bytes(x ^ 0x5C for x in range(256))

__all__ = ["compare_digest", "hmac_sha256", "sha256", "sha256_hex"]


def sha256_hex(data: bytes) -> str:
    return sha256(data).hexdigest()


def hmac_sha256(key: bytes, message: bytes) -> str:
    """Hex HMAC-SHA256 of ``message`` under ``key`` (RFC 2104)."""
    if len(key) > _BLOCK:
        key = sha256(key).digest()
    key = key.ljust(_BLOCK, b"\0")
    inner = sha256(key.translate(_IPAD) + message).digest()
    return sha256(key.translate(_OPAD) + inner).hexdigest()
