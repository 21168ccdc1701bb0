"""The session on Windows: PowerShell on a ConPTY (pywinpty), threads instead
of select().

Same station as on POSIX (tcg.runner.session): every output byte through the
terminal masker, each line decided by tcg.runner.session_decide before
PSReadLine accepts it. What differs is the plumbing: ConPTY handles are not
selectable, so one thread each reads the console, reads the child, serves
the verdict channel and polls the console size (there is no SIGWINCH); the
channel is one duplex named pipe (``TCG_SESSION_PIPE``) that the hook opens
by name. The masker runs in this process (the masking process is POSIX-only).

ConPTY re-renders the screen, so what the masker sees is a VT re-encoding of
the console, not the child's own bytes: masking is best effort here
(docs/shells.md). This module cannot run on the project's Linux CI; its
threads are tested there against fakes of the console, the child and the pipe
(tests/runner/test_session_windows.py), and for real on a Windows runner
(.github/workflows/shells.yml).
"""

from __future__ import annotations

import os
import threading
import time

from tcg.runner import session_channel as ch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Protocol

    class Console(Protocol):
        def read(self) -> bytes: ...  # blocking; b"" at end
        def write(self, data: bytes) -> None: ...
        def size(self) -> tuple[int, int] | None: ...

    class Pipe(Protocol):
        def read(self) -> bytes: ...  # blocking; b"" when the client went away
        def write(self, data: bytes) -> None: ...
        def close(self) -> None: ...

SIZE_POLL = 0.25  # seconds between two looks at the console size
PIPE_PREFIX = "tcg-session-"


class QueueAsker:
    """TerminalAsker for a console read by another thread: while a question is
    open, the input thread hands its bytes here instead of to the child."""

    YES = frozenset(b"yY")
    NO = frozenset(b"nN\r\n\x03\x04\x1b")

    def __init__(self, console: Console, timeout: float = 300.0):
        self.console = console
        self.timeout = timeout
        self.asking = threading.Event()
        self._keys: list[int] = []
        self._got = threading.Condition()

    def offer(self, data: bytes) -> bool:
        """Called by the input thread: True when the bytes were taken for a question."""
        if not self.asking.is_set():
            return False
        with self._got:
            self._keys.extend(data)
            self._got.notify()
        return True

    def ask(self, question: str) -> bool:
        self.console.write(("\r\n" + question + " [y/N] ").encode("utf-8", "replace"))
        answer = False
        with self._got:
            self._keys.clear()
            self.asking.set()
            deadline = time.monotonic() + self.timeout
            try:
                while True:
                    key = next((k for k in self._keys if k in self.YES or k in self.NO), None)
                    if key is not None:
                        answer = key in self.YES
                        break
                    self._keys.clear()
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._got.wait(left)
            finally:
                self.asking.clear()
        self.console.write(b"yes\r\n" if answer else b"no\r\n")
        return answer


class WindowsSessionLoop:
    """Runs one session: returns the child's exit code."""

    def __init__(self, child: Any, console: Console, pipe: Pipe, out_filter: Any,
                 decider_factory: Callable[[QueueAsker], Any], poll: float = SIZE_POLL):
        self.child = child
        self.console = console
        self.pipe = pipe
        self.filter = out_filter
        self.asker = QueueAsker(console)
        self.decider = decider_factory(self.asker)
        self.poll = poll
        self.done = threading.Event()
        self._out_lock = threading.Lock()
        self._filter_lock = threading.Lock()  # the masker is fed by one thread, released by another
        self.errors: list[BaseException] = []

    def _guard(self, fn: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                fn()
            except BaseException as exc:  # noqa: BLE001 - reported after the loop
                self.errors.append(exc)
                self.done.set()
        return run

    def _write_out(self, data: bytes) -> None:
        if data:
            with self._out_lock:
                self.console.write(data)

    def _child_output(self) -> None:
        while True:
            data = self.child.read(65536)
            if not data:
                break
            with self._filter_lock:
                out = self.filter.feed(data)
            self._write_out(out)
        with self._filter_lock:
            out = self.filter.flush()
        self._write_out(out)
        self.done.set()

    def _release_held(self) -> None:
        """Terminal mode: a held possible-secret tail goes out at its deadline."""
        with self._filter_lock:
            deadline = self.filter.idle_deadline()
            out = self.filter.release_idle() if deadline is not None and \
                time.monotonic() >= deadline else b""
        self._write_out(out)

    def _console_input(self) -> None:
        while not self.done.is_set():
            data = self.console.read()
            if not data:
                return
            if not self.asker.offer(data):
                self.child.write(data)

    def _channel(self) -> None:
        reader = ch.RequestReader()
        while not self.done.is_set():
            data = self.pipe.read()
            if not data:
                return
            for req in reader.feed(data):
                self.decider.answer(req, self.pipe.write)

    def _sizes(self) -> None:
        last = None
        while not self.done.wait(self.poll):
            size = self.console.size()
            if size and size != last:
                last = size
                self.child.set_size(*size)

    def run(self) -> int:
        threads = [threading.Thread(target=self._guard(fn), daemon=True)
                   for fn in (self._child_output, self._console_input, self._channel, self._sizes)]
        for t in threads:
            t.start()
        while not self.done.wait(0.05):
            self._release_held()
            if self.child.poll() is not None:
                threads[0].join(2.0)  # the rest of the output
                break
        self.done.set()
        self.pipe.close()
        if self.errors and self.child.poll() is None:
            self.child.send_signal(9)
        code = self.child.wait()
        return code


def pipe_name(session_id: str) -> str:
    return PIPE_PREFIX + session_id


class NamedPipeServer:
    """The duplex named pipe ``\\\\.\\pipe\\tcg-session-ID`` (one client: the shell)."""

    def __init__(self, name: str):
        import importlib

        w: Any = importlib.import_module("_winapi")  # Windows only
        self._w = w
        self.path = r"\\.\pipe" + "\\" + name
        self.handle = w.CreateNamedPipe(
            self.path, w.PIPE_ACCESS_DUPLEX, w.PIPE_TYPE_BYTE | w.PIPE_READMODE_BYTE | w.PIPE_WAIT,
            1, 65536, 65536, 0, w.NULL)
        self._connected = False

    def read(self) -> bytes:
        if not self._connected:
            try:
                self._w.ConnectNamedPipe(self.handle, False)
            except OSError:
                pass  # ERROR_PIPE_CONNECTED: the client came first
            self._connected = True
        try:
            data, _ = self._w.ReadFile(self.handle, 65536)
        except OSError:
            return b""
        return bytes(data)

    def write(self, data: bytes) -> None:
        try:
            self._w.WriteFile(self.handle, data)
        except OSError:
            pass

    def close(self) -> None:
        try:
            self._w.CloseHandle(self.handle)
        except OSError:
            pass


class WindowsConsole:
    """The real console: virtual-terminal input and output, raw while the session runs."""

    def __init__(self) -> None:
        import msvcrt  # type: ignore[import-not-found]  # noqa: F401 - Windows only
        import sys

        self._in: Any = getattr(sys.stdin.buffer, "raw")  # noqa: B009 - typed as BinaryIO
        self._out: Any = getattr(sys.stdout.buffer, "raw")  # noqa: B009
        self._modes = _enable_vt()

    def read(self) -> bytes:
        try:
            return self._in.read(4096) or b""
        except OSError:
            return b""

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            n = self._out.write(view)
            view = view[n or len(view):]

    def size(self) -> tuple[int, int] | None:
        try:
            cols, rows = os.get_terminal_size()
        except OSError:
            return None
        return rows, cols

    def restore(self) -> None:
        _set_modes(self._modes)


def _enable_vt() -> tuple[int, int]:  # pragma: no cover - Windows only
    import ctypes

    k32 = ctypes.windll.kernel32  # type: ignore[attr-defined]
    h_in, h_out = k32.GetStdHandle(-10), k32.GetStdHandle(-11)
    mode_in, mode_out = ctypes.c_uint32(), ctypes.c_uint32()
    k32.GetConsoleMode(h_in, ctypes.byref(mode_in))
    k32.GetConsoleMode(h_out, ctypes.byref(mode_out))
    # input: raw bytes as VT sequences (ENABLE_VIRTUAL_TERMINAL_INPUT), no line
    # editing or echo; output: VT processing on
    k32.SetConsoleMode(h_in, 0x0200)
    k32.SetConsoleMode(h_out, mode_out.value | 0x0004 | 0x0001)
    return mode_in.value, mode_out.value


def _set_modes(modes: tuple[int, int]) -> None:  # pragma: no cover - Windows only
    import ctypes

    k32 = ctypes.windll.kernel32  # type: ignore[attr-defined]
    k32.SetConsoleMode(k32.GetStdHandle(-10), modes[0])
    k32.SetConsoleMode(k32.GetStdHandle(-11), modes[1])


def run_windows_session(shell: str, args: list[str], env: dict[str, str], session_id: str,
                        base_env: dict[str, str]) -> int:  # pragma: no cover - Windows only
    """`tcg_shell session` on Windows."""
    from tcg.runner.base import LazyFilter
    from tcg.runner.session_decide import SessionDecider
    from tcg.runner.session_events import EventRecorder
    from tcg.runner.windows import spawn_pty

    console = WindowsConsole()
    name = pipe_name(session_id)
    pipe = NamedPipeServer(name)
    recorder = EventRecorder(base_env)
    try:
        child = spawn_pty([shell, *args], {**env, "TCG_SESSION_PIPE": name}, size=console.size())

        def masker() -> Any:
            from tcg.mask import masker_for
            from tcg.runner.session_mask import _load

            return masker_for(_load(), "terminal")

        def decider(asker: QueueAsker) -> SessionDecider:
            d = SessionDecider(base_env, asker, recorder)  # type: ignore[arg-type]
            d.station.session = session_id
            return d

        loop = WindowsSessionLoop(child, console, pipe, LazyFilter(masker), decider)
        try:
            return loop.run()
        finally:
            loop.decider.close()  # the shell is gone: settle its last line's delete-guard saves
    finally:
        console.restore()
        recorder.close()
