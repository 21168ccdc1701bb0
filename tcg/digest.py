"""SHA-256 for names and fingerprints, keyed BLAKE2b for signed files, HMAC-SHA256 for keyed names.

Unkeyed SHA-256 (cache file names, fingerprints of policy texts and code) comes
from tcg._lean.sha256 — the interpreter's builtin SHA-256, without loading
OpenSSL (tcg._lean says what that saves).

Signed files (tcg.signed: every start-up cache, trash and approval records) are
authenticated with BLAKE2b in its keyed mode (RFC 7693, section 2.5: the key
fills the first block; a MAC by design, no HMAC construction needed), from the
interpreter's builtin BLAKE2 (tcg._lean.blake). The hook reads a signed policy
snapshot on every tool call; verifying it this way does not load OpenSSL.

Keyed names — placeholders' ``h8``, the ``h16`` hashes in events — stay
HMAC-SHA256 (tcg.keyhash; docs/masking.md): their values are compared across
processes and versions. HMAC is the standard library's ``hmac``, imported on
first use: only a process that computes one pays for loading it.
"""

from __future__ import annotations

from tcg._lean.sha import sha256

__all__ = ["compare_digest", "hmac_sha256", "keyed_blake2b", "sha256", "sha256_hex"]


def sha256_hex(data: bytes) -> str:
    return sha256(data).hexdigest()


def hmac_sha256(key: bytes, message: bytes) -> str:
    """Hex HMAC-SHA256 of ``message`` under ``key`` (the standard library's hmac)."""
    import hmac

    return hmac.digest(key, message, "sha256").hex()


def keyed_blake2b(key: bytes, message: bytes, person: bytes) -> str:
    """Hex keyed BLAKE2b-256 of ``message`` under ``key`` (at most 64 bytes), in the
    domain ``person`` (at most 16 bytes: one per use of the key, so no two uses can
    produce each other's values)."""
    from tcg._lean.blake import blake2b

    return blake2b(message, digest_size=32, key=key, person=person).hexdigest()


def compare_digest(a: bytes, b: bytes) -> bool:
    """Constant-time equality of two MACs (the C function under hmac.compare_digest,
    without importing hmac and the OpenSSL binding it loads)."""
    from tcg._lean.ops import compare_digest as _compare

    return _compare(a, b)
