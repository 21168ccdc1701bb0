"""The copy loop's PTY master reader (tcg.runner.loop): a helper thread that reads
the master in bursts and hands them to the loop, or, once a session's first
screen is settled, writes them straight into its masking process's pipe."""

from __future__ import annotations

import os
import select
import time

from tcg._lean.threads import allocate_lock, start_new_thread
from tcg.runner.base import read_burst
from tcg.runner.signals import signal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

# Output read from the master but not yet masked and written: the reader thread
# pauses beyond this (back-pressure from a slow or stopped terminal, Ctrl-S).
QUEUE_CAP = 1 << 20
# Bytes the reader thread collects (read until EAGAIN, see base.read_burst) before
# handing them over: one hand-over per burst instead of per ~4 KiB read keeps the
# thread's CPU cost at the single-threaded loop's (measured, 50 MB: tree CPU 0.66 s
# both; one hand-over per read: 0.73 s).
BURST = 1 << 16


class MasterReader:
    """Reads the PTY master on a helper thread and hands batches to the loop.

    Why a thread: a PTY master hands out at most ~4 KiB per read, and its
    buffer holds only ~20 KiB, so a loop that reads, masks and then writes in
    turn leaves the child blocked while it masks and writes, and the two PTY
    hops (child → us, us → terminal) run one after the other. Here reading
    goes on while the loop masks and writes (``os.read``/``os.write`` release
    the GIL), and the loop masks whatever arrived meanwhile in one call —
    batches are formed by the data, never by a timer, so a keystroke echo is
    passed on at once (one thread hop: ~+15 µs per keystroke round trip).
    Measured (bench/throughput.py's setup, 50 MB, medians of 5-6 interleaved
    runs): copy loop alone 0.96x -> 1.13x ``script``, masked 0.50x -> 0.64x.

    ``wake_fd`` becomes readable when a batch is waiting; ``take()`` returns
    it. The thread stops at EOF/EIO (a final b""), on a read error (re-raised
    by ``take()``), or at ``close()``, which returns only once the thread no
    longer touches the master (so it can be closed safely). Signals stay with
    the main thread. ``_thread``, not ``threading``: no import cost.

    Direct mode (``attach``): once the output filter is a plain pipe into a
    masking process (a session after its first screen), the thread writes each
    burst to that pipe itself, and the loop is not woken per batch at all.
    Only the masking process's own pipe is ever attached, so no byte reaches
    the terminal unmasked; a write that fails (the masking process died) goes
    back to the loop with its chunk, which then takes the filter's fail-closed
    path (restart or withhold), and may attach again. ``_writing`` is held
    while one burst is handed on (written, or queued): attach() feeds the
    backlog and detach() (before a service runs) switches back under it, so
    the loop and the thread never write to the pipe at once and the bytes
    keep their order.
    """

    def __init__(self, fd: int, blocked_signals: list[int]):
        self.fd = fd
        self._chunks: list[bytes] = []
        self._queued = 0
        self._full = False  # the thread waits on _room until take() frees the queue
        self._stopping = False
        self._busy = False  # between a wake-up and queueing what it read
        self._error: OSError | None = None
        self._eof = False
        self._closed = False
        self._sink = -1  # direct mode: our own dup of the masking process's pipe
        self.last_data = 0.0  # monotonic time of the last burst written in direct mode
        self._lock = allocate_lock()
        self._writing = allocate_lock()  # held while a burst is written in direct mode
        self._room = allocate_lock()
        self._room.acquire()
        self._done = allocate_lock()
        self._done.acquire()
        self.wake_fd, self._wake_w = os.pipe()
        self._stop_r, self._stop_w = os.pipe()
        for fd_ in (self.wake_fd, self._wake_w, self._stop_w):
            os.set_blocking(fd_, False)
        self._blocked = blocked_signals
        try:
            start_new_thread(self._run, ())
        except BaseException:
            self._close_fds()
            raise

    def _run(self) -> None:
        try:
            if self._blocked and hasattr(signal, "pthread_sigmask"):
                signal.pthread_sigmask(signal.SIG_BLOCK, self._blocked)
            wait: Callable[[], object]
            if hasattr(select, "epoll"):  # Linux; macOS's poll() does not take ttys
                poller = select.poll()
                poller.register(self.fd, select.POLLIN)
                poller.register(self._stop_r, select.POLLIN)
                wait = poller.poll
            else:
                fds = [self.fd, self._stop_r]

                def wait() -> object:
                    return select.select(fds, (), ())

            while not self._stopping:
                wait()
                if self._stopping:
                    break
                self._busy = True
                try:
                    data = read_burst(self.fd, BURST)  # b"" also for EIO: slave closed
                except OSError as exc:
                    self._push(b"", exc)
                    break
                if data is None:
                    self._busy = False
                    continue
                if not data:
                    self._push(b"", None)
                    break
                # one burst is handed on at a time, either way (attach/detach wait for it)
                with self._writing:
                    if self._sink >= 0 and self._direct(data):
                        self.last_data = time.monotonic()
                        self._busy = False
                        continue
                    # the loop's path (also a chunk a dead masking process did not take)
                    full = self._queue(data, None)
                if full:
                    self._room.acquire()  # released by take() or close(), not under _writing
                if self._stopping:
                    break
        except BaseException as exc:  # noqa: BLE001 - reported to the loop, never lost
            self._push(b"", exc if isinstance(exc, OSError) else OSError(str(exc)))
        finally:
            self.detach()
            self._done.release()

    def attach(self, fd_of: Callable[[], int | None], feed: Callable[[bytes], object]) -> bool:
        """Direct mode from now on: this thread writes its bursts to the pipe
        ``fd_of()`` (a masking process's input) itself. What was read before and
        not taken yet is handed to ``feed`` (the loop's path) first, while no
        burst can be handed on, so the bytes keep their order. False when not
        now (the end was read, or ``fd_of()`` is None after that feed). Called by
        the loop's thread only; the wait for ``_writing`` is short: unattached,
        the thread holds it only to queue a burst."""
        self._writing.acquire()
        try:
            with self._lock:
                if self._sink >= 0 or self._eof or self._error is not None or self._stopping:
                    return False
                queued = self._unqueue()
            if queued:
                feed(queued)
            fd = fd_of()
            if fd is None:
                return False
            sink = os.dup(fd)
            os.set_blocking(sink, False)  # a stuck terminal must not stop close()
            self._sink = sink
            return True
        finally:
            self._writing.release()

    @property
    def attached(self) -> bool:
        return self._sink >= 0

    def detach(self) -> None:
        """Back to the loop's path (before a service may use the terminal: what
        is read meanwhile waits, as it did before direct mode). A burst being
        written is finished first, so the loop never writes to the pipe at the
        same time. Called by the loop's thread, and by this thread as it ends."""
        if self._sink < 0:
            return
        with self._writing:
            sink, self._sink = self._sink, -1
        if sink >= 0:
            os.close(sink)

    def _direct(self, data: bytes) -> bool:
        """Write one burst to the attached pipe (``_writing`` held); False when
        the write failed: the masking process died. Detached then; the caller
        queues the whole chunk for the loop, whose filter gives it to a
        successor or withholds it."""
        sink = self._sink
        view = memoryview(data)
        try:
            while view:
                try:
                    view = view[os.write(sink, view):]
                except BlockingIOError:  # the masking process is behind: wait, or stop
                    if select.select([self._stop_r], [sink], [])[0] or self._stopping:
                        return True  # closing: the rest is dropped, never shown
        except OSError:  # EPIPE
            self._sink = -1
            os.close(sink)
            return False
        return True

    def _push(self, data: bytes, error: OSError | None) -> bool:
        """Queue ``data`` (b"" = end); False when the thread should stop."""
        if self._queue(data, error):
            self._room.acquire()  # released by take() or close()
        return not self._stopping

    def _queue(self, data: bytes, error: OSError | None) -> bool:
        """Queue ``data`` (b"" = end) and wake the loop; True when the queue is full."""
        with self._lock:
            if self._stopping:
                return False
            wake = not self._chunks and not self._eof
            if data:
                self._chunks.append(data)
                self._queued += len(data)
            else:
                self._eof = True
                self._error = error
            self._busy = False
            full = self._full = self._queued >= QUEUE_CAP
        if wake:
            try:
                os.write(self._wake_w, b"\0")
            except BlockingIOError:
                pass  # already signalled
        return full

    def take(self) -> tuple[bytes | None, bool]:
        """(bytes read since the last call or None, True at end of output)."""
        try:
            os.read(self.wake_fd, 4096)
        except BlockingIOError:
            pass
        with self._lock:
            queued = self._unqueue()
            eof, error = self._eof, self._error
            if not queued:
                self._error = None  # data read before the error goes out first
        if not queued:
            if error is not None:
                raise error
            return None, eof
        if error is not None:
            eof = False  # reported by the next call
            try:
                os.write(self._wake_w, b"\0")
            except BlockingIOError:
                pass
        return queued, eof

    def _unqueue(self) -> bytes:
        """What is queued, taken off the queue (``_lock`` held), and the thread
        let go on if it waited for room."""
        chunks, self._chunks = self._chunks, []
        self._queued = 0
        if self._full:
            self._full = False
            self._room.release()
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    def idle(self) -> bool:
        """True when no output is in flight: none waiting on the master (checked
        first), none read and not yet taken. Decides the end of the drain."""
        if select.select([self.fd], [], [], 0)[0]:
            return False
        with self._lock:
            return not (self._busy or self._chunks or self._eof)

    def close(self) -> None:
        """Stop the thread (idempotent); it closes its pipe to the masking process."""
        if self._closed:
            return
        self._closed = True
        with self._lock:
            self._stopping = True
            if self._full:
                self._full = False
                self._room.release()
        try:
            os.write(self._stop_w, b"\0")
        except BlockingIOError:
            pass
        self._done.acquire()
        self._close_fds()

    def _close_fds(self) -> None:
        for fd in (self.wake_fd, self._wake_w, self._stop_r, self._stop_w):
            os.close(fd)
