"""The ``decoded`` view: text hidden in common encodings, decoded.

An obfuscated injection hides its instruction in an encoding the model reads
fluently: base64 (tcg.detect.encoded finds those runs, on any size), base32,
hex, binary octets, ascii85/base85, a reversed text, or letters spaced out
("I g n o r e"). Each run is decoded and kept only when it reads as text
(mostly printable, with a run of letters), so hashes, keys and image data
drop out. The decoders other than base64 are Python regexes over the whole
text: they run on texts up to SMALL characters (prompts, snippets, pages),
not on multi-megabyte tool results — a documented limit (docs/inbound.md).
"""

from __future__ import annotations

import base64
import binascii
import re

SMALL = 256 * 1024
_LETTERS = re.compile(r"[A-Za-z]{3}")
_BIN = re.compile(r"(?:[01]{8}[ \t,]{0,3}){4,}")
_B32 = re.compile(r"(?<![A-Za-z2-7])[A-Z2-7]{16,}={0,6}")
_HEX = re.compile(r"(?<![0-9A-Fa-f])(?:0x)?[0-9A-Fa-f]{16,}(?![0-9A-Fa-f])")
_A85 = re.compile(r"<~[!-u\s]{4,65536}?~>")
_B85 = re.compile(r"(?<![0-9A-Za-z!#$%&()*+\-;<=>?@^_`{|}~])[0-9A-Za-z!#$%&()*+\-;<=>?@^_`{|}~]{20,}")
_SPACED = re.compile(r"\b(?:[A-Za-z][ .\-_]){3,}[A-Za-z]\b")


def _text(raw: bytes | None) -> str | None:
    if not raw:
        return None
    text = raw.decode("utf-8", "replace")
    printable = sum(1 for c in text if c.isprintable() or c in "\t\r\n")
    if printable < 0.85 * len(text) or not _LETTERS.search(text):
        return None
    return text


def _try(fn, data: str) -> str | None:  # type: ignore[no-untyped-def]
    try:
        return _text(fn(data))
    except (binascii.Error, ValueError):
        return None


def decoded_runs(text: str, data: bytes) -> list[str]:
    """Decoded texts hidden in ``text`` (``data``: its UTF-8, or its lead-byte copy
    tcg.inbound.utf8.ascii_proxy: every other character a byte above 0x7F in both, so
    the same base64 runs, one byte per character)."""
    from tcg.detect.encoded import encoded_runs

    out = [d.decode("utf-8", "replace") for _s, _e, d in encoded_runs(data)]
    if len(text) > SMALL:
        return out
    for m in _BIN.finditer(text):
        bits = re.sub(r"[^01]", "", m.group(0))
        out.append(_try(lambda b: bytes(int(b[i:i + 8], 2) for i in range(0, len(b) - 7, 8)), bits) or "")
    for m in _B32.finditer(text):
        run = m.group(0)
        out.append(_try(lambda r: base64.b32decode(r + "=" * (-len(r) % 8)), run.rstrip("=")) or "")
    for m in _HEX.finditer(text):
        run = m.group(0).removeprefix("0x")
        out.append(_try(lambda r: bytes.fromhex(r[: len(r) // 2 * 2]), run) or "")
    for m in _A85.finditer(text):
        out.append(_try(lambda r: base64.a85decode(r, adobe=True), m.group(0)) or "")
    for m in _B85.finditer(text):
        out.append(_try(base64.b85decode, m.group(0)) or "")
    if _SPACED.search(text):  # the whole text with each spaced-out word closed up
        out.append(_SPACED.sub(lambda m: re.sub(r"[ .\-_]", "", m.group(0)), text))
    if _LETTERS.search(text):
        out.append(text[::-1])
    return [t for t in out if t]
