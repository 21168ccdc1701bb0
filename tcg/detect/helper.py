"""One helper thread that runs a single call beside the caller.

hyperscan releases the GIL while it scans, so on a multi-core machine one
database can scan a buffer while the caller's thread scans it with another
(Detector._scan). Built on ``_thread`` locks: a queue or an executor costs more
per hand-over (the masker hands over a few times per megabyte) and more imports.
"""

from __future__ import annotations

import os

from tcg._lean.threads import allocate_lock, start_new_thread

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


class Helper:
    """Runs one call at a time on its own daemon thread, started on first use.

    ``start(fn)`` hands ``fn`` over; ``result()`` waits for it and returns its
    value or raises its exception. Callers pair every ``start`` with a
    ``result`` and serialise their use (Detector holds a lock around both). A
    forked child starts a thread of its own.
    """

    def __init__(self) -> None:
        self._pid = -1

    def _spawn(self) -> None:
        self._go = allocate_lock()
        self._go.acquire()
        self._done = allocate_lock()
        self._done.acquire()
        self._call: Callable[[], Any] | None = None
        self._result: tuple[Any, BaseException | None] = (None, None)
        self._pid = os.getpid()
        start_new_thread(self._loop, (self._go, self._done))

    def start(self, fn: Callable[[], Any]) -> None:
        if self._pid != os.getpid():
            self._spawn()  # first use, or a fork: the thread stayed in the parent
        self._call = fn
        self._go.release()

    def result(self) -> Any:
        self._done.acquire()
        value, exc = self._result
        self._result = (None, None)
        if exc is not None:
            raise exc
        return value

    def _loop(self, go: Any, done: Any) -> None:
        while True:
            go.acquire()
            try:
                self._result = (self._call(), None)  # type: ignore[misc]
            except BaseException as exc:  # noqa: BLE001 - handed back to the caller
                self._result = (None, exc)
            self._call = None
            done.release()
