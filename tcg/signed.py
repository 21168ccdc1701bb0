"""Cache files signed with the install's HMAC key.

Start-up caches (the detector's rule-analysis memo, policy snapshots) live in
the cache dir, which anything running as the user can write. Each file is one
MAC line and a body; a file whose MAC does not verify (edited, truncated,
another install's) reads as absent, so a forged cache can never change what
tcg decides — it only costs the time to rebuild it.
"""

from __future__ import annotations

import os

from tcg.digest import compare_digest, hmac_sha256


def _mac(key: bytes, tag: str, body: bytes) -> bytes:
    return hmac_sha256(key, tag.encode("utf-8") + b"\0" + body).encode("ascii")


def signed_bytes(key: bytes, tag: str, body: bytes) -> bytes:
    """The file content write_signed writes (MAC line + body)."""
    return _mac(key, tag, body) + b"\n" + body


def read_signed(path: str | os.PathLike[str], key: bytes, tag: str) -> bytes | None:
    """The body of ``path`` if its MAC verifies under ``key`` and ``tag``, else None."""
    try:
        with open(path, "rb") as fh:
            mac, _, body = fh.read().partition(b"\n")
    except OSError:
        return None
    return body if mac and compare_digest(mac, _mac(key, tag, body)) else None


def read_signed_json(path: str | os.PathLike[str], key: bytes, tag: str) -> dict[str, object] | None:
    """A signed JSON object (see read_signed), or None when absent, forged or not an object."""
    body = read_signed(path, key, tag)
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
    from tcg.paths import ensure_private_dir

    path = os.fspath(path)
    parent, name = os.path.split(path)
    tmp = os.path.join(parent, f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        ensure_private_dir(parent)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(signed_bytes(key, tag, body))
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False
    return True
