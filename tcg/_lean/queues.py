"""The C queue ``queue.SimpleQueue`` is (see tcg._lean): ``queue`` imports threading."""

from __future__ import annotations

from _queue import Empty, SimpleQueue

__all__ = ["Empty", "SimpleQueue"]
