"""Cache files and records signed with the install key.

Start-up caches (the detector's rule-analysis memo, policy snapshots) and
records (the trash's transactions, approvals) live in directories that anything
running as the user can write. Each file is one MAC line and a body; a file
whose MAC does not verify (edited, truncated, another install's) reads as
absent, so a forged file can never change what tcg decides — for a cache it
only costs the time to rebuild it.

The MAC line is ``blake2b:`` and the keyed BLAKE2b-256 (tcg.digest) of ``tag``,
a NUL and the body, in the domain ``tcg signed file``: the tag says what the
file is (a trash manifest cannot pass for an approval, a cache for the code
that wrote it — tcg.cachestore), the domain keeps these MACs apart from every
other use of the install key. Versions before used HMAC-SHA256 with the same
tag and a bare hex line; records that must outlive an upgrade (trash,
approvals) still accept that form (``legacy=True``), caches never need to.
"""

from __future__ import annotations

import io  # already loaded by the interpreter: open() is io.open
import os

from tcg.digest import compare_digest, keyed_blake2b_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

SCHEME = b"blake2b:"
PERSON = b"tcg signed file"


def _mac(key: bytes, tag: str, *parts: bytes | memoryview) -> bytes:
    """The MAC line of the body made of ``parts`` joined (hashed in turn, never joined)."""
    return SCHEME + keyed_blake2b_of(key, parts, PERSON, tag.encode("utf-8") + b"\0").encode("ascii")


def _legacy_mac(key: bytes, tag: str, body: bytes) -> bytes:
    from tcg.digest import hmac_sha256  # loads OpenSSL: only for a file written by an older tcg

    return hmac_sha256(key, tag.encode("utf-8") + b"\0" + body).encode("ascii")


def signed_bytes(key: bytes, tag: str, body: bytes) -> bytes:
    """The file content write_signed writes (MAC line + body)."""
    return _mac(key, tag, body) + b"\n" + body


def verify(key: bytes, tag: str, data: bytes, *, legacy: bool = False) -> bytes | None:
    """The body of the signed ``data`` if its MAC verifies, else None."""
    mac, _, body = data.partition(b"\n")
    if mac.startswith(SCHEME):
        return body if compare_digest(mac, _mac(key, tag, body)) else None
    if legacy and mac:
        return body if compare_digest(mac, _legacy_mac(key, tag, body)) else None
    return None


PEEK = 4096  # bytes of the body read_signed_pieces' ``cut`` sees


def read_signed_pieces(path: str | os.PathLike[str], key: bytes, tag: str,
                       cut: Callable[[bytes, int], list[int] | None]) -> tuple[bytes, list[bytes]] | None:
    """``(MAC line, pieces of the body)`` of ``path`` when its MAC verifies (current
    scheme only), else None. The body is read in the pieces ``cut(start, size)``
    names (``start``: up to its first PEEK bytes, ``size``: its length; the lengths
    must add up to ``size``), each straight into a bytes object of its own: a large
    cache made of parts a C library takes as bytes only (the detector's compiled
    databases, hyperscan.loadb) is read and verified without copying any part again
    (the copy of a 1.3 MB database: ~250 page faults of a masking process's start).
    ``cut`` sees bytes not yet verified: they only say where to cut, and the MAC is
    checked over the pieces in turn. The MAC covers the joined bytes, not where they
    are cut: the boundaries are bound only because ``cut`` must be a pure function
    of the body's bytes it sees (which the MAC covers), and lengths that do not add
    up to the file's size read as absent. The MAC line
    names that exact content (the key and tag fixed): a caller may use it as the
    file's identity instead of hashing the file a second time."""
    try:
        # The buffer holds the MAC line and PEEK bytes after it, whatever the file
        # system's block size: peek() returns only what is buffered.
        with io.BufferedReader(io.FileIO(path), 2 * PEEK) as fh:
            mac = fh.readline(len(SCHEME) + 256)
            if not mac.startswith(SCHEME) or not mac.endswith(b"\n"):
                return None
            size = os.fstat(fh.fileno()).st_size - len(mac)
            sizes = cut(fh.peek(PEEK)[:PEEK], size)
            if sizes is None or any(n < 0 for n in sizes) or sum(sizes) != size:
                return None
            pieces = [fh.read(n) for n in sizes]
    except OSError:
        return None
    if [len(p) for p in pieces] != sizes:  # shorter than it was a moment ago
        return None
    mac = mac[:-1]
    return (mac, pieces) if compare_digest(mac, _mac(key, tag, *pieces)) else None


def read_signed(path: str | os.PathLike[str], key: bytes, tag: str, *, legacy: bool = False) -> bytes | None:
    """The body of ``path`` if its MAC verifies under ``key`` and ``tag``, else None.
    ``legacy``: also accept the HMAC-SHA256 line older versions wrote."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    return verify(key, tag, data, legacy=legacy)


def read_signed_json(path: str | os.PathLike[str], key: bytes, tag: str, *,
                     legacy: bool = False) -> dict[str, object] | None:
    """A signed JSON object (see read_signed), or None when absent, forged or not an object."""
    body = read_signed(path, key, tag, legacy=legacy)
    if body is None:
        return None
    import json  # only here: the verified body is rarely read on the hot path

    try:
        doc = json.loads(body)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def write_signed(path: str | os.PathLike[str], key: bytes, tag: str, body: bytes) -> bool:
    """Atomically replace ``path`` (0600, in a 0700 directory) with a signed ``body``.
    Best effort: False on failure (no temp file is left behind)."""
    return write_signed_mac(path, key, tag, body) is not None


def write_signed_mac(path: str | os.PathLike[str], key: bytes, tag: str, body: bytes) -> bytes | None:
    """write_signed, returning the MAC line it wrote (read_signed_pieces' identity of
    the file) on success, else None."""
    from tcg.paths import ensure_private_dir

    path = os.fspath(path)
    parent, name = os.path.split(path)
    tmp = os.path.join(parent, f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        ensure_private_dir(parent)
        mac = _mac(key, tag, body)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(mac + b"\n" + body)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return None
    return mac
