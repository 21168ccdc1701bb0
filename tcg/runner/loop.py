"""The PTY copy loop: raw mode, signals as a select()-able fd, SIGWINCH → child.

Design (research/shells_pty.md §5): every read is written out at once (no
timers that batch output); the only buffering is input queued while the PTY
is not writable and what the masker holds back as a possible-secret tail,
released at ``idle_deadline()``. After the child exits the master is drained
until EIO (no lost tail, pexpect#120), or until it stays quiet briefly when a
background grandchild keeps the slave open.
"""

from __future__ import annotations

import os
import select
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager

from tcg.runner.base import OutputFilter, PtyChild, read_burst, write_all

READ_SIZE = 65536
# Bytes collected from the master per masker call (see read_burst). Measured
# (30 MB, bench/throughput.py's setup): larger bursts help the masker's
# per-call cost, smaller ones keep the two PTY hops overlapping; 64 KiB is the
# best compromise (16K: plain 0.86x script, masked 0.14x; 64K: 0.76x / 0.34x;
# 256K: 0.53x / 0.38x).
BURST = 1 << 16
# After the child is gone: stop once the master has been quiet this long.
DRAIN_IDLE = 0.1
# After forwarding SIGTERM/SIGHUP/SIGQUIT to the child: escalate to SIGKILL if it
# is still alive this long after (util-linux script does the same with 2 s).
KILL_GRACE = 3.0
ESCALATE = ("SIGTERM", "SIGHUP", "SIGQUIT")

FORWARDED = ("SIGTERM", "SIGHUP", "SIGINT", "SIGQUIT")


@contextmanager
def raw_mode(fd: int) -> Iterator[RawMode]:
    """Put the terminal on ``fd`` in raw mode; restore it on every exit path.

    TCSANOW to enter (nothing is pending), TCSADRAIN to leave: TCSAFLUSH — what
    asciinema, pexpect and the stdlib use — would discard the user's typeahead.
    """
    mode = RawMode(fd)
    mode.enter()
    try:
        yield mode
    finally:
        mode.leave()


class RawMode:
    def __init__(self, fd: int):
        import termios

        self.fd = fd
        self.saved = termios.tcgetattr(fd)
        self.active = False

    def enter(self) -> None:
        import termios
        import tty

        tty.setraw(self.fd, termios.TCSANOW)
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


def pty_signals() -> SignalPipe:
    return SignalPipe(("SIGCHLD", "SIGWINCH", "SIGCONT", *FORWARDED))


def copy_loop(
    child: PtyChild,
    stdin_fd: int,
    stdout_fd: int,
    out_filter: OutputFilter,
    sigs: SignalPipe,
    *,
    size_fd: int | None = None,
    raw: RawMode | None = None,
) -> int:
    """Copy stdin → child and child → filter → stdout until the child is gone.

    Returns the child's exit code (128+N when a signal killed it).
    """
    master = child.fd
    os.set_blocking(master, False)
    pending = bytearray()
    stdin_open = True
    master_open = True
    status: int | None = None
    check_child = True
    last_output = time.monotonic()
    kill_at: float | None = None

    def emit(data: bytes) -> None:
        if data:
            write_all(stdout_fd, data)

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
        now = time.monotonic()
        timeouts: list[float] = []
        deadline = out_filter.idle_deadline()
        if deadline is not None:
            timeouts.append(deadline - now)
        if status is not None:
            timeouts.append(last_output + DRAIN_IDLE - now)
        elif not master_open:
            timeouts.append(0.5)  # slave closed but child alive: poll as a fallback
        if kill_at is not None and status is None:
            timeouts.append(kill_at - now)
        timeout = max(0.0, min(timeouts)) if timeouts else None

        rlist = [sigs.fd]
        if master_open:
            rlist.append(master)
        if stdin_open and status is None and len(pending) < (1 << 20):
            rlist.append(stdin_fd)
        wlist = [master] if pending and master_open and status is None else []
        r, w, _ = select.select(rlist, wlist, [], timeout)

        now = time.monotonic()
        if deadline is not None and now >= deadline:
            emit(out_filter.release_idle())
        if kill_at is not None and now >= kill_at and status is None:
            child.send_signal(signal.SIGKILL)
            kill_at = None
        if not r and not w:
            if status is not None and now >= last_output + DRAIN_IDLE:
                break
            continue

        if sigs.fd in r:
            for signum in sigs.read():
                if signum == signal.SIGCHLD:
                    check_child = True
                elif signum in (signal.SIGWINCH, signal.SIGCONT):
                    _sync_size(child, size_fd)
                elif signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGQUIT):
                    # Someone signalled tcg itself (Ctrl-C in raw mode reaches the
                    # child as a byte instead). Pass it on, then wait for the child.
                    child.send_signal(signum)
                    if kill_at is None and signal.Signals(signum).name in ESCALATE:
                        kill_at = time.monotonic() + KILL_GRACE
        if master in r:
            data = read_burst(master, BURST)  # b"" also for EIO: every slave fd closed
            if data is not None:
                if data:
                    last_output = time.monotonic()
                    emit(out_filter.feed(data))
                else:
                    master_open = False
        if stdin_fd in r:
            try:
                data = os.read(stdin_fd, READ_SIZE)
            except BlockingIOError:
                data = None
            except OSError:
                data = b""
            if data is not None:
                if data:
                    if raw is not None:
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
    emit(out_filter.flush())
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
) -> int:
    """Run ``argv`` on a new PTY sized and configured like our terminal.

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
        child = spawn_pty(argv, env, size=size, attrs=attrs, channel_var=channel_var)
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
