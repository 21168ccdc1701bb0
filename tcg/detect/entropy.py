"""Shannon entropy of a candidate value, the floor for generic rules."""

from __future__ import annotations

import math


def shannon_entropy(value: bytes | str) -> float:
    """Bits per symbol of ``value`` (0.0 for empty input)."""
    if not value:
        return 0.0
    n = len(value)
    # the counts in first-occurrence order (as Counter gives them, so the float sum
    # is the same), but counted in C: dict.fromkeys + one count() per distinct symbol
    return -sum((c / n) * math.log2(c / n) for c in map(value.count, dict.fromkeys(value)))
