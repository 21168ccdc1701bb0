"""The runner's platform interface: bytes in, bytes out, an exit code at the end.

Platform adapters (``posix.py``, ``windows.py``) implement :class:`PtyChild`;
neither ptyprocess-style nor pywinpty objects escape their adapter. The copy
loop only sees file descriptors / bytes and an :class:`OutputFilter`.
"""

from __future__ import annotations

import os

from tcg.errors import ExitCode

# The OS helpers (and SpawnError) live in tcg.osutil, below every package; the names
# stay importable from here for the session and the launcher, which import them from
# tcg.runner.base today (their owners move those imports).
from tcg.osutil import (  # noqa: F401
    F_SETPIPE_SZ,
    PIPE_SIZE,
    SpawnError,
    fd_identity,
    grow_pipe,
    which,
    write_all,
)

# The interfaces below are typing Protocols for checkers; at run time they are
# plain classes, because importing typing costs ~3 ms of every mediated command.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Protocol
else:
    Protocol = object

# Exit codes of a mediated run (docs/cli.md): the child's own, 128+N for a
# signal, 126 when policy blocks, 127 when the command cannot be started.
EXIT_BLOCKED = ExitCode.BLOCKED
EXIT_NOT_FOUND = ExitCode.NOT_FOUND
EXIT_USAGE = ExitCode.USAGE
SIGNAL_BASE = ExitCode.SIGNAL_BASE


class OutputFilter(Protocol):
    """What the runner needs from the masker (``tcg.mask.Masker``).

    ``feed`` returns the bytes that are safe to show now; ``flush`` releases
    everything at end of stream. Terminal mode may hold a possible-secret tail
    until ``idle_deadline()`` (monotonic seconds; None when nothing is held),
    at which point the loop calls ``release_idle``. The deadline may change
    only through ``feed``/``release_idle``/``flush``: the loops ask for it after
    those calls, not on every iteration.
    """

    def feed(self, data: bytes) -> bytes: ...

    def flush(self) -> bytes: ...

    def release_idle(self) -> bytes: ...

    def idle_deadline(self) -> float | None: ...


class IdentityFilter:
    """Pass-through filter: for the runner's own tests and benchmarks (the
    station always masks)."""

    def feed(self, data: bytes) -> bytes:
        return data

    def flush(self) -> bytes:
        return b""

    def release_idle(self) -> bytes:
        return b""

    def idle_deadline(self) -> float | None:
        return None


class PtyChild(Protocol):
    """A child process attached to a pseudo-terminal (one per platform adapter)."""

    pid: int

    @property
    def fd(self) -> int:
        """The master side, readable/writable, selectable on POSIX."""
        ...

    def set_size(self, rows: int, cols: int) -> None:
        """Propagate a window size change (the child gets SIGWINCH)."""
        ...

    def poll(self) -> int | None:
        """Reap without blocking: the exit code (128+N for a signal), else None."""
        ...

    def wait(self) -> int:
        """Block until the child exits; return its exit code."""
        ...

    def send_signal(self, sig: int) -> None:
        """Deliver ``sig`` to the child's process group (best effort)."""
        ...

    def close(self) -> None:
        """Release the master side."""
        ...


def exit_code_from_status(status: int) -> int:
    """waitpid status → shell-style exit code (signal N → 128+N)."""
    code = os.waitstatus_to_exitcode(status)
    return SIGNAL_BASE - code if code < 0 else code


class LazyFilter:
    """Builds the real filter on the first output byte.

    Building the masker means loading the detector (hundreds of ms today); a
    command that prints nothing (cd, mkdir, cp, true) should not pay for it.
    If the build fails, the output is withheld (never shown unmasked) and
    ``error`` records why; the station reports it after the run.
    """

    def __init__(self, factory: Callable[[], OutputFilter]):
        self._factory = factory
        self._inner: OutputFilter | None = None
        self.error: BaseException | None = None

    @property
    def built(self) -> bool:
        return self._inner is not None

    def _get(self) -> OutputFilter | None:
        if self._inner is None and self.error is None:
            try:
                self._inner = self._factory()
            except Exception as exc:  # noqa: BLE001 - fail closed: withhold output
                self.error = exc
        return self._inner

    def feed(self, data: bytes) -> bytes:
        inner = self._get()
        return inner.feed(data) if inner is not None else b""

    def flush(self) -> bytes:
        return self._inner.flush() if self._inner is not None else b""

    def release_idle(self) -> bytes:
        return self._inner.release_idle() if self._inner is not None else b""

    def idle_deadline(self) -> float | None:
        return self._inner.idle_deadline() if self._inner is not None else None


def read_burst(fd: int, cap: int) -> bytes | None:
    """Read what ``fd`` (non-blocking) holds now, up to ``cap`` bytes.

    The masker costs a fixed amount per call on top of its per-byte cost
    (~40 µs per feed; 70 MB/s in 4 KiB feeds, ~190 MB/s in 64 KiB ones), so
    bytes that are already waiting are collected into one chunk; nothing is
    waited for, so interactive latency is unchanged. (Pipe mode; the PTY loop
    batches on its reader thread instead, see ``tcg.runner.master_reader``.)

    Returns None when nothing was ready, b"" at end of file (EIO on a PTY
    master whose slave is closed). An error after some data is left for the
    next call, which reports it.
    """
    import errno

    chunks: list[bytes] = []
    total = 0
    while total < cap:
        try:
            data = os.read(fd, cap - total)
        except BlockingIOError:
            break
        except OSError as exc:
            if chunks:
                break
            if exc.errno == errno.EIO:
                return b""
            raise
        if not data:
            if chunks:
                break
            return b""
        chunks.append(data)
        total += len(data)
    if not chunks:
        return None
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)
