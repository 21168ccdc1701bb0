"""POSIX adapter: start a child on a new pseudo-terminal, or with output pipes.

Why not ptyprocess (the library the style guide names): its ``close()`` sleeps
``delayafterclose`` (0.1 s) per command, its ``isalive()`` raises when someone
else reaps the child (we need ``WUNTRACED`` to pass Ctrl-Z on to the outer
shell), it does not copy the user's termios to the slave, and it costs ~5-10 ms
of imports on the per-command hot path. What we keep from it is the exec-error
pipe (ptyprocess#119): a failed exec in the forked child is reported to the
parent as an error, not as a silent exit.

Both spawners reset SIGPIPE/SIGXFSZ to their defaults in the child: Python
ignores them, and an ignored disposition survives exec (``yes | head -1`` would
print "Broken pipe").
"""

from __future__ import annotations

import os

from tcg.osutil import fd_identity, grow_pipe, resolve_program, signal, spawn_error
from tcg.runner.base import exit_code_from_status

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

_RESET_SIGNALS = tuple(
    s for s in (getattr(signal, "SIGPIPE", None), getattr(signal, "SIGXFSZ", None)) if s is not None
)


def get_winsize(fd: int) -> tuple[int, int] | None:
    """(rows, cols) of the terminal on ``fd``, None when it has none."""
    import fcntl
    import termios

    try:
        packed = fcntl.ioctl(fd, termios.TIOCGWINSZ, b"\0" * 8)
    except OSError:
        return None
    import struct  # PTY mode only

    rows, cols = struct.unpack("hhhh", packed)[:2]
    return (rows, cols) if rows > 0 and cols > 0 else None


def set_winsize(fd: int, rows: int, cols: int) -> None:
    import fcntl
    import struct  # PTY mode only
    import termios

    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("hhhh", rows, cols, 0, 0))


class PosixPty:
    """A child whose controlling terminal is a new PTY; we hold the master."""

    def __init__(self, pid: int, master_fd: int, slave_rdev: int):
        self.pid = pid
        self._fd = master_fd
        self.slave_rdev = slave_rdev  # identifies the PTY for the nesting check
        self.status: int | None = None
        self.stopped = False  # reported by poll() (WUNTRACED); the loop suspends tcg
        self.stopped_pgrp: int | None = None  # group stopped by the loop's Ctrl-Z handling

    @property
    def fd(self) -> int:
        return self._fd

    def set_size(self, rows: int, cols: int) -> None:
        try:
            set_winsize(self._fd, rows, cols)
        except OSError:
            pass

    def _reap(self, flags: int) -> int | None:
        if self.status is not None:
            return self.status
        try:
            pid, st = os.waitpid(self.pid, flags)
        except ChildProcessError:
            self.status = 1
            return self.status
        if pid == 0:
            return None
        if os.WIFSTOPPED(st):
            self.stopped = True
            return None
        self.stopped = False
        self.status = exit_code_from_status(st)
        return self.status

    def poll(self) -> int | None:
        return self._reap(os.WNOHANG | os.WUNTRACED)

    def wait(self) -> int:
        while True:
            code = self._reap(0)
            if code is not None:
                return code

    def send_signal(self, sig: int) -> None:
        if self.status is not None:
            return
        try:
            os.killpg(self.pid, sig)  # the child is a session (and group) leader
        except OSError:
            try:
                os.kill(self.pid, sig)
            except OSError:
                pass

    def close(self) -> None:
        if self._fd >= 0:
            try:
                os.close(self._fd)
            finally:
                self._fd = -1


def spawn_pty(
    argv: list[str],
    env: dict[str, str],
    *,
    size: tuple[int, int] | None = None,
    attrs: list | None = None,
    channel_var: str | None = None,
    executable: str | None = None,
    child_exec: Callable[[str, list[str], dict[str, str], int], None] | None = None,
) -> PosixPty:
    """Start ``argv`` on a new PTY whose size (and termios, when given) are set
    before exec — the child never sees a 0x0 window (cpython#85666).
    ``executable`` runs instead of ``argv[0]`` (a login shell's ``-bash``).

    ``child_exec(path, argv, env, err_fd)``, when given, runs in the child after
    it took the terminal, instead of the exec (the agent's sandbox view): it must
    exec or exit, and write failures to ``err_fd`` as the exec does."""
    import termios

    path = resolve_program([executable] if executable else argv, env)
    master, slave = os.openpty()
    try:
        if attrs is not None:
            try:
                termios.tcsetattr(slave, termios.TCSANOW, attrs)
            except termios.error:
                pass
        if size is not None:
            set_winsize(slave, *size)
        rdev = os.fstat(slave).st_rdev
        if channel_var:
            env = {**env, channel_var: f"c{rdev}"}
        err_r, err_w = os.pipe()  # both close-on-exec: EOF means exec succeeded
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child; always leaves via exec or _exit
            try:
                os.close(master)
                os.close(err_r)
                for s in _RESET_SIGNALS:
                    signal.signal(s, signal.SIG_DFL)
                _login_tty(slave)
                if child_exec is not None:
                    child_exec(path, argv, env, err_w)
                os.execve(path, argv, env)
            except OSError as exc:
                os.write(err_w, f"{exc.errno}:{exc.strerror}".encode())
            finally:
                os._exit(127)
        os.close(err_w)
        try:
            report = _read_all(err_r)
        finally:
            os.close(err_r)
    finally:
        os.close(slave)
    if report:
        os.close(master)
        os.waitpid(pid, 0)
        if child_exec is not None:
            from tcg.sandbox.linux import report_error

            raise report_error(argv[0], report, spawn_error)
        num, _, msg = report.decode(errors="replace").partition(":")
        raise spawn_error(argv[0], int(num) if num.isdigit() else 0, msg)
    return PosixPty(pid, master, rdev)


def _login_tty(fd: int) -> None:  # pragma: no cover - runs in the child
    if hasattr(os, "login_tty"):
        os.login_tty(fd)
        return
    import fcntl
    import termios

    os.setsid()
    fcntl.ioctl(fd, termios.TIOCSCTTY, 0)
    for target in (0, 1, 2):
        os.dup2(fd, target)
    if fd > 2:
        os.close(fd)


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    while True:
        try:
            data = os.read(fd, 4096)
        except InterruptedError:  # pragma: no cover - PEP 475 retries already
            continue
        if not data:
            return b"".join(chunks)
        chunks.append(data)


def spawn_pipes(
    argv: list[str], env: dict[str, str], *, channel_var: str | None = None
) -> tuple[int, int, int]:
    """Start ``argv`` with stdin inherited and stdout/stderr on two new pipes.

    Returns (pid, stdout_read_fd, stderr_read_fd). posix_spawn (vfork on glibc)
    reports exec failures as OSError and is much cheaper than importing subprocess.
    """
    path = resolve_program(argv, env)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        for fd in (out_r, err_r):
            grow_pipe(fd)  # bigger pipes mean fewer wake-ups for bulk output
        if channel_var:
            env = {**env, channel_var: ",".join((fd_identity(out_r), fd_identity(err_r)))}
        actions = [
            (os.POSIX_SPAWN_DUP2, out_w, 1),
            (os.POSIX_SPAWN_DUP2, err_w, 2),
        ]
        try:
            pid = os.posix_spawn(path, argv, env, file_actions=actions, setsigdef=_RESET_SIGNALS)
        except OSError as exc:
            os.close(out_r)
            os.close(err_r)
            raise spawn_error(argv[0], exc.errno or 0, exc.strerror or str(exc)) from None
    finally:
        os.close(out_w)
        os.close(err_w)
    return pid, out_r, err_r

