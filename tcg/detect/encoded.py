"""Base64 / base64url runs that may hide a credential.

A candidate run is a MAXIMAL run of base64 alphabet characters (``A-Za-z0-9+/``
or ``A-Za-z0-9-_``, optional ``=`` padding) of MIN_RUN..MAX_RUN characters.
Longer runs (images, bundles) are skipped entirely: the work per run is
bounded and the decision needs at most MAX_RUN + 2 bytes of look-around, which
keeps streaming (chunked) scanning exact. A run is decoded only when the
decoded bytes are mostly printable text; binary payloads (lockfile hashes,
images) are dropped without scanning.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator

MIN_RUN = 24  # shortest encoding of a ~16-byte credential
MAX_RUN = 4096
PRINTABLE_SHARE = 0.85

# Maximal runs: the alphabet run may not touch another alphabet character on either side.
_RUN = re.compile(rb"[A-Za-z0-9+/_\-]{%d,%d}={0,2}" % (MIN_RUN, MAX_RUN))
_LEFT = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-")
_RIGHT = _LEFT | {ord("=")}
_REST = re.compile(rb"[A-Za-z0-9+/_\-=]*")


def _printable(raw: bytes) -> bool:
    """Mostly text: valid UTF-8 characters that are printable or whitespace."""
    if not raw:
        return False
    text = raw.decode("utf-8", "replace")
    good = sum(1 for ch in text if ch != "\ufffd" and (ch.isprintable() or ch in "\t\r\n"))
    return good / len(text) >= PRINTABLE_SHARE


def decode_run(run: bytes) -> bytes | None:
    """Decode one base64/base64url run, or None if it is not text-like base64."""
    body = run.rstrip(b"=")
    std = b"+" in body or b"/" in body
    url = b"-" in body or b"_" in body
    if std and url:
        return None
    if len(body) % 4 == 1:
        body = body[:-1]
    if url:
        body = body.replace(b"-", b"+").replace(b"_", b"/")
    try:
        raw = base64.b64decode(body + b"=" * (-len(body) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw if _printable(raw) else None


def encoded_runs(data: bytes) -> Iterator[tuple[int, int, bytes]]:
    """(start, end, decoded) for every text-like maximal base64 run in ``data``."""
    n = len(data)
    pos = 0
    while True:
        m = _RUN.search(data, pos)
        if m is None:
            return
        s, e = m.span()
        pos = e
        if e < n and data[e] in _RIGHT:
            # part of a longer run: skip the whole run (bounded work, see module doc)
            pos = _REST.match(data, e).end()
            continue
        if s > 0 and data[s - 1] in _LEFT:
            continue
        decoded = decode_run(data[s:e])
        if decoded is not None:
            yield s, e, decoded
