"""Pipe mode: the agent case (no terminal on stdin or stdout).

No PTY here on purpose: a PTY fed from a
pipe echoes input, turns ``\\n`` into ``\\r\\n`` and can hang on EOF. stdin is
inherited untouched; stdout and stderr get their own pipes, each through its
own strict masker, and are written out as soon as the masker releases bytes.
"""

from __future__ import annotations

import os
import select
import time

from tcg.osutil import write_all
from tcg.runner.base import OutputFilter, exit_code_from_status, read_burst
from tcg.runner.signals import (
    DRAIN_IDLE,
    ESCALATE_SIGNALS,
    FORWARDED,
    KILL_GRACE,
    SignalPipe,
    signal,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


# Bytes collected per masker call (see base.read_burst). 256 KiB: per-call costs are
# amortised, and buffers stay below the size where every allocation is a fresh mmap
# whose page faults cost more than masking (1 MiB measured slower: bench/throughput.py).
BURST = 1 << 18
# After the child exits, a background grandchild may keep our pipes open
# (`server & echo started`): drain while output keeps coming, but never longer.
DRAIN_MAX = 1.0


class _Stream:
    def __init__(self, src: int, dst: int, out_filter: OutputFilter):
        self.src = src
        self.dst = dst
        self.filter = out_filter
        self.open = True
        self.dst_ok = True

    def emit(self, data: bytes) -> None:
        if not data or not self.dst_ok:
            return
        try:
            write_all(self.dst, data)
        except BrokenPipeError:
            # Our reader went away (`… | head -1`): stop reading, so the child
            # gets SIGPIPE on its next write, exactly as without tcg.
            self.dst_ok = False
            self.close()

    def close(self) -> None:
        if self.open:
            self.open = False
            os.close(self.src)


def run_pipes(
    argv: list[str],
    env: dict[str, str],
    out_filter: OutputFilter,
    err_filter: OutputFilter,
    *,
    stdout_fd: int = 1,
    stderr_fd: int = 2,
    channel_var: str | None = None,
    spawn: Callable[..., tuple[int, int, int]] | None = None,
) -> int:
    """Run ``argv`` with masked stdout/stderr; return its exit code (128+N on a signal).

    ``spawn`` replaces tcg.runner.posix.spawn_pipes (same signature and result):
    the agent's sandbox view starts the command its own way. Raises SpawnError
    when it cannot be started (and whatever ``spawn`` raises before anything ran).
    """
    if spawn is None:
        from tcg.runner.posix import spawn_pipes

        spawn = spawn_pipes

    with SignalPipe(("SIGCHLD", *FORWARDED)) as sigs:
        pid, out_r, err_r = spawn(argv, env, channel_var=channel_var)
        os.set_blocking(out_r, False)
        os.set_blocking(err_r, False)
        streams = [_Stream(out_r, stdout_fd, out_filter), _Stream(err_r, stderr_fd, err_filter)]
        status: int | None = None
        try:
            status = _loop(pid, streams, sigs)
        finally:
            for s in streams:
                s.close()
            if status is None:  # exception in the loop: do not leave the child behind
                _kill(pid)
                status = _wait(pid)
    return status


def _loop(pid: int, streams: list[_Stream], sigs: SignalPipe) -> int:
    status: int | None = None
    exited_at = 0.0
    last_output = 0.0
    kill_at: float | None = None
    check_child = True
    while True:
        if status is None and check_child:
            check_child = False
            status = _poll(pid)
            if status is not None:
                exited_at = last_output = time.monotonic()
        open_streams = [s for s in streams if s.open]
        if status is not None and not open_streams:
            break
        now = time.monotonic()
        timeouts = [
            d - now for d in (s.filter.idle_deadline() for s in open_streams) if d is not None
        ]
        if status is not None:
            if now >= exited_at + DRAIN_MAX:
                break
            timeouts.append(last_output + DRAIN_IDLE - now)
        elif not open_streams:
            timeouts.append(0.5)  # both pipes closed, child alive: SIGCHLD or this poll
        if kill_at is not None and status is None:
            timeouts.append(kill_at - now)
        timeout = max(0.0, min(timeouts)) if timeouts else None
        r, _, _ = select.select([sigs.fd, *(s.src for s in open_streams)], [], [], timeout)
        now = time.monotonic()
        for s in open_streams:
            d = s.filter.idle_deadline()
            if d is not None and now >= d:
                s.emit(s.filter.release_idle())
        if kill_at is not None and now >= kill_at and status is None:
            _kill(pid, signal.SIGKILL)
            kill_at = None
        if not r:
            if status is not None and now >= last_output + DRAIN_IDLE:
                break
            if not open_streams:
                check_child = True
            continue
        if sigs.fd in r:
            for signum in sigs.read():
                if signum == signal.SIGCHLD:
                    check_child = True
                else:
                    _kill(pid, signum)  # forwarded: tcg was signalled, not the child
                    if kill_at is None and signum in ESCALATE_SIGNALS:
                        kill_at = time.monotonic() + KILL_GRACE
        for s in open_streams:
            if s.src in r:
                data = read_burst(s.src, BURST)
                if data is None:
                    continue
                if data:
                    last_output = time.monotonic()
                    s.emit(s.filter.feed(data))
                else:
                    s.emit(s.filter.flush())
                    s.close()
    for s in streams:
        if s.open:  # cut off while a grandchild still holds the pipe
            s.emit(s.filter.flush())
    return status


def _poll(pid: int) -> int | None:
    try:
        done, st = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return 1
    return exit_code_from_status(st) if done else None


def _wait(pid: int) -> int:
    try:
        _, st = os.waitpid(pid, 0)
    except ChildProcessError:
        return 1
    return exit_code_from_status(st)


def _kill(pid: int, sig: int = signal.SIGTERM) -> None:
    try:
        os.kill(pid, sig)
    except OSError:
        pass
