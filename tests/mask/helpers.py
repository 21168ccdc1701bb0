"""Shared helpers for the masker tests (real detector, fixed test key)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from tcg.detect.engine import Detector, load_detector
from tcg.keyhash import KeyedHasher
from tcg.mask import Masker

KEY = bytes(range(32))
PLACEHOLDER = re.compile(rb"<(?:SECRET|PII):[a-z0-9-]+:[0-9a-f]{8}>")


@functools.lru_cache(maxsize=1)
def detector() -> Detector:
    return load_detector()


def hasher() -> KeyedHasher:
    return KeyedHasher(KEY)


def masker(mode: str = "strict", hold_ms: int = 500, cut_off_tails: bool = False) -> Masker:
    return Masker(detector(), hasher(), mode, hold_ms, cut_off_tails=cut_off_tails)


def run(data: bytes, sizes: Iterable[int] = (), mode: str = "strict", *, idle: bool = False,
        cut_off_tails: bool = False) -> bytes:
    """Feed ``data`` in chunks of ``sizes`` (the rest in one chunk), then flush.
    ``idle``: call release_idle() after every chunk (as if output paused there)."""
    m = masker(mode, cut_off_tails=cut_off_tails)
    out = bytearray()
    i = 0
    for n in sizes:
        if i >= len(data):
            break
        out += m.feed(data[i : i + n])
        if idle:
            out += m.release_idle()
        i += n
    out += m.feed(data[i:])
    out += m.flush()
    return bytes(out)


def whole(data: bytes) -> bytes:
    return run(data)


def slices(value: bytes, k: int = 8) -> list[bytes]:
    """Every k-byte slice of a value (the leak unit the tests look for)."""
    if len(value) <= k:
        return [value]
    return [value[i : i + k] for i in range(len(value) - k + 1)]


def strip_placeholders(out: bytes) -> bytes:
    return PLACEHOLDER.sub(b"\x00", out)


def leaks(out: bytes, needles: Iterable[bytes]) -> list[bytes]:
    """The needles found in ``out`` once placeholders are removed."""
    clean = strip_placeholders(out)
    return [n for n in needles if n in clean]


@dataclass(frozen=True)
class Plant:
    rule_id: str
    text: bytes  # the rule's examples.match string
    values: tuple[bytes, ...]  # spans the detector reports in it (secret/PII)
    needles: tuple[bytes, ...]  # 8-byte slices of the values that must never be output
    context: bytes = b""  # the example with its values blanked
    rules: tuple[str, ...] = ()  # rule id of each value

    def __repr__(self) -> str:  # keep hypothesis reports free of the fake values
        return f"Plant({self.rule_id})"


@functools.lru_cache(maxsize=1)
def plants() -> tuple[Plant, ...]:
    """A plant for every match example of every secret/PII rule.

    Values are what the detector reports in the example (whichever rule wins
    an overlap); needles are their 8-byte slices minus those that also occur
    in the example's own context (``Private-`` in a PuTTY file). An example
    whose value is shorter than 8 bytes is used for its values only.
    """
    from tcg.detect.rule import load_rules  # the detector's rules carry no examples

    d = detector()
    active = {r.id for r in d.rules}
    out = []
    for rule in load_rules():
        if rule.category not in ("secret", "pii") or rule.id not in active:
            continue
        for ex in rule.examples_match:
            data = ex.encode("utf-8")
            fs = [f for f in d.find_bytes(data) if f.category in ("secret", "pii")]
            if not fs:
                continue
            context = bytearray(data)
            for f in fs:
                context[f.start : f.end] = b"\x00" * (f.end - f.start)
            vals = tuple(data[f.start : f.end] for f in fs)
            needles = tuple(sorted({n for v in vals if len(v) >= 8 for n in slices(v)
                                    if n not in context}))
            if needles:
                out.append(Plant(rule.id, data, vals, needles, bytes(context),
                                 tuple(f.rule_id for f in fs)))
    return tuple(out)


def needles_of(chosen: Iterable[Plant]) -> list[bytes]:
    """Needles of several plants, minus slices that another plant shows as context."""
    chosen = list(chosen)
    contexts = b"\x00".join(p.context for p in chosen)
    return sorted({n for p in chosen for n in p.needles if n not in contexts})
