"""The PTY copy loop: raw mode, signals as a select()-able fd, SIGWINCH → child.

Design: every read is written out at once (no
timers that batch output); the only buffering is input queued while the PTY
is not writable, output read while the previous chunk was being masked and
written (``_MasterReader``), and what the masker holds back as a
possible-secret tail, released at ``idle_deadline()``. After the child exits
the master is drained until EIO (no lost tail, pexpect#120), or until it stays
quiet briefly when a background grandchild keeps the slave open.
"""

from __future__ import annotations

import os
import select
import time

from tcg._lean.threads import allocate_lock, start_new_thread
from tcg.osutil import write_all
from tcg.runner.base import OutputFilter, PtyChild, read_burst
from tcg.runner.signals import (  # noqa: F401 - re-exported
    DRAIN_IDLE,
    ESCALATE,
    ESCALATE_SIGNALS,
    FORWARDED,
    KILL_GRACE,
    SignalPipe,
    signal,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Protocol
else:
    Protocol = object

READ_SIZE = 65536
# Output read from the master but not yet masked and written: the reader thread
# pauses beyond this (back-pressure from a slow or stopped terminal, Ctrl-S).
QUEUE_CAP = 1 << 20
# Bytes the reader thread collects (read until EAGAIN, see base.read_burst) before
# handing them over: one hand-over per burst instead of per ~4 KiB read keeps the
# thread's CPU cost at the single-threaded loop's (measured, 50 MB: tree CPU 0.66 s
# both; one hand-over per read: 0.73 s).
BURST = 1 << 16


def raw_mode(fd: int) -> RawMode:
    """``with raw_mode(fd) as raw:`` puts the terminal on ``fd`` in raw mode and
    restores it on every exit path.

    TCSANOW to enter (nothing is pending), TCSADRAIN to leave: TCSAFLUSH — what
    asciinema, pexpect and the stdlib use — would discard the user's typeahead.
    """
    return RawMode(fd)


class RawMode:
    """Saved termios of ``fd``; a context manager that enters raw mode and leaves it.
    (A class, not ``contextlib.contextmanager``: no import on the hot path.)"""

    def __init__(self, fd: int):
        import termios

        self.fd = fd
        self.saved = termios.tcgetattr(fd)
        self.active = False

    def __enter__(self) -> RawMode:
        self.enter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.leave()

    def enter(self) -> None:
        """cfmakeraw(3) on the saved attributes, set with TCSANOW — what util-linux
        ``script`` and Python 3.12's ``tty.setraw`` do (``tty`` itself costs
        ~0.3 ms of import)."""
        import termios as t

        iflag, oflag, cflag, lflag, ispeed, ospeed, cc = self.saved
        iflag &= ~(t.IGNBRK | t.BRKINT | t.PARMRK | t.ISTRIP | t.INLCR | t.IGNCR | t.ICRNL | t.IXON)
        oflag &= ~t.OPOST
        cflag = (cflag & ~(t.CSIZE | t.PARENB)) | t.CS8
        lflag &= ~(t.ECHO | t.ECHONL | t.ICANON | t.ISIG | t.IEXTEN)
        cc = list(cc)
        cc[t.VMIN] = 1
        cc[t.VTIME] = 0
        t.tcsetattr(self.fd, t.TCSANOW, [iflag, oflag, cflag, lflag, ispeed, ospeed, cc])
        self.active = True

    def leave(self) -> None:
        import termios

        if not self.active:
            return
        try:
            termios.tcsetattr(self.fd, termios.TCSADRAIN, self.saved)
        except termios.error:
            pass  # the terminal went away (hangup): nothing left to restore
        self.active = False


def pty_signals() -> SignalPipe:
    return SignalPipe(("SIGCHLD", "SIGWINCH", "SIGCONT", *FORWARDED))


class _MasterReader:
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
                chunks, self._chunks = self._chunks, []
                self._queued = 0
                if self._full:
                    self._full = False
                    self._room.release()
            if chunks:
                feed(chunks[0] if len(chunks) == 1 else b"".join(chunks))
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
            chunks, self._chunks = self._chunks, []
            self._queued = 0
            eof, error = self._eof, self._error
            if not chunks:
                self._error = None  # data read before the error goes out first
            if self._full:
                self._full = False
                self._room.release()
        if not chunks:
            if error is not None:
                raise error
            return None, eof
        if error is not None:
            eof = False  # reported by the next call
            try:
                os.write(self._wake_w, b"\0")
            except BlockingIOError:
                pass
        return (chunks[0] if len(chunks) == 1 else b"".join(chunks)), eof

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


class LoopService(Protocol):
    """Something else the copy loop waits on (the session's verdict channel).

    ``fd`` is readable when the service has work (negative: nothing to wait on
    any more); ``ready()`` does that work, synchronously, between two turns of
    the loop — it may read the terminal itself (a question asked on it).
    """

    fd: int

    def ready(self) -> None: ...


def copy_loop(
    child: PtyChild,
    stdin_fd: int,
    stdout_fd: int,
    out_filter: OutputFilter,
    sigs: SignalPipe,
    *,
    size_fd: int | None = None,
    raw: RawMode | None = None,
    services: Sequence[LoopService] = (),
    suspend_key: bool = True,
) -> int:
    """Copy stdin → child and child → filter → stdout until the child is gone.

    ``suspend_key=False`` passes Ctrl-Z through as a byte: for a child that
    does job control itself (an interactive shell), see ``_handle_suspend_key``.
    Returns the child's exit code (128+N when a signal killed it).
    """
    master = child.fd
    os.set_blocking(master, False)  # for our writes of stdin; the reader polls
    reader = _MasterReader(master, sigs.signals)
    try:
        return _loop(child, reader, stdin_fd, stdout_fd, out_filter, sigs, size_fd, raw,
                     services, suspend_key)
    finally:
        reader.close()


def _loop(
    child: PtyChild,
    reader: _MasterReader,
    stdin_fd: int,
    stdout_fd: int,
    out_filter: OutputFilter,
    sigs: SignalPipe,
    size_fd: int | None,
    raw: RawMode | None,
    services: Sequence[LoopService] = (),
    suspend_key: bool = True,
) -> int:
    master = child.fd
    wake_fd = reader.wake_fd
    sig_fd = sigs.fd
    pending = bytearray()
    stdin_open = True
    master_open = True
    status: int | None = None
    check_child = True
    last_output = time.monotonic()
    kill_at: float | None = None
    # The filter's deadline only moves when it is fed or released: ask it then.
    deadline = out_filter.idle_deadline()
    # A filter that is a pipe into a masking process: the reader writes to it itself
    direct_fd: Callable[[], int | None] | None = getattr(out_filter, "direct_fd", None)

    def feed(data: bytes) -> None:  # what the reader had queued when it attaches
        out = out_filter.feed(data)
        if out:
            write_all(stdout_fd, out)

    while True:
        if status is None and (check_child or not master_open):
            check_child = False
            status = child.poll()
            if status is None and getattr(child, "stopped", False):
                _suspend(child, raw)
                _sync_size(child, size_fd)
                continue
        if status is not None and not master_open:
            break
        if deadline is None and status is None and kill_at is None and master_open:
            timeout = None  # the common case: nothing but I/O to wait for
        else:
            now = time.monotonic()
            timeouts: list[float] = []
            if deadline is not None:
                timeouts.append(deadline - now)
            if status is not None:
                last_output = max(last_output, reader.last_data)  # written in direct mode
                timeouts.append(last_output + DRAIN_IDLE - now)
            elif not master_open:
                timeouts.append(0.5)  # slave closed but child alive: poll as a fallback
            if kill_at is not None and status is None:
                timeouts.append(kill_at - now)
            timeout = max(0.0, min(timeouts)) if timeouts else None

        rlist = [sig_fd]
        if master_open:
            rlist.append(wake_fd)
        if services and status is None:
            rlist.extend(s.fd for s in services if s.fd >= 0)
        if stdin_open and status is None and len(pending) < (1 << 20):
            rlist.append(stdin_fd)
        wlist = [master] if pending and master_open and status is None else []
        r, w, _ = select.select(rlist, wlist, [], timeout)

        if timeout is not None:
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                out = out_filter.release_idle()
                deadline = out_filter.idle_deadline()
                if out:
                    write_all(stdout_fd, out)
            if kill_at is not None and now >= kill_at and status is None:
                child.send_signal(signal.SIGKILL)
                kill_at = None
            if not r and not w:
                if status is not None and now >= last_output + DRAIN_IDLE:
                    if not master_open or reader.idle():
                        break
                    last_output = now  # output still in flight: not quiet yet
                continue

        if sig_fd in r:
            for signum in sigs.read():
                if signum == signal.SIGCHLD:
                    check_child = True
                elif signum in (signal.SIGWINCH, signal.SIGCONT):
                    _sync_size(child, size_fd)
                elif signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGQUIT):
                    # Someone signalled tcg itself (Ctrl-C in raw mode reaches the
                    # child as a byte instead). Pass it on, then wait for the child.
                    child.send_signal(signum)
                    if kill_at is None and signum in ESCALATE_SIGNALS:
                        kill_at = time.monotonic() + KILL_GRACE
        # Output first: what the shell printed before it asked (the line's echo)
        # is on the screen before a service (a verdict) takes its time.
        if wake_fd in r:
            data, eof = reader.take()
            if data is not None:
                last_output = time.monotonic()
                out = out_filter.feed(data)
                deadline = out_filter.idle_deadline()
                if out:
                    write_all(stdout_fd, out)
                if direct_fd is not None and not reader.attached and direct_fd() is not None:
                    reader.attach(direct_fd, feed)
                    deadline = out_filter.idle_deadline()
            if eof:
                master_open = False
        serviced = False
        if services and status is None:
            for service in services:
                if service.fd >= 0 and service.fd in r:
                    if reader.attached:  # output waits while it may ask on the terminal
                        reader.detach()
                    service.ready()
                    serviced = True  # it may have read the terminal: select stdin again
        if stdin_fd in r and not serviced:
            try:
                data = os.read(stdin_fd, READ_SIZE)
            except BlockingIOError:
                data = None
            except OSError:
                data = b""
            if data is not None:
                if data:
                    if raw is not None and suspend_key:
                        data = _handle_suspend_key(child, master, pending, data)
                    pending += data
                else:
                    stdin_open = False
        if master in w and pending:
            try:
                n = os.write(master, pending)
                del pending[:n]
            except BlockingIOError:
                pass
            except OSError:
                pending.clear()
    reader.close()  # first: its own end of the masking process's pipe (direct mode)
    out = out_filter.flush()
    if out:
        write_all(stdout_fd, out)
    return status


def _sync_size(child: PtyChild, size_fd: int | None) -> None:
    if size_fd is None:
        return
    from tcg.runner.posix import get_winsize

    size = get_winsize(size_fd)
    if size:
        child.set_size(*size)


def _handle_suspend_key(child: PtyChild, master: int, pending: bytearray, data: bytes) -> bytes:
    """Ctrl-Z (the PTY's VSUSP while ISIG is on) stops the child's foreground job.

    The kernel would turn the byte into SIGTSTP, but our child leads its own
    session, so its process group is orphaned and SIGTSTP is discarded: without
    this, ^Z would be ignored under tcg. We stop the group with SIGSTOP instead;
    the SIGCHLD that follows makes the loop suspend tcg too (``_suspend``).
    Programs that read ^Z as a byte (ISIG off: vim, less) get it unchanged.
    """
    import termios

    try:
        attrs = termios.tcgetattr(master)
    except termios.error:
        return data
    susp = attrs[6][termios.VSUSP]
    if not attrs[3] & termios.ISIG or susp in (b"\0", 0) or susp not in data:
        return data
    before, _, after = data.partition(susp)
    pending += before
    try:
        pgrp = os.tcgetpgrp(master)
        os.killpg(pgrp, signal.SIGSTOP)
        setattr(child, "stopped_pgrp", pgrp)  # noqa: B010 - resumed in _suspend
    except OSError:
        pending += susp
    return after


def _suspend(child: PtyChild, raw: RawMode | None) -> None:
    """The child stopped (Ctrl-Z inside the PTY): stop ourselves too, so the
    outer shell's job control sees a stopped job; resume the child on SIGCONT."""
    if raw is not None:
        raw.leave()
    os.kill(os.getpid(), signal.SIGSTOP)
    # ... `fg` in the outer shell continues us here.
    if raw is not None:
        raw.enter()
    pgrp = getattr(child, "stopped_pgrp", None)
    if pgrp is not None:
        try:
            os.killpg(pgrp, signal.SIGCONT)
        except OSError:
            pass
        setattr(child, "stopped_pgrp", None)  # noqa: B010
    child.send_signal(signal.SIGCONT)
    setattr(child, "stopped", False)  # noqa: B010 - PtyChild adapters expose it


def run_pty(
    argv: list[str],
    env: dict[str, str],
    out_filter: OutputFilter,
    *,
    stdin_fd: int = 0,
    stdout_fd: int = 1,
    channel_var: str | None = None,
    child_exec: Callable[[str, list[str], dict[str, str], int], None] | None = None,
) -> int:
    """Run ``argv`` on a new PTY sized and configured like our terminal.

    ``child_exec`` (see tcg.runner.posix.spawn_pty) starts the command in the
    agent's sandbox view instead of a plain exec.

    Raises SpawnError when it cannot be started. With ``channel_var``, the
    child's environment names the new PTY there (the station's nesting check).
    """
    import termios

    from tcg.runner.posix import get_winsize, spawn_pty

    try:
        attrs = termios.tcgetattr(stdin_fd)
    except termios.error:
        attrs = None
    size = get_winsize(stdout_fd) or get_winsize(stdin_fd)
    with pty_signals() as sigs:
        child = spawn_pty(argv, env, size=size, attrs=attrs, channel_var=channel_var, child_exec=child_exec)
        try:
            if attrs is None:
                return copy_loop(child, stdin_fd, stdout_fd, out_filter, sigs, size_fd=None)
            with raw_mode(stdin_fd) as raw:
                return copy_loop(
                    child, stdin_fd, stdout_fd, out_filter, sigs, size_fd=stdout_fd, raw=raw
                )
        finally:
            if child.status is None:  # only after an exception in the loop
                _terminate(child)
            child.close()


def _terminate(child: PtyChild) -> None:
    child.send_signal(signal.SIGHUP)
    end = time.monotonic() + 1.0
    while child.poll() is None and time.monotonic() < end:
        time.sleep(0.02)
    if child.poll() is None:
        child.send_signal(signal.SIGKILL)
        child.wait()
