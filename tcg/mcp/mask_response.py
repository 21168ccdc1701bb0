"""Server → client masking: every string field of a message, structure kept.

Covers whatever the server sends (results of tools/call, resources/read,
prompts/get, tools/list descriptions, structuredContent, error messages,
notifications such as progress/logging, and server→client requests such as
sampling/createMessage). Only the envelope (``jsonrpc``, ``id``, ``method``)
is left alone. Object keys are masked too.

Per string (as UTF-8 bytes):
1. a string that *is* base64 (``blob``/``data`` fields: images, resources) is
   decoded whole, any length. Decoded text is scanned for secrets and personal data
   (with the engine's own nested base64 pass); decoded binary, and the content of a
   media item (``mimeType`` ``image/*``, ``audio/*``, ``video/*``), only for secrets:
   an e-mail-shaped run of random bytes in a PNG is not personal data, and replacing
   the image would break it. A hit replaces the field with the base64 of the
   placeholder, so it stays decodable; otherwise the field is returned untouched;
2. every maximal base64/base64url run of >= MIN_RUN characters inside text is
   decoded (short runs must decode to mostly printable text, as in the
   engine's tcg.detect.encoded; runs longer than the engine's MAX_RUN are
   decoded whatever they hold, with the same text/binary rule as 1) and a run
   hiding a secret (or, in text, personal data) is replaced as a whole by the
   placeholder;
3. the engine's findings on the rest are replaced by the masker's placeholders
   (``<SECRET:rule-id:h8>``, h8 of the same value bytes), identical to every
   other surface. Strings with anything the masker's clean view drops or
   rewrites (controls such as NUL, ANSI, backspace, CR, invisible format
   characters such as U+200B) or a private-key block go through the streaming
   masker itself (tcg.mask).

Runs are located with one ``bytes.translate`` + ``bytes.find`` instead of a
regex tried at every offset: that keeps a 30 MB text field to one fast pass.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Container
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tcg.detect.encoded import MAX_RUN, MIN_RUN, decode_base64, decode_run, printable
from tcg.leanjson import strings_in
from tcg.mask.masker import MASKED_CATEGORIES, Masker, placeholder
from tcg.mask.view import VIEW_REWRITES

if TYPE_CHECKING:
    from tcg.detect.engine import Detector
    from tcg.keyhash import KeyedHasher
    from tcg.mcp.fast_parse import RawFacts

ENVELOPE = frozenset({"jsonrpc", "id", "method"})
MEDIA_TYPES = ("image/", "audio/", "video/")
_MEDIA_FIELDS = frozenset({"data", "blob"})
_SECRETS_ONLY: Container[str] = frozenset({"secret"})
_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-"
_RUN_MAP = bytes(0x61 if i in _ALPHABET else 0x20 for i in range(256))  # alphabet → "a", rest → " "
_RUN_NEEDLE = b"a" * MIN_RUN
_WHOLE_BLOB = re.compile(rb"[A-Za-z0-9+/_\-\r\n]+={0,2}\s*")
_SEP = b"\n\x00\n"  # between joined strings: ends every token, word and base64 run


@dataclass
class MaskStats:
    """What one message needed: counts and rule ids only, never values."""

    spans: int = 0
    rules: set[str] = field(default_factory=set)

    def add(self, rule_id: str, n: int = 1) -> None:
        self.spans += n
        self.rules.add(rule_id)


def decode_blob(run: bytes) -> bytes | None:
    """Decode base64 or base64url (padding and line breaks optional), or None."""
    return decode_base64(re.sub(rb"\s+", b"", run))


def base64_runs(data: bytes) -> list[tuple[int, int]]:
    """[start, end) of every maximal base64-alphabet run of >= MIN_RUN bytes (plus ``=`` padding)."""
    mapped = data.translate(_RUN_MAP)
    out: list[tuple[int, int]] = []
    pos = 0
    n = len(data)
    while True:
        s = mapped.find(_RUN_NEEDLE, pos)
        if s < 0:
            return out
        e = mapped.find(b" ", s + MIN_RUN)
        e = n if e < 0 else e
        pad = 0
        while pad < 2 and e < n and data[e] == 0x3D:  # "=" padding belongs to the run
            e += 1
            pad += 1
        out.append((s, e))
        pos = e




class ResponseMasker:
    """Masks parsed server messages (returns a new object; the input is untouched)."""

    def __init__(self, detector: Detector, hasher: KeyedHasher):
        self.detector = detector
        self.hasher = hasher
        self._block_rules = frozenset(getattr(detector, "block_rules", {}) or {})

    # ------------------------------------------------------------ strings

    def _hit(self, raw: bytes, nested: bool, categories: Container[str] = MASKED_CATEGORIES
             ) -> tuple[str, str] | None:
        """(rule_id, category) of the secret (preferred) or PII in decoded bytes."""
        found = [f for f in self.detector.find_bytes(raw, decode=nested) if f.category in categories]
        if not found:
            return None
        best = min(found, key=lambda f: (f.category != "secret", f.start))
        return best.rule_id, best.category

    def _decoded_hit(self, raw: bytes, media: bool) -> tuple[str, str] | None:
        """What a decoded base64 payload hides: text is scanned like any text (nested base64
        included); binary, and any media payload, only for secrets."""
        if media or not printable(raw):
            return self._hit(raw, nested=False, categories=_SECRETS_ONLY)
        return self._hit(raw, nested=True)

    def _placeholder(self, hit: tuple[str, str], value: bytes, stats: MaskStats) -> bytes:
        stats.add(hit[0])
        return placeholder(hit[1], hit[0], self.hasher.h8(value))

    def _whole_blob(self, data: bytes, stats: MaskStats, media: bool
                    ) -> tuple[bytes | None, Container[str]]:
        """(the field with its decoded content masked, or None; the categories the rest
        of the passes look for). A field that decodes to binary, or is a media payload,
        is an encoding of bytes, not text: personal data cannot be read off its base64
        characters, so the other passes then look for secrets only (the field itself may
        be a token, ghp_…)."""
        raw = decode_blob(data)
        if raw is None:
            return None, MASKED_CATEGORIES
        hit = self._decoded_hit(raw, media) if raw else None
        if hit is None:
            return None, _SECRETS_ONLY if media or not printable(raw) else MASKED_CATEGORIES
        ph = self._placeholder(hit, data, stats)
        url = b"-" in data or b"_" in data
        return (base64.urlsafe_b64encode(ph) if url else base64.b64encode(ph)), MASKED_CATEGORIES

    def _mask_runs(self, data: bytes, stats: MaskStats,
                   categories: Container[str] = MASKED_CATEGORIES) -> bytes:
        out = bytearray()
        pos = 0
        for s, e in base64_runs(data):
            run = data[s:e]
            if e - s > MAX_RUN:
                raw = decode_blob(run)
                hit = self._decoded_hit(raw, media=categories is _SECRETS_ONLY) if raw else None
            else:
                raw = decode_run(run)
                hit = self._hit(raw, nested=False, categories=categories) if raw else None
            if hit is None:
                continue
            out += data[pos:s]
            out += self._placeholder(hit, run, stats)
            pos = e
        if not pos:
            return data
        out += data[pos:]
        return bytes(out)

    def mask_bytes(self, data: bytes, stats: MaskStats, *, media: bool = False) -> bytes:
        """Mask one string's UTF-8 bytes (see the module doc for the passes). ``media``:
        the ``data``/``blob`` field of an image, audio or video item."""
        categories: Container[str] = MASKED_CATEGORIES
        if len(data) >= MIN_RUN and _WHOLE_BLOB.fullmatch(data):
            whole, categories = self._whole_blob(data, stats, media)
            if whole is not None:
                return whole
        data = self._mask_runs(data, stats, categories)
        if categories is MASKED_CATEGORIES and VIEW_REWRITES.search(data):
            # the masker matches what a terminal would show (a backspace erases, ANSI is
            # skipped), but a model reads the raw string: mask what the raw bytes hold too
            return self._replace_findings(self._masker(data, stats), stats)
        return self._replace_findings(data, stats, categories)

    def _replace_findings(self, data: bytes, stats: MaskStats,
                          categories: Container[str] = MASKED_CATEGORIES) -> bytes:
        found = [f for f in self.detector.find_bytes(data) if f.category in categories]
        if not found:
            return data
        if any(f.rule_id in self._block_rules for f in found):
            return self._masker(data, stats)  # key blocks: the masker's own block hashing
        # The replacement the strict masker makes on a whole clean stream
        # (resolved, non-overlapping findings; h8 of the value bytes), without
        # its streaming machinery.
        out = bytearray()
        pos = 0
        for f in found:
            out += data[pos:f.start]
            out += self._placeholder((f.rule_id, f.category), data[f.start:f.end], stats)
            pos = f.end
        out += data[pos:]
        return bytes(out)

    def mask_string(self, s: str, stats: MaskStats, *, media: bool = False) -> str:
        data = s.encode("utf-8", "surrogatepass")
        out = self.mask_bytes(data, stats, media=media)
        return s if out is data else out.decode("utf-8", "surrogatepass")

    def _masker(self, data: bytes, stats: MaskStats) -> bytes:
        """The streaming masker (ANSI/backspace-aware view, key blocks)."""
        m = Masker(self.detector, self.hasher, "strict")
        out = m.feed(data) + m.flush()
        if m.count:
            stats.spans += m.count
            stats.rules.update(m.rules_seen)
        return out

    # ------------------------------------------------------------ messages

    def _walk(self, node: Any, stats: MaskStats) -> Any:
        if isinstance(node, str):
            return self.mask_string(node, stats)
        if isinstance(node, list):
            return [self._walk(v, stats) for v in node]
        if isinstance(node, dict):
            mime = node.get("mimeType")
            media = isinstance(mime, str) and mime.lower().startswith(MEDIA_TYPES)
            out: dict[str, Any] = {}
            for k, v in node.items():
                nk = self.mask_string(k, stats)
                if nk in out:  # two keys masked to the same placeholder: keep both apart
                    nk = f"{nk}#{len(out)}"
                if media and k in _MEDIA_FIELDS and isinstance(v, str):
                    out[nk] = self.mask_string(v, stats, media=True)
                else:
                    out[nk] = self._walk(v, stats)
            return out
        return node

    def _needs_own_pass(self, data: bytes, triple_eq: bool = True) -> bool:
        """True when a string needs more than the joined scan: rewrites for the
        streaming masker's view, a whole-field base64 blob that decode_run would not
        decode (binary, or longer than MAX_RUN), or odd padding (``===``; not looked
        for when ``triple_eq`` is False: the caller has ruled it out)."""
        if VIEW_REWRITES.search(data) or (triple_eq and b"===" in data):
            return True
        if len(data) < MIN_RUN:
            return False
        if _WHOLE_BLOB.fullmatch(data):
            return len(data) > MAX_RUN or decode_run(data.strip()) is None
        return False  # runs over MAX_RUN inside text: is_clean sees them in the joined scan

    def is_clean(self, message: dict[str, Any]) -> bool:
        """Fast path: one engine scan over all strings joined by a separator that no
        rule spans; no candidate at all means no single string has one either."""
        parts = [string.encode("utf-8", "surrogatepass")
                 for k, v in message.items() if k not in ENVELOPE for string in strings_in(v)]
        return self._parts_clean(parts, triple_eq=True, runs=True)

    def is_clean_latin1(self, message: dict[str, Any], facts: RawFacts) -> bool:
        """:meth:`is_clean` for a message parsed by ``fast_parse.parse_latin1`` from a line
        with the screen's ``facts``: each string's Latin-1 encoding is its real UTF-8
        bytes, so nothing is re-encoded. ``===`` anywhere in the line fails it; the
        base64 pass is skipped when the line has no 24-byte alphabet run and no
        ``\\/`` escape (other escapes decode to bytes outside the alphabet, so
        then no string holds a run either)."""
        if facts.triple_eq or facts.u_escape or not facts.utf8:
            return False
        parts = [string.encode("latin-1")
                 for k, v in message.items() if k not in ENVELOPE for string in strings_in(v)]
        return self._parts_clean(parts, triple_eq=False, runs=facts.run)

    def _parts_clean(self, parts: list[bytes], *, triple_eq: bool, runs: bool) -> bool:
        if any(self._needs_own_pass(data, triple_eq) for data in parts):
            return False
        if not parts:
            return True
        joined = _SEP.join(parts)
        if any(f.category in MASKED_CATEGORIES for f in self.detector.find_bytes(joined, overlapping=True)):
            return False
        if not runs:
            return True
        # the base64 pass, located with translate+find (the same runs mask_bytes decodes)
        for s, e in base64_runs(joined):  # the separator ends every run: same runs as per string
            if e - s > MAX_RUN:
                return False  # decoded whatever it holds by mask_bytes, not by decode_run
            raw = decode_run(joined[s:e])
            if raw and any(f.category in MASKED_CATEGORIES
                           for f in self.detector.find_bytes(raw, overlapping=True)):
                return False
        return True

    def mask_message(self, message: dict[str, Any], *, scanned: bool = False) -> tuple[dict[str, Any], MaskStats]:
        """(masked copy, stats). The envelope keys are kept verbatim. ``scanned``: the
        caller's is_clean_latin1 already failed it, so the joined scan is not repeated."""
        stats = MaskStats()
        if not scanned and self.is_clean(message):
            return message, stats
        out: dict[str, Any] = {}
        for k, v in message.items():
            out[k] = v if k in ENVELOPE else self._walk(v, stats)
        return out, stats
