"""What the detector reports, and how overlapping candidates become that report.

A finding is a span and a rule id, never the value. Both engines produce the same
candidates (tcg.detect.engine); which of them win where they overlap is a rule of
its own (secrets before personal data before references, then position, then rule
order), kept beside the type it produces rather than inside the matching loop.
"""

from __future__ import annotations

from tcg.record import Record

_CONT = bytes(range(0x80, 0xC0))


class Finding(Record, fields="start end rule_id category encoding", defaults=("",)):
    """A detected span: byte offsets, the rule and its category, and ``encoding`` ("" = a
    direct hit; "base64" = the span is an encoded run hiding rule_id). There is
    deliberately no field that could hold the value. A Record, not a dataclass: the
    dataclasses import (inspect, ast, dis, tokenize) was a large share of `tcg scan`'s
    start-up."""

    __slots__ = ()

    start: int
    end: int
    rule_id: str
    category: str
    encoding: str


CATEGORY_ORDER = ("secret", "pii", "reference")


def resolve(cands: list[tuple[int, int, int, Finding]]) -> list[Finding]:
    """Sorted, non-overlapping findings.

    Categories are resolved in the order secret, pii, reference: a candidate
    that overlaps a kept finding of an earlier category is dropped (an e-mail
    regex swallowing ``token@host`` must not hide the token). Within a category
    the leftmost, then longest, then first rule wins; a candidate sticking out
    of a kept span is clipped, so the union of the category's candidates stays
    covered.
    """
    if not cands:
        return []
    from bisect import bisect_left  # with the first candidate: most scanned blobs have none

    cands.sort(key=lambda t: (t[0], t[1], t[2]))
    kept: list[Finding] = []
    for cat in CATEGORY_ORDER:
        starts = [f.start for f in kept]
        ends = [f.end for f in kept]
        added: list[Finding] = []
        last_end = -1
        for _s, _neg, _idx, f in cands:
            if f.category != cat or f.end <= last_end:
                continue
            i = bisect_left(starts, f.end) - 1
            if i >= 0 and ends[i] > f.start:
                continue  # overlaps a finding of a more important category
            if f.start < last_end:
                f = Finding(last_end, f.end, f.rule_id, f.category, f.encoding)
            added.append(f)
            last_end = f.end
        kept = sorted(kept + added, key=lambda f: f.start)
    return kept


def unresolved(cands: list[tuple[int, int, int, Finding]]) -> list[Finding]:
    cands.sort(key=lambda t: (t[0], t[1], t[2]))
    seen: set[Finding] = set()
    out = []
    for t in cands:
        if t[3] not in seen:
            seen.add(t[3])
            out.append(t[3])
    return out


def char_index(data: bytes, b: int, *, ceil: bool) -> int:
    """str index of byte offset ``b`` in UTF-8 ``data`` (rounded to a whole character)."""
    count = len(data[:b].translate(None, _CONT))
    mid = b < len(data) and data[b] in _CONT
    return count if (ceil or not mid) else count - 1
