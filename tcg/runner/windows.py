"""Windows adapter: pywinpty (ConPTY) behind the runner interface.

Cannot run on the Linux CI; kept small and import-safe (pywinpty is imported
only when a child is spawned). pywinpty's ``read()`` returns ``str``: it is
re-encoded here so only bytes leave the adapter. ConPTY re-renders the screen
(it repaints rather than passing bytes through), so masking in PTY mode is best effort on
Windows; the agent case uses pipes, like on POSIX. There is no SIGWINCH: the
loop polls the console size and calls ``set_size``.
"""

from __future__ import annotations

from typing import Any

from tcg.osutil import SpawnError
from tcg.runner.base import SIGNAL_BASE


class WindowsPty:
    """A child on a ConPTY. ``fd`` is unsupported: use ``read``/``write`` from threads."""

    def __init__(self, proc: Any):
        self._proc = proc
        self.pid: int = int(proc.pid)
        self.status: int | None = None

    @property
    def fd(self) -> int:
        raise NotImplementedError("ConPTY handles are not selectable; use read()/write()")

    def read(self, size: int = 65536) -> bytes:
        """Bytes from the child; b"" at EOF."""
        try:
            text = self._proc.read(size)
        except EOFError:
            return b""
        return text.encode("utf-8", "surrogateescape") if isinstance(text, str) else bytes(text)

    def write(self, data: bytes) -> int:
        self._proc.write(data.decode("utf-8", "surrogateescape"))
        return len(data)

    def set_size(self, rows: int, cols: int) -> None:
        self._proc.setwinsize(rows, cols)

    def poll(self) -> int | None:
        if self.status is None and not self._proc.isalive():
            self.status = self._code()
        return self.status

    def wait(self) -> int:
        import time

        while self.poll() is None:
            time.sleep(0.02)
        return self.status if self.status is not None else 1

    def _code(self) -> int:
        code = getattr(self._proc, "exitstatus", None)
        if code is None:
            sig = getattr(self._proc, "signalstatus", None)
            return SIGNAL_BASE + int(sig) if sig else 1
        return int(code)

    def send_signal(self, sig: int) -> None:
        if sig == 2:  # SIGINT: ConPTY turns ^C into CTRL_C_EVENT
            self._proc.write("\x03")
        else:
            self._proc.terminate(force=True)

    def close(self) -> None:
        try:
            self._proc.close()
        except Exception:  # noqa: BLE001 - best effort on an already-dead child
            pass


def powershell_argv(line: str, exe: str = "powershell.exe") -> list[str]:
    """How a PowerShell line is run (docs/shells.md): no profile, no prompt, one -Command."""
    return [exe, "-NoLogo", "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-Command", line]


def spawn_pty(argv: list[str], env: dict[str, str], *, size: tuple[int, int] | None = None) -> WindowsPty:
    """Start ``argv`` on a ConPTY of ``size`` (rows, cols)."""
    try:
        from winpty import PtyProcess  # type: ignore[import-not-found]
    except ImportError as exc:
        raise SpawnError(f"pywinpty is not installed ({exc})", 127) from None
    rows, cols = size or (24, 80)
    try:
        proc = PtyProcess.spawn(argv, env=env, dimensions=(rows, cols))
    except OSError as exc:
        raise SpawnError(f"{argv[0]}: {exc}", 127) from None
    return WindowsPty(proc)
