"""Base64 / base64url runs that may hide a credential.

A candidate run is a MAXIMAL sequence of MIN_RUN..MAX_RUN base64 alphabet bytes
(``A-Za-z0-9+/`` or ``A-Za-z0-9-_``; the byte before it is not in the alphabet,
"=" is fine, as in ``key=...``), then at most two "=" of padding, then a byte
that is neither in the alphabet nor "=" (or the end of the input). Longer runs
(images, bundles) are skipped entirely: the work per run is bounded and the
decision needs at most MAX_RUN + 3 bytes of look-around, which keeps streaming
(chunked) scanning exact. A run is decoded only when the
decoded bytes are mostly printable text; binary payloads (lockfile hashes,
images) are dropped without scanning.
"""

from __future__ import annotations

import binascii
import re

TYPE_CHECKING = False  # typing, and collections.abc, cost a masking process's start
if TYPE_CHECKING:
    from collections.abc import Iterator

MIN_RUN = 24  # shortest encoding of a ~16-byte credential
MAX_RUN = 4096
PRINTABLE_SHARE = 0.85

_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-"
#: translate() table: alphabet -> "A", "=" -> "=", anything else -> " "
CLASSES = bytes(0x41 if b in _ALPHABET else 0x3D if b == 0x3D else 0x20 for b in range(256))
_SEED = b"A" * MIN_RUN
_NOT_ALPHABET = re.compile(rb"[^A]").search
_CONTROL = bytes(b for b in range(0x20) if b not in b"\t\n\r") + b"\x7f"


def printable(raw: bytes) -> bool:
    """Mostly text: at least PRINTABLE_SHARE of the decoded characters are neither
    U+FFFD (invalid UTF-8) nor ASCII control characters (tab/CR/LF are fine).
    Counted with C-level calls: a source file has ~4000 identifier-like runs per MB."""
    if not raw:
        return False
    text = raw.decode("utf-8", "replace")
    bad = text.count("\ufffd") + len(raw) - len(raw.translate(None, _CONTROL))
    return (len(text) - bad) >= PRINTABLE_SHARE * len(text)


def decode_run(run: bytes) -> bytes | None:
    """Decode one base64/base64url run, or None if it is not text-like base64."""
    raw = decode_base64(run)
    return raw if raw is not None and printable(raw) else None


def decode_base64(run: bytes) -> bytes | None:
    """Decode base64 or base64url (padding optional, not both alphabets mixed), or None."""
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
        import base64  # with a run only: a masking process's start does without it (~1.5 ms)

        return base64.b64decode(body + b"=" * (-len(body) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None


def encoded_runs(data: bytes, classes: bytes | None = None) -> Iterator[tuple[int, int, bytes]]:
    """(start, end, decoded) for every text-like maximal base64 run in ``data``.

    The input is first mapped byte-for-byte to "A" (alphabet), "=" and " " (the
    rest) so runs are found with C-speed ``bytes.find`` instead of a regex that
    would try every letter of the input. ``classes``: that map when the caller
    already has it (``data.translate(CLASSES)``; the masker's view keeps one).
    """
    t = data.translate(CLASSES) if classes is None else classes
    n = len(t)
    pos = 0
    # each run decoded once: code repeats its long names and rules ("---…") many times
    seen: dict[bytes, bytes | None] = {}
    while True:
        s = t.find(_SEED, pos)
        if s < 0:
            return
        m = _NOT_ALPHABET(t, s + MIN_RUN)  # the run's end: work ~ its length, not the rest
        body_end = m.start() if m is not None else n
        e = body_end
        while e < n and e - body_end < 2 and t[e] == 0x3D:  # up to two "=" of padding
            e += 1
        if (e < n and t[e] != 0x20) or body_end - s > MAX_RUN:
            pos = e  # too long, or glued to more base64 / "===": not a run (bounded work)
            continue
        pos = e
        run = data[s:e]
        decoded = seen[run] if run in seen else seen.setdefault(run, decode_run(run))
        if decoded is not None:
            yield s, e, decoded
