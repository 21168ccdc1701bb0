"""``itemgetter`` from the C module itself: ``operator`` only re-exports it (see tcg._lean)."""

from __future__ import annotations

try:
    from _operator import itemgetter
except ImportError:  # pragma: no cover - an interpreter without it
    from operator import itemgetter

__all__ = ["itemgetter"]
