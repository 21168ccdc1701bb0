"""Server → client masking: every string field of a message, structure kept.

Covers whatever the server sends (results of tools/call, resources/read,
prompts/get, tools/list descriptions, structuredContent, error messages,
notifications such as progress/logging, and server→client requests such as
sampling/createMessage). Only the envelope (``jsonrpc``, ``id``, ``method``)
is left alone. Object keys are masked too.

Per string:
1. base64 runs longer than the engine's encoded-run bound (tcg.detect.encoded
   MAX_RUN) — image/blob payloads — are decoded here and scanned (with the
   engine's own nested base64 pass). A hit replaces the run as a whole: a
   string that *is* the run (``blob``, ``data`` fields) becomes the base64 of
   the placeholder, so the field stays decodable; a run inside text becomes
   the placeholder itself.
2. the rest goes through the streaming masker (tcg.mask, strict mode, base64
   pass on), so placeholders are identical to every other surface. A cheap
   ``Detector.find`` gate skips the masker for strings with nothing to mask.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tcg.detect.encoded import MAX_RUN
from tcg.mask.masker import MASKED_CATEGORIES, Masker, placeholder

if TYPE_CHECKING:
    from tcg.detect.engine import Detector
    from tcg.keyhash import KeyedHasher

ENVELOPE = frozenset({"jsonrpc", "id", "method"})
_MIN_LONG = MAX_RUN + 1
_LONG_RUN = re.compile(rf"[A-Za-z0-9+/_\-]{{{_MIN_LONG},}}={{0,2}}")
_MIME_BLOB = re.compile(rf"[A-Za-z0-9+/_\-\r\n]{{{_MIN_LONG},}}={{0,2}}\s*")
_MASKER_TRIGGERS = ("\x1b", "\b", "\r")  # the masker's view sees through these; find() does not


@dataclass
class MaskStats:
    """What one message needed: counts and rule ids only, never values."""

    spans: int = 0
    rules: set[str] = field(default_factory=set)

    def add(self, rule_id: str, n: int = 1) -> None:
        self.spans += n
        self.rules.add(rule_id)


def _decode_b64(run: str) -> bytes | None:
    body = re.sub(r"\s+", "", run).rstrip("=")
    std = "+" in body or "/" in body
    url = "-" in body or "_" in body
    if std and url:
        return None
    if len(body) % 4 == 1:
        body = body[:-1]
    if url:
        body = body.replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(body + "=" * (-len(body) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None


class ResponseMasker:
    """Masks parsed server messages in place-free fashion (returns a new object)."""

    def __init__(self, detector: Detector, hasher: KeyedHasher):
        self.detector = detector
        self.hasher = hasher

    # ------------------------------------------------------------ strings

    def _blob_finding(self, raw: bytes) -> tuple[str, str] | None:
        """(rule_id, category) of the first secret/PII in decoded blob bytes."""
        for f in self.detector.find_bytes(raw, decode=True):
            if f.category in MASKED_CATEGORIES:
                return f.rule_id, f.category
        return None

    def _mask_long_runs(self, s: str, stats: MaskStats) -> str:
        if len(s) <= MAX_RUN:
            return s
        whole = _MIME_BLOB.fullmatch(s)
        if whole:
            raw = _decode_b64(s)
            hit = self._blob_finding(raw) if raw is not None else None
            if hit is not None:
                stats.add(hit[0])
                ph = placeholder(hit[1], hit[0], self.hasher.h8(s.encode("ascii")))
                url = "-" in s or "_" in s
                enc = base64.urlsafe_b64encode(ph) if url else base64.b64encode(ph)
                return enc.decode("ascii")
            return s

        def sub(m: re.Match[str]) -> str:
            raw = _decode_b64(m.group(0))
            hit = self._blob_finding(raw) if raw is not None else None
            if hit is None:
                return m.group(0)
            stats.add(hit[0])
            return placeholder(hit[1], hit[0], self.hasher.h8(m.group(0).encode("ascii"))).decode("ascii")

        return _LONG_RUN.sub(sub, s)

    def mask_string(self, s: str, stats: MaskStats) -> str:
        s = self._mask_long_runs(s, stats)
        if not any(t in s for t in _MASKER_TRIGGERS):
            if not any(f.category in MASKED_CATEGORIES for f in self.detector.find(s, decode=True)):
                return s
        m = Masker(self.detector, self.hasher, "strict")
        data = s.encode("utf-8", "surrogatepass")
        out = (m.feed(data) + m.flush()).decode("utf-8", "surrogatepass")
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
            out: dict[str, Any] = {}
            for k, v in node.items():
                nk = self.mask_string(k, stats)
                if nk in out:  # two keys masked to the same placeholder: keep both apart
                    nk = f"{nk}#{len(out)}"
                out[nk] = self._walk(v, stats)
            return out
        return node

    def mask_message(self, message: dict[str, Any]) -> tuple[dict[str, Any], MaskStats]:
        """(masked copy, stats). The envelope keys are kept verbatim."""
        stats = MaskStats()
        out: dict[str, Any] = {}
        for k, v in message.items():
            out[k] = v if k in ENVELOPE else self._walk(v, stats)
        return out, stats
