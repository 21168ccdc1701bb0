"""Shannon entropy of a candidate value, the floor for generic rules."""

from __future__ import annotations

import math
from collections import Counter


def shannon_entropy(value: bytes | str) -> float:
    """Bits per symbol of ``value`` (0.0 for empty input)."""
    if not value:
        return 0.0
    n = len(value)
    return -sum((c / n) * math.log2(c / n) for c in Counter(value).values())
