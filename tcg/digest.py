"""SHA-256 for names and fingerprints, keyed BLAKE2b for signed files, HMAC-SHA256 for keyed names.

Unkeyed SHA-256 (cache file names, the policy's fingerprint in events, the
launch gate's state key) comes from tcg._lean.sha — the interpreter's builtin
SHA-256, without loading OpenSSL (tcg._lean says what that saves) — and is
loaded on first use. What the hook computes on every tool call (the code's
identity, tcg.fingerprint; the policy snapshot's key) is unkeyed BLAKE2b-256
instead: the hook loads BLAKE2 for the snapshot's MAC anyway, so it does not
load a second hash module.

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

TYPE_CHECKING = False  # typing costs ~3 ms of import on the hot path
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Protocol

    class Hash(Protocol):
        """What sha256() and blake2b_256() return (hashlib's interface)."""

        def update(self, data: bytes, /) -> None: ...
        def digest(self) -> bytes: ...
        def hexdigest(self) -> str: ...

__all__ = ["blake2b_256", "compare_digest", "hmac_sha256", "keyed_blake2b", "sha256", "sha256_hex"]


def sha256(data: bytes = b"") -> Hash:
    """A SHA-256 object (hashlib's interface) fed with ``data``."""
    from tcg._lean.sha import sha256 as builtin_sha256

    return builtin_sha256(data)


def sha256_hex(data: bytes) -> str:
    return sha256(data).hexdigest()


def blake2b_256(data: bytes = b"") -> Hash:
    """An unkeyed BLAKE2b-256 object (hashlib's interface) fed with ``data``: for
    identities computed on every call (see above), never for a MAC."""
    from tcg._lean.blake import blake2b

    return blake2b(data, digest_size=32)


def hmac_sha256(key: bytes, message: bytes) -> str:
    """Hex HMAC-SHA256 of ``message`` under ``key`` (the standard library's hmac)."""
    import hmac

    return hmac.digest(key, message, "sha256").hex()


def keyed_blake2b(key: bytes, message: bytes | memoryview, person: bytes, prefix: bytes = b"") -> str:
    """Hex keyed BLAKE2b-256 of ``prefix + message`` under ``key`` (at most 64 bytes),
    in the domain ``person`` (at most 16 bytes: one per use of the key, so no two uses
    can produce each other's values). The two parts are hashed in turn, never joined:
    a signed file's body (a 1.3 MB compiled database) is not copied to be verified."""
    return keyed_blake2b_of(key, (message,), person, prefix)


def keyed_blake2b_of(key: bytes, parts: Iterable[bytes | memoryview], person: bytes, prefix: bytes = b"") -> str:
    """keyed_blake2b of ``prefix`` and the concatenation of ``parts``, hashed in turn:
    a body read in pieces (tcg.signed.read_signed_pieces) is verified without joining them."""
    from tcg._lean.blake import blake2b

    h = blake2b(prefix, digest_size=32, key=key, person=person)
    for part in parts:
        h.update(part)
    return h.hexdigest()


def compare_digest(a: bytes, b: bytes) -> bool:
    """Constant-time equality of two MACs (the C function under hmac.compare_digest,
    without importing hmac and the OpenSSL binding it loads)."""
    from tcg._lean.ops import compare_digest as _compare

    return _compare(a, b)
