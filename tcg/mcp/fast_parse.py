"""The MCP proxy's fast parse of a server line: one raw screen, then a Latin-1 parse.

The strict parse and the message shapes are tcg.jsonrpc's; this is the
proxy's shortcut for large responses (tcg.mcp.proxy), exact by the argument below.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from tcg.detect.encoded import MIN_RUN
from tcg.jsonrpc import Frame, classify, loads

# A server line is screened once over its raw bytes (hyperscan, ~1 ms for 5 MB)
# for facts that let the proxy parse it as Latin-1 instead of UTF-8: when the
# line is valid UTF-8 and holds no ``\u`` escape, every JSON string parsed from
# ``line.decode("latin-1")`` holds one character per byte of the real string's
# UTF-8 encoding (escapes \" \\ \/ \b \f \n \r \t decode to the same ASCII
# byte either way; structure, numbers and literals are ASCII), so
# ``s.encode("latin-1")`` is exactly ``real.encode("utf-8")`` — the bytes the
# masker scans — without building a UCS-2 copy of the frame and encoding it
# back. The parse succeeds or fails exactly as a UTF-8 parse would (same
# structure, same keys up to a bijection, same control-character rule).

_UTF8_VALID = (rb"\A(?:[\x00-\x7F]|[\xC2-\xDF][\x80-\xBF]|\xE0[\xA0-\xBF][\x80-\xBF]"
               rb"|[\xE1-\xEC\xEE\xEF][\x80-\xBF]{2}|\xED[\x80-\x9F][\x80-\xBF]"
               rb"|\xF0[\x90-\xBF][\x80-\xBF]{2}|[\xF1-\xF3][\x80-\xBF]{3}|\xF4[\x80-\x8F][\x80-\xBF]{2})+\z")
_FACT_UTF8, _FACT_U_ESCAPE, _FACT_TRIPLE_EQ, _FACT_RUN = range(4)
_SCREEN_PATTERNS = (
    (_FACT_UTF8, _UTF8_VALID),                      # the whole line is strict UTF-8 (RFC 3629)
    (_FACT_U_ESCAPE, rb"\\u"),                      # a \u escape (or \\u: conservative)
    (_FACT_TRIPLE_EQ, rb"==="),                      # "=" is never escaped (but by \u)
    (_FACT_RUN, rb"[A-Za-z0-9+/_\-]{%d}|\\/" % MIN_RUN),  # a base64-run seed, or \/ that may join two
)


@dataclass(frozen=True)
class RawFacts:
    """What the screen found in one raw line (conservative: True may be a false alarm)."""

    utf8: bool
    u_escape: bool
    triple_eq: bool
    run: bool


class RawScreen:
    """One hyperscan pass over a raw line; ``None`` from :meth:`scan` means
    "unavailable" (no hyperscan), and callers then take the ordinary path."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._db: Any = None
        try:
            import hyperscan

            db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
            db.compile(expressions=[p for _, p in _SCREEN_PATTERNS],
                       ids=[i for i, _ in _SCREEN_PATTERNS], elements=len(_SCREEN_PATTERNS),
                       flags=[hyperscan.HS_FLAG_SINGLEMATCH] * len(_SCREEN_PATTERNS))
            self._db = db
        except Exception:  # noqa: BLE001 - no hyperscan (or it failed): no fast path
            self._db = None

    @property
    def available(self) -> bool:
        return self._db is not None

    def scan(self, line: bytes) -> RawFacts | None:
        if self._db is None or not line:
            return None
        seen: set[int] = set()

        def on_match(rid: int, _f: int, _t: int, _fl: int, _c: Any) -> None:
            seen.add(rid)

        with self._lock:
            self._db.scan(line, match_event_handler=on_match)
        return RawFacts(_FACT_UTF8 in seen, _FACT_U_ESCAPE in seen, _FACT_TRIPLE_EQ in seen, _FACT_RUN in seen)


def parse_latin1(line: bytes) -> Frame | None:
    """Parse a line the screen found to be UTF-8 without ``\\u`` escapes as Latin-1
    (see above). Every string of the result is the Latin-1 view of its UTF-8
    bytes. None when the line is not a valid JSON-RPC message: the caller then
    takes the ordinary path, which gives the exact verdict."""
    try:
        obj = loads(line.decode("latin-1"))
    except (ValueError, RecursionError):  # FrameError is a ValueError
        return None
    kind, problem = classify(obj)
    if problem:
        return None
    return Frame(kind, obj, problem)


def from_latin1(value: Any) -> Any:
    """The real value (strings UTF-8-decoded, keys too) of a value taken from a Latin-1
    parse. Each string is valid UTF-8 on its own: the line is, and a string's bytes
    end at ASCII quotes (escapes decode to ASCII)."""
    if isinstance(value, str):
        return value if value.isascii() else value.encode("latin-1").decode("utf-8")
    if isinstance(value, list):
        return [from_latin1(v) for v in value]
    if isinstance(value, dict):
        return {from_latin1(k): from_latin1(v) for k, v in value.items()}
    return value
