"""Byte-level stdio relay between an MCP client (our stdin/stdout) and a server child.

One thread per direction reads raw bytes with ``os.read`` (no asyncio
StreamReader and its 64 KiB line limit), splits on ``\\n`` only and hands each
whole line to a handler that decides what to write where. The server's stderr
is inherited. Client stdin EOF closes the server's stdin; SIGTERM/SIGINT/SIGHUP
to the proxy terminate the server's process group (SIGKILL after a grace
period); the proxy exits with the server's status (128+N when killed by N).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Protocol

from tcg.errors import ExitCode, TcgError
from tcg.jsonrpc import LineSplitter
from tcg.osutil import grow_pipe, write_all

CLIENT = "client"
SERVER = "server"
READ_SIZE = 1024 * 1024
TERM_GRACE = 3.0  # seconds between SIGTERM and SIGKILL of the server's process group
DRAIN_AFTER_EXIT = 2.0  # a grandchild holding the server's stdout must not hang us
DRAIN_HARD_CAP = 120.0  # ... even one that keeps writing

Output = list[tuple[str, bytes]]


class Handler(Protocol):
    """Decides, per whole line, what is written to which side (CLIENT/SERVER)."""

    def from_client(self, line: bytes) -> Output: ...

    def from_server(self, line: bytes) -> Output: ...

    def server_gone(self) -> Output: ...


class ServerStartError(TcgError):
    exit_code = ExitCode.NOT_FOUND


def _pdeathsig() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: the server gets SIGTERM if the proxy dies without cleaning up (kill -9)."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        except Exception:  # noqa: BLE001 - best effort only
            pass


class StdioRelay:
    """Run ``argv`` as the server and relay frames through ``handler``."""

    def __init__(self, argv: list[str], handler: Handler, *, client_in: int = 0,
                 client_out: int = 1, on_note: Callable[[str], None] | None = None):
        self.argv = argv
        self.handler = handler
        self.client_in = client_in
        self.client_out = client_out
        self.note = on_note or (lambda msg: None)
        self.proc: subprocess.Popen[bytes] | None = None
        self._locks = {CLIENT: threading.Lock(), SERVER: threading.Lock()}
        self._pending: dict[str, deque[bytes]] = {CLIENT: deque(), SERVER: deque()}
        self._server_in_closed = False
        self._client_gone = False
        self._stopping = False
        self._kill_timer: threading.Timer | None = None
        self.signal_received: int | None = None
        self._down_busy = False

    # ------------------------------------------------------------ process

    def start(self) -> None:
        try:
            self.proc = subprocess.Popen(  # noqa: S603 - the user's own server command
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None,
                bufsize=0, start_new_session=True, preexec_fn=_pdeathsig,  # noqa: PLW1509
            )
        except FileNotFoundError:
            raise ServerStartError(f"MCP server command not found: {self.argv[0]}",
                                   hint="check the command after `--` (is it on PATH?)") from None
        except OSError as exc:
            raise ServerStartError(f"cannot start the MCP server {self.argv[0]}: {exc.strerror}",
                                   hint="check the command after `--` and its permissions",
                                   exit_code=ExitCode.BLOCKED) from None

    def _signal_group(self, sig: int) -> None:
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)

    def terminate(self) -> None:
        """SIGTERM the server's process group now, SIGKILL after TERM_GRACE."""
        if self._stopping:
            self._signal_group(signal.SIGKILL)
            return
        self._stopping = True
        self._signal_group(signal.SIGTERM)
        self._kill_timer = threading.Timer(TERM_GRACE, self._signal_group, args=(signal.SIGKILL,))
        self._kill_timer.daemon = True
        self._kill_timer.start()

    def _on_signal(self, signum: int, _frame: object) -> None:
        self.signal_received = signum
        self.terminate()

    # ------------------------------------------------------------ writing

    def send(self, dest: str, data: bytes) -> None:
        """Queue a whole frame for ``dest`` and write what can be written now.

        A thread never waits for the other direction's write: if the other thread
        is busy writing to ``dest`` (say a 30 MB frame to a client that is itself
        blocked writing to us), the frame is left in the queue and that thread
        writes it when it is done. So an error reply from the client→server pump
        cannot stop it from reading the client (no new deadlock through the proxy).
        """
        if self.proc is None:
            return
        self._pending[dest].append(data)
        self._flush(dest)

    def _flush(self, dest: str, wait: bool = False) -> None:
        lock, pending = self._locks[dest], self._pending[dest]
        while pending:
            if not lock.acquire(blocking=wait):
                return  # the holder re-checks the queue after releasing
            try:
                while pending:
                    self._write(dest, pending.popleft())
            finally:
                lock.release()

    def _write(self, dest: str, data: bytes) -> None:
        assert self.proc is not None
        if dest == CLIENT:
            if self._client_gone:
                return
            try:
                write_all(self.client_out, data)
            except OSError:  # the client went away: nobody is left to serve
                self._client_gone = True
                self.terminate()
        else:
            if self._server_in_closed or self.proc.stdin is None:
                return
            try:
                write_all(self.proc.stdin.fileno(), data)
            except OSError:  # the server closed its stdin or died; its stdout EOF ends us
                self._server_in_closed = True

    def _dispatch(self, out: Output) -> None:
        for dest, data in out:
            self.send(dest, data)

    def _close_server_stdin(self) -> None:
        self._flush(SERVER, wait=True)  # every frame queued for the server goes first
        with self._locks[SERVER]:
            if not self._server_in_closed and self.proc is not None and self.proc.stdin is not None:
                self._server_in_closed = True
                with contextlib.suppress(OSError):
                    self.proc.stdin.close()

    # ------------------------------------------------------------ pumps

    def _pump(self, fd: int, on_line: Callable[[bytes], Output], track: bool = False) -> None:
        splitter = LineSplitter()
        while True:
            try:
                chunk = os.read(fd, READ_SIZE)
            except OSError:
                chunk = b""
            if not chunk:
                break
            if track:
                self._down_busy = True
            for line in splitter.feed(chunk):
                self._dispatch(on_line(line))
            if track:
                self._down_busy = False
        if track:
            self._down_busy = True  # EOF: only the tail is left, always finish it
        tail = splitter.tail()
        if tail:
            self._dispatch(on_line(tail))

    def _drain(self, down: threading.Thread) -> None:
        """After the server exited: let the last frames be masked and sent (however
        long a 30 MB frame takes), but do not hang on a grandchild that keeps the
        server's stdout open without writing."""
        deadline = time.monotonic() + DRAIN_AFTER_EXIT
        hard = time.monotonic() + DRAIN_HARD_CAP
        while down.is_alive():
            down.join(0.05)
            now = time.monotonic()
            # a frame still being masked or written extends the drain, unless we were
            # told to stop: a client that never reads must not hold a SIGTERM for minutes
            if self._down_busy and self.signal_received is None:
                deadline = now + DRAIN_AFTER_EXIT
            if now > deadline or now > hard:
                self.note("the server exited but its stdout is still open (a background child?); "
                          "stopping the relay")
                return

    def _answer_unanswered(self) -> None:
        """Error replies for the requests the server will never answer, written
        within DRAIN_AFTER_EXIT (a client that does not read cannot hold us)."""
        out = self.handler.server_gone()
        if not out or self._client_gone:
            return
        self._pending[CLIENT].extend(data for _dest, data in out)
        writer = threading.Thread(target=self._flush, args=(CLIENT, True), name="mcp-errors", daemon=True)
        writer.start()
        writer.join(DRAIN_AFTER_EXIT)

    def _upstream(self) -> None:
        try:
            self._pump(self.client_in, self.handler.from_client)
        finally:
            self._close_server_stdin()  # client EOF → server stdin EOF (MCP shutdown)

    def _downstream(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        self._pump(self.proc.stdout.fileno(), self.handler.from_server, track=True)

    # ------------------------------------------------------------ main

    def run(self) -> int:
        """Start the server, relay until it exits, return its status."""
        self.start()
        assert self.proc is not None
        # two pump threads: hand the GIL over fast (default 5 ms) so one direction's
        # masking work does not add latency to a small frame going the other way
        sys.setswitchinterval(0.0005)
        for fd in (self.proc.stdout.fileno() if self.proc.stdout else -1, self.client_in, self.client_out):
            grow_pipe(fd)
        in_main = threading.current_thread() is threading.main_thread()
        old: dict[int, object] = {}
        if in_main:
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                old[sig] = signal.signal(sig, self._on_signal)
        up = threading.Thread(target=self._upstream, name="mcp-up", daemon=True)
        down = threading.Thread(target=self._downstream, name="mcp-down", daemon=True)
        try:
            up.start()
            down.start()
            self.proc.wait()
            self._drain(down)
            self._answer_unanswered()
        finally:
            self._signal_group(signal.SIGTERM)  # leftovers of the server's group: no orphans
            if self._kill_timer is not None:
                self._kill_timer.cancel()
            if self.proc.poll() is None:  # interrupted before the server exited
                self._signal_group(signal.SIGKILL)
                self.proc.wait()
            for signum, handler in old.items():
                signal.signal(signum, handler)  # type: ignore[arg-type]
        rc = self.proc.returncode
        return 128 - rc if rc < 0 else rc
