"""A text's UTF-8 and its one-byte-per-character copy, built chunk by chunk.

The databases read bytes. A text with a single character outside ASCII is a wide
Python string, and encoding all of it costs about 1 ns a character (5 ms for 5 MB),
deleting the continuation bytes for the one-byte copy as much again. Most such
texts are ASCII but for a few places (a name, a symbol in a comment): cut into
chunks, the ASCII ones become one-byte strings when sliced (a fast narrowing copy)
and encode as a copy; only the others pay for UTF-8. The result is the same bytes
(tests/inbound/test_fast_paths.py compares them with :func:`encode` and
:func:`ascii_proxy`), plus where the non-ASCII chunks lie, which tells the mark
scans and the byte-to-character conversion where to look.
"""

from __future__ import annotations

from dataclasses import dataclass

#: characters per chunk: small enough that a stray non-ASCII character costs little,
#: large enough that the per-chunk calls do not show (about 300 chunks in 5 MB)
CHUNK = 16384
#: UTF-8 continuation bytes: without them, one byte is left per character
CONTINUATION = bytes(range(0x80, 0xC0))


def encode(text: str) -> bytes:
    """UTF-8 for the databases: a lone surrogate becomes "?" (one character for one,
    so character offsets survive; hyperscan's UTF-8 mode needs valid UTF-8)."""
    return text.encode("utf-8", "replace")


def ascii_proxy(text: str, data: bytes | None = None) -> bytes:
    """One byte per character: ASCII as it is; anything else "?" without ``data``, or
    its UTF-8 lead byte (>= 0x80) with it. The ASCII literals match there where they
    match the text (hyperscan's byte mode folds ASCII case only; a "?" in a literal
    may also meet a non-ASCII character on the first form, a candidate that
    confirmation drops), and offsets are character offsets. ``data``: the text's
    UTF-8 (:func:`encode`) when the caller has it: the same bytes for an ASCII text,
    else its lead bytes (deleting the continuation bytes is cheaper than encoding a
    wide string again)."""
    if data is None:
        return text.encode("ascii", "replace")
    return data if text.isascii() else data.translate(None, CONTINUATION)


@dataclass(frozen=True)
class Utf8:
    """``data``: :func:`encode` of the text; ``proxy``: :func:`ascii_proxy` of it with
    ``data``; ``wide``: the non-ASCII parts, merged, as (first character, first byte,
    end character, end byte), ascending — every character outside them is ASCII."""

    data: bytes
    proxy: bytes
    wide: tuple[tuple[int, int, int, int], ...] = ()

    def to_char(self, offsets: list[int]) -> dict[int, int]:
        """Byte offsets (ascending, on character boundaries) -> character offsets:
        outside the wide parts a subtraction, inside one a decode of its bytes from
        the previous offset in it (linear)."""
        if not self.wide:
            return {b: b for b in offsets}
        out = {}
        parts, k = self.wide, 0
        at_b = at_c = 0  # the last offset converted inside a part, and its character
        for b in offsets:
            while k < len(parts) and parts[k][3] <= b:
                k += 1  # parts that end at or before b
            if k < len(parts) and parts[k][1] <= b:
                c_lo, b_lo = parts[k][0], parts[k][1]
                if at_b < b_lo:
                    at_b, at_c = b_lo, c_lo
                at_c += len(self.data[at_b:b].decode("utf-8", "replace"))
                at_b = b
                out[b] = at_c
            else:  # ASCII after part k - 1 (or before the first)
                out[b] = b if k == 0 else parts[k - 1][2] + (b - parts[k - 1][3])
        return out


#: chunks sampled, spread over a text, to choose between the two ways to build it
PROBES = 16


def utf8_of(text: str) -> Utf8:
    """:class:`Utf8` of ``text``: chunk by chunk (:func:`chunked`) when it is ASCII
    but for a few places, whole (:func:`whole`) when a quarter of the chunks sampled
    across it hold other characters (a Russian page, a comment on every line), where
    cutting it only adds copies."""
    if text.isascii():
        data = text.encode("ascii")
        return Utf8(data, data)
    n = len(text)
    if n > CHUNK * PROBES:
        wide = sum(not text[k * n // PROBES:k * n // PROBES + CHUNK].isascii() for k in range(PROBES))
        if wide * 4 < PROBES:
            return chunked(text)
    return whole(text)


def whole(text: str) -> Utf8:
    """:class:`Utf8` of a text with characters outside ASCII, encoded in one piece
    (one non-ASCII part: all of it)."""
    data = encode(text)
    return Utf8(data, data.translate(None, CONTINUATION), ((0, 0, len(text), len(data)),))


def chunked(text: str, chunk: int = CHUNK) -> Utf8:
    """:class:`Utf8` of ``text``, encoding only its non-ASCII chunks as such
    (``chunk``: characters per chunk; tests make it small to put chunk edges
    everywhere)."""
    if text.isascii():
        data = text.encode("ascii")
        return Utf8(data, data)
    pieces: list[bytes] = []
    proxies: list[bytes] = []
    wide: list[tuple[int, int, int, int]] = []
    at_byte = 0
    for lo in range(0, len(text), chunk):
        part = text[lo:lo + chunk]  # an ASCII slice of a wide string is a one-byte string
        raw = part.encode("utf-8", "replace")
        pieces.append(raw)
        if part.isascii():
            proxies.append(raw)
        else:
            proxies.append(raw.translate(None, CONTINUATION))
            hi, end_byte = lo + len(part), at_byte + len(raw)
            if wide and wide[-1][2] == lo:
                wide[-1] = (wide[-1][0], wide[-1][1], hi, end_byte)
            else:
                wide.append((lo, at_byte, hi, end_byte))
        at_byte += len(raw)
    return Utf8(b"".join(pieces), b"".join(proxies), tuple(wide))
