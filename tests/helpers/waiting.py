"""Waiting on a condition instead of sleeping a fixed time: the machine running the
tests may be slow, so each wait polls until it holds or a generous timeout passes."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(cond: Callable[[], T], timeout: float = 60.0, what: object = "condition",
             interval: float = 0.05) -> T:
    """Poll ``cond`` every ``interval`` s until it returns something truthy (returned),
    or fail after ``timeout`` s naming ``what`` (a text, or a callable that says it)."""
    deadline = time.monotonic() + timeout
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for "
                                 f"{what() if callable(what) else what}")
        time.sleep(interval)
