"""A key block's state in the streaming masker (tcg.mask.masker): a multi-line secret
(a PEM key, an OSC 52 payload too long to check) whose END has not been seen yet.
Kept apart from the masker so each module stays one screen of concerns; the masker
owns the stream, this module what it remembers while inside a block."""

from __future__ import annotations

import re
from collections import deque

from tcg._lean.reparse import parser as _p
from tcg.mask.view import OVERSIZE_RULE, SGR

TYPE_CHECKING = False  # typing costs ~9 ms of import before the first masked byte
if TYPE_CHECKING:
    from typing import Any

    from tcg.detect.engine import Detector

BLOCK_END_MAX = 512
SGR_KEEP = 32  # colour sequences kept per key block (see Colours)


def end_width(pattern: re.Pattern[bytes]) -> int:
    try:
        hi = _p.parse(pattern.pattern).getwidth()[1]
    except Exception:  # noqa: BLE001
        return BLOCK_END_MAX
    return min(int(hi), BLOCK_END_MAX)


def block_rule_ids(detector: Detector) -> frozenset[str]:
    """Ids of the rules that open a key block, without compiling their END patterns."""
    rules = getattr(detector, "rules", None)
    if rules is not None:
        ids = frozenset(r.id for r in rules if getattr(r, "block_end", None))
    else:
        ids = frozenset(getattr(detector, "block_rules", {}) or {})
    return ids | {OVERSIZE_RULE}  # a clipboard payload too long to check (tcg.mask.view)


class BlockState:
    """State while inside a key block whose END line has not been seen. (A plain
    class: the dataclasses import, with inspect, ast and dis behind it, cost ~7 ms
    of every masking process's start before its first byte.)"""

    __slots__ = ("rule_id", "category", "end_re", "start", "hashed", "search_from", "digest", "sgr")

    def __init__(self, rule_id: str, category: str, end_re: re.Pattern[bytes], start: int,
                 hashed: int, search_from: int, digest: Any) -> None:
        self.rule_id = rule_id
        self.category = category
        self.end_re = end_re
        self.start = start  # view offset of the block start
        self.hashed = hashed  # view offset up to which ``digest`` has been fed
        self.search_from = search_from  # view offset where the END search resumes
        self.digest = digest
        self.sgr = Colours()


class Colours:
    """The colour (SGR) sequences inside a key block's raw span, as written after its
    placeholder: the last reset and at most SGR_KEEP sequences after it. A streamed
    block is forgotten as it arrives, so this is kept incrementally with bounded
    memory, and a block found whole gets exactly the same summary (chunk invariance)."""

    def __init__(self) -> None:
        self.reset = b""
        self.codes: deque[bytes] = deque(maxlen=SGR_KEEP)

    def add(self, raw: bytes) -> None:
        for code in SGR.findall(raw):
            if not code[2:-1].strip(b"0;:"):  # ESC[m, ESC[0m, ESC[0;0m: all attributes off
                self.reset = code
                self.codes.clear()
            else:
                self.codes.append(code)

    def value(self) -> bytes:
        return self.reset + b"".join(self.codes)
