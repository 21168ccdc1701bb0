"""SHA-256 for names and fingerprints, HMAC-SHA256 for signatures.

Unkeyed SHA-256 (cache file names, fingerprints of policy texts and code) comes
from tcg._lean.sha256 — the interpreter's builtin SHA-256, without loading
OpenSSL (tcg._lean says what that saves). HMAC is the standard library's
``hmac`` over ``hashlib``'s SHA-256, imported on first use: only a process that
actually signs or verifies something pays for loading it.
"""

from __future__ import annotations

from tcg._lean.sha import sha256

__all__ = ["compare_digest", "hmac_sha256", "sha256", "sha256_hex"]


def sha256_hex(data: bytes) -> str:
    return sha256(data).hexdigest()


def hmac_sha256(key: bytes, message: bytes) -> str:
    """Hex HMAC-SHA256 of ``message`` under ``key`` (the standard library's hmac)."""
    import hmac

    return hmac.digest(key, message, "sha256").hex()


def compare_digest(a: bytes, b: bytes) -> bool:
    """Constant-time equality of two MACs (hmac.compare_digest)."""
    import hmac

    return hmac.compare_digest(a, b)
