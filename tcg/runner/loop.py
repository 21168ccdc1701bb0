"""The PTY copy loop: raw mode, signals as a select()-able fd, SIGWINCH → child.

Design: every read is written out at once (no
timers that batch output); the only buffering is input queued while the PTY
is not writable, output read while the previous chunk was being masked and
written (``MasterReader``), and what the masker holds back as a
possible-secret tail, released at ``idle_deadline()``. After the child exits
the master is drained until EIO (no lost tail, pexpect#120), or until it stays
quiet briefly when a background grandchild keeps the slave open.
"""

from __future__ import annotations

import os
import select
import time

from tcg.osutil import write_all
from tcg.runner.base import OutputFilter, PtyChild
from tcg.runner.master_reader import MasterReader
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
    reader = MasterReader(master, sigs.signals)
    try:
        return _loop(child, reader, stdin_fd, stdout_fd, out_filter, sigs, size_fd, raw,
                     services, suspend_key)
    finally:
        reader.close()


def _loop(
    child: PtyChild,
    reader: MasterReader,
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
    # A filter that wants to know when the first key reached the child (a session's first screen)
    input_seen: Callable[[], None] | None = getattr(out_filter, "input_seen", None)

    def feed(data: bytes) -> None:  # a batch the reader queued (also at attach)
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
                feed(data)
                deadline = out_filter.idle_deadline()
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
                    if input_seen is not None:
                        input_seen()
                        input_seen = None  # once is enough
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


class RawStderr:
    """sys.stderr while the terminal is raw: LF becomes CR LF, so a warning the
    station prints (an unwritable event log, TCG_DEBUG tracebacks) lands at the
    start of a line instead of as a staircase."""

    def __init__(self, fd: int = 2):
        self.fd = fd

    def write(self, text: str) -> int:
        data = text.replace("\r\n", "\n").replace("\n", "\r\n").encode("utf-8", "replace")
        try:
            write_all(self.fd, data)
        except OSError:
            pass
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return os.isatty(self.fd)
