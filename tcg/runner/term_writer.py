"""The session masking process's terminal writer: masked output goes to the
terminal on a helper thread, so masking the next batch overlaps writing this one.

Why: a write to a terminal (a PTY slave, the user's emulator behind it) blocks
whenever the reader on the other side is behind, and a single-threaded masking
process then masks nothing meanwhile; masking (~0.45 s of CPU per 100 MB) and
the terminal write ran one after the other. ``os.write`` releases the GIL, so
a second thread that only writes lets the two run side by side.

Order is kept: one FIFO, one writer. A small chunk while nothing is queued or
being written (a keystroke's echo, a prompt) is written by the caller itself,
without a thread hop. Back-pressure: ``put`` waits while CAP bytes are queued
(a stopped terminal, Ctrl-S), so memory stays bounded and the station's pipe
fills as before. A write error (the terminal went away) is raised by the next
``put`` or by ``close``, which returns only once everything queued is written.
"""

from __future__ import annotations

from tcg._lean.threads import allocate_lock, start_new_thread
from tcg.osutil import write_all

CAP = 1 << 18  # bytes queued before put() waits: one read's worth keeps the overlap
SMALL = 1 << 12  # written by the caller when the writer is idle: no thread hop


class TerminalWriter:
    """Writes chunks to ``fd`` in order, on a helper thread (see the module)."""

    def __init__(self, fd: int, cap: int = CAP, small: int = SMALL):
        self.fd = fd
        self.cap = cap
        self.small = small
        self._chunks: list[bytes] = []
        self._queued = 0
        self._busy = False  # the thread holds a batch it is writing
        self._idle = False  # the thread waits on _have
        self._waiting = False  # put() waits on _room
        self._closing = False
        self._error: BaseException | None = None
        self._lock = allocate_lock()
        self._have = allocate_lock()
        self._have.acquire()
        self._room = allocate_lock()
        self._room.acquire()
        self._done = allocate_lock()
        self._done.acquire()
        start_new_thread(self._run, ())

    def put(self, data: bytes) -> None:
        """Write ``data`` after everything put before (now, or on the thread)."""
        if not data:
            return
        with self._lock:
            if self._error is not None:
                raise self._error
            direct = len(data) <= self.small and not self._chunks and not self._busy
            if not direct:
                self._chunks.append(data)
                self._queued += len(data)
                if self._idle:
                    self._idle = False
                    self._have.release()
                wait = self._queued >= self.cap
                if wait:
                    self._waiting = True
        if direct:  # the thread is idle and stays so: only put() queues work
            write_all(self.fd, data)
            return
        if wait:
            self._room.acquire()
            if self._error is not None:
                raise self._error

    def close(self) -> None:
        """Wait until everything put is written, then stop the thread; raises a
        write error the thread met. Idempotent."""
        with self._lock:
            if self._closing:
                return
            self._closing = True
            if self._idle:
                self._idle = False
                self._have.release()
        self._done.acquire()
        if self._error is not None:
            raise self._error

    def _run(self) -> None:
        try:
            while True:
                with self._lock:
                    if not self._chunks:
                        if self._closing:
                            return
                        self._idle = True
                        wait = True
                    else:
                        wait = False
                        chunks, self._chunks = self._chunks, []
                        self._busy = True
                if wait:
                    self._have.acquire()
                    continue
                data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
                try:
                    write_all(self.fd, data)
                except BaseException as exc:  # noqa: BLE001 - raised by put()/close()
                    with self._lock:
                        self._error = exc
                        self._chunks = []
                        self._busy = False
                        if self._waiting:
                            self._waiting = False
                            self._room.release()
                    return
                with self._lock:
                    self._busy = False
                    self._queued -= len(data)
                    if self._waiting and self._queued < self.cap:
                        self._waiting = False
                        self._room.release()
        finally:
            self._done.release()
