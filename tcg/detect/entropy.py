"""Shannon entropy of a candidate value, the floor for generic rules."""

from __future__ import annotations

import math
from collections import Counter
from functools import lru_cache
from itertools import repeat


@lru_cache(maxsize=1 << 14)
def _term(c: int, n: int) -> float:
    p = c / n
    return p * math.log2(p)


def shannon_entropy(value: bytes | str) -> float:
    """Bits per symbol of ``value`` (0.0 for empty input)."""
    if not value:
        return 0.0
    n = len(value)
    # the counts in first-occurrence order, counted in C (Counter), and the same terms
    # summed in the same order as ever (so the float result is bit-identical), each
    # computed once per (count, length)
    return -sum(map(_term, Counter(value).values(), repeat(n)))
