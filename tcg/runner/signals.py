"""Signals as a select()-able pipe, and the timing constants both runners share.

Its own small module: pipe mode (every agent command) needs these but not the
PTY loop (tcg.runner.loop), which costs import time.
"""

from __future__ import annotations

import os

from tcg.osutil import signal  # the C module (see tcg.osutil)

# After the child is gone: stop once the master has been quiet this long.
DRAIN_IDLE = 0.1
# After forwarding SIGTERM/SIGHUP/SIGQUIT to the child: escalate to SIGKILL if it
# is still alive this long after (util-linux script does the same with 2 s).
KILL_GRACE = 3.0
ESCALATE = ("SIGTERM", "SIGHUP", "SIGQUIT")
FORWARDED = ("SIGTERM", "SIGHUP", "SIGINT", "SIGQUIT")
ESCALATE_SIGNALS = frozenset(getattr(signal, n) for n in ESCALATE if hasattr(signal, n))


class SignalPipe:
    """Signals delivered as bytes on a non-blocking pipe (``signal.set_wakeup_fd``).

    The handlers are no-ops: the wakeup byte is the whole message, so no Python
    code runs at an arbitrary point of the copy loop. Previous handlers and the
    previous wakeup fd are restored on exit.
    """

    def __init__(self, names: tuple[str, ...]):
        self.signals = [getattr(signal, n) for n in names if hasattr(signal, n)]
        self._old: dict[int, object] = {}
        self._old_fd = -1
        self.fd = -1
        self._w = -1

    def __enter__(self) -> SignalPipe:
        self.fd, self._w = os.pipe()
        os.set_blocking(self.fd, False)
        os.set_blocking(self._w, False)
        self._old_fd = signal.set_wakeup_fd(self._w, warn_on_full_buffer=False)
        for s in self.signals:
            self._old[s] = signal.signal(s, _noop)
        return self

    def read(self) -> list[int]:
        try:
            data = os.read(self.fd, 4096)
        except BlockingIOError:
            return []
        return list(data)

    def __exit__(self, *exc: object) -> None:
        for s, old in self._old.items():
            signal.signal(s, old)  # type: ignore[arg-type]
        signal.set_wakeup_fd(self._old_fd)
        os.close(self.fd)
        os.close(self._w)


def _noop(signum: int, frame: object) -> None:
    pass
