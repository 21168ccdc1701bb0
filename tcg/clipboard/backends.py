"""Clipboard backends: one class per platform tool behind one small interface.

Content always travels over the tool's stdin/stdout, never on its command
line (argv is visible to every user in ``ps``). Every call has a timeout, and a
read stops (and kills the tool) past a size limit so a huge clipboard cannot
exhaust memory. Failures come back as values (``ReadResult``/``ToolResult``)
with a short problem key, not as exceptions: the watcher must keep running.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

READ_TIMEOUT = 3.0  # seconds for one read (10 MB through INCR takes well under this)
WRITE_TIMEOUT = 5.0
MAX_READ = 64 * 1024 * 1024  # bytes: larger contents are left alone (never partially rewritten)

TEXT_TARGETS = frozenset(
    {"UTF8_STRING", "STRING", "TEXT", "COMPOUND_TEXT", "text/plain", "text/plain;charset=utf-8",
     "text/plain;charset=UTF-8", "public.utf8-plain-text", "utf8", "Text", "UnicodeText"}
)


@dataclass(frozen=True)
class ToolResult:
    """What one tool call did. ``problem`` is None on success, else a short key."""

    returncode: int | None
    stdout: bytes = b""
    stderr: str = ""
    problem: str | None = None  # missing | timeout | too-large | failed | os-error


@dataclass(frozen=True)
class ReadResult:
    """One clipboard read. ``kind``: text | empty | not-text | error."""

    kind: str
    data: bytes = b""
    problem: str | None = None  # for kind == "error": the problem key (display, timeout, …)
    detail: str = ""  # one line for the log (the tool's stderr, never clipboard content)
    targets: tuple[str, ...] = field(default=())


Runner = Callable[..., ToolResult]


def run_tool(argv: Sequence[str], *, input: bytes | None = None, timeout: float = READ_TIMEOUT,
             capture: bool = True, max_output: int = MAX_READ,
             env: Mapping[str, str] | None = None) -> ToolResult:
    """Run one clipboard tool with a hard timeout; content only via stdin/stdout.

    stderr goes to an unlinked temp file, not a pipe: ``xclip -i`` and ``wl-copy``
    fork a child that keeps the selection (and the inherited fds) alive, and a
    pipe would never reach EOF. For the same reason writes do not capture stdout.
    """
    errf = tempfile.TemporaryFile()
    try:
        try:
            proc = subprocess.Popen(
                list(argv),
                stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
                stderr=errf,
                close_fds=True,
                env=dict(env) if env is not None else None,
                # no console window flashing up per poll on Windows
                creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),
            )
        except FileNotFoundError:
            return ToolResult(None, problem="missing", stderr=f"{argv[0]}: not found")
        except OSError as exc:
            return ToolResult(None, problem="os-error", stderr=f"{argv[0]}: {exc.strerror}")
        problem: str | None = None
        out = b""
        try:
            if capture and input is None and os.name == "posix":
                out, problem = _read_capped(proc, timeout, max_output)
            else:
                out = proc.communicate(input=input, timeout=timeout)[0] or b""
                if len(out) > max_output:
                    out, problem = b"", "too-large"
        except subprocess.TimeoutExpired:
            problem = "timeout"
        except OSError:  # e.g. EPIPE: the tool exited before reading all of stdin
            problem = "failed"
        if problem is not None:
            _kill(proc)
            out = b""
        else:
            try:
                proc.wait(timeout=max(0.5, timeout))
            except subprocess.TimeoutExpired:
                _kill(proc)
                problem, out = "timeout", b""
        errf.seek(0)
        err = errf.read(4096).decode("utf-8", "replace").strip()
        rc = proc.returncode
        if problem is None and rc != 0:
            problem = "failed"
        return ToolResult(rc, out, err, problem)
    finally:
        errf.close()


def _read_capped(proc: subprocess.Popen[bytes], timeout: float,
                 max_output: int) -> tuple[bytes, str | None]:
    """Read stdout until EOF, a deadline or ``max_output`` bytes (POSIX pipes)."""
    import selectors

    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    chunks: list[bytes] = []
    total = 0
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return b"", "timeout"
            if not sel.select(left):
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > max_output:
                return b"", "too-large"
            chunks.append(chunk)
    proc.stdout.close()
    return b"".join(chunks), None


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        proc.kill()
    except OSError:
        pass
    try:
        proc.wait(timeout=2)
    except subprocess.TimeoutExpired:  # pragma: no cover - unkillable (D state)
        pass
    for f in (proc.stdin, proc.stdout):
        if f is not None:
            try:
                f.close()
            except OSError:
                pass


def has_image(targets: Sequence[str]) -> bool:
    return any(t.lower().startswith("image/") or t in ("PNGf", "TIFF", "Bitmap", "DeviceIndependentBitmap")
               for t in targets)


def is_rewritable_text(targets: Sequence[str]) -> bool:
    """Whether an owner offering ``targets`` holds text tcg may rewrite.

    Images (and any owner without a text target) are left alone: writing text
    back would destroy them, and their bytes are not what an agent would paste.
    """
    return not has_image(targets) and any(t in TEXT_TARGETS or t.startswith("text/plain") for t in targets)


class Backend:
    """A platform clipboard tool. Subclasses define the exact commands."""

    name = "base"
    #: the executable whose absence makes this backend unavailable
    tool = ""
    #: apt/brew/other package that provides ``tool``
    package = ""

    def __init__(self, runner: Runner | None = None, env: Mapping[str, str] | None = None):
        self.runner: Runner = runner or run_tool
        self.env = env
        self.read_timeout = READ_TIMEOUT
        self.write_timeout = WRITE_TIMEOUT
        self.max_read = MAX_READ

    # the exact commands (tests on Linux assert them for macOS/Windows) ---------
    def read_argv(self) -> list[str]:
        raise NotImplementedError

    def write_argv(self) -> list[str]:
        raise NotImplementedError

    def targets_argv(self) -> list[str] | None:
        """Command listing the offered formats, or None when the tool cannot."""
        return None

    # behaviour -------------------------------------------------------------------
    def classify_error(self, res: ToolResult) -> tuple[str, str]:
        """(kind, problem) for a failed read: empty/not-text are normal states."""
        err = res.stderr.lower()
        if res.problem in ("missing", "timeout", "too-large", "os-error"):
            return "error", str(res.problem)
        if "can't open display" in err or "cannot open display" in err or "failed to connect" in err:
            return "error", "display"
        if ("not available" in err or "no selection" in err or "nothing is copied" in err
                or "no suitable type" in err):
            return "empty", ""
        return "error", "failed"

    def change_hint(self) -> Any:
        """A cheap "did the clipboard change?" signal (``SelectionHint``) or None."""
        return None

    def targets(self) -> tuple[str, ...] | None:
        argv = self.targets_argv()
        if argv is None:
            return None
        res = self.runner(argv, timeout=self.read_timeout, env=self.env)
        if res.problem is not None:
            return ()
        text = res.stdout.decode("utf-8", "replace")
        return tuple(t.strip() for t in text.replace(",", "\n").splitlines() if t.strip())

    def read(self) -> ReadResult:
        """Read the clipboard's text (bytes as the tool gives them, UTF-8 expected)."""
        res = self.runner(self.read_argv(), timeout=self.read_timeout, max_output=self.max_read,
                          env=self.env)
        if res.problem is not None:
            kind, problem = self.classify_error(res)
            if kind == "empty":
                return ReadResult("empty")
            return ReadResult("error", problem=problem, detail=_one_line(res.stderr))
        if not res.stdout:
            return ReadResult("empty")
        return ReadResult("text", res.stdout)

    def write(self, data: bytes) -> ToolResult:
        """Replace the clipboard with ``data`` (whole, over stdin)."""
        return self.runner(self.write_argv(), input=data, timeout=self.write_timeout, capture=False,
                           env=self.env)


def _one_line(text: str) -> str:
    return (text.splitlines() or [""])[0][:200]


class _X11Backend(Backend):
    def change_hint(self) -> Any:
        from tcg.clipboard.x11 import SelectionHint

        env = os.environ if self.env is None else self.env
        display = env.get("DISPLAY")
        return SelectionHint(display, env) if display else None


class XclipBackend(_X11Backend):
    """X11 through xclip. The owner may answer any target with its data (xclip
    does), so a change is confirmed against TARGETS before it is treated as text."""

    name = "xclip"
    tool = "xclip"
    package = "xclip"
    selection = "clipboard"

    def read_argv(self) -> list[str]:
        return ["xclip", "-selection", self.selection, "-t", "UTF8_STRING", "-o"]

    def write_argv(self) -> list[str]:
        return ["xclip", "-selection", self.selection, "-t", "UTF8_STRING", "-i"]

    def targets_argv(self) -> list[str]:
        return ["xclip", "-selection", self.selection, "-t", "TARGETS", "-o"]


class XselBackend(_X11Backend):
    """X11 through xsel; xsel converts to text itself and cannot list targets."""

    name = "xsel"
    tool = "xsel"
    package = "xsel"

    def read_argv(self) -> list[str]:
        return ["xsel", "--clipboard", "--output"]

    def write_argv(self) -> list[str]:
        return ["xsel", "--clipboard", "--input"]


class WaylandBackend(Backend):
    """Wayland through wl-clipboard (wl-paste / wl-copy)."""

    name = "wl-clipboard"
    tool = "wl-paste"
    package = "wl-clipboard"

    def read_argv(self) -> list[str]:
        return ["wl-paste", "--no-newline", "--type", "text/plain;charset=utf-8"]

    def write_argv(self) -> list[str]:
        return ["wl-copy", "--type", "text/plain;charset=utf-8"]

    def targets_argv(self) -> list[str]:
        return ["wl-paste", "--list-types"]


class MacBackend(Backend):
    """macOS pbpaste/pbcopy; a UTF-8 locale makes them speak UTF-8 on stdio."""

    name = "pbpaste"
    tool = "pbpaste"
    package = "(part of macOS)"

    def __init__(self, runner: Runner | None = None, env: Mapping[str, str] | None = None):
        base = dict(os.environ if env is None else env)
        base["LC_CTYPE"] = "UTF-8"
        super().__init__(runner, base)

    def read_argv(self) -> list[str]:
        return ["pbpaste", "-Prefer", "txt"]

    def write_argv(self) -> list[str]:
        return ["pbcopy"]

    def targets_argv(self) -> list[str]:
        # Prints e.g. "«class PNGf», 1234, «class utf8», 20": format names only.
        return ["osascript", "-e", "clipboard info"]

    def targets(self) -> tuple[str, ...] | None:
        raw = super().targets()
        if not raw:
            return raw
        names = []
        for t in raw:
            t = t.replace("«class ", "").replace("»", "").strip()
            if t and not t.isdigit():
                names.append({"PNGf": "image/png", "TIFF": "image/tiff", "utf8": "utf8",
                              "ut16": "utf8"}.get(t, t))
        return tuple(names)


class PowerShellBackend(Backend):
    """Windows PowerShell Get-Clipboard/Set-Clipboard with UTF-8 on stdio.

    The scripts are constants: content never enters the command line. Each call
    starts PowerShell (~0.3 s), so polling is slower here (docs/clipboard.md).
    """

    name = "powershell"
    tool = "powershell.exe"
    package = "(part of Windows)"
    PREFIX = ["powershell.exe", "-NoLogo", "-NoProfile", "-NonInteractive", "-Sta",
              "-ExecutionPolicy", "Bypass", "-Command"]
    READ_SCRIPT = ("[Console]::OutputEncoding = [Text.UTF8Encoding]::new($false); "
                   "$t = Get-Clipboard -Raw; if ($null -ne $t) { [Console]::Out.Write($t) }")
    WRITE_SCRIPT = ("[Console]::InputEncoding = [Text.UTF8Encoding]::new($false); "
                    "$t = [Console]::In.ReadToEnd(); Set-Clipboard -Value $t")
    TARGETS_SCRIPT = ("Add-Type -AssemblyName System.Windows.Forms; "
                      "$d = [Windows.Forms.Clipboard]::GetDataObject(); "
                      "if ($d) { $d.GetFormats() }")

    def read_argv(self) -> list[str]:
        return [*self.PREFIX, self.READ_SCRIPT]

    def write_argv(self) -> list[str]:
        return [*self.PREFIX, self.WRITE_SCRIPT]

    def targets_argv(self) -> list[str]:
        return [*self.PREFIX, self.TARGETS_SCRIPT]


BACKENDS: dict[str, type[Backend]] = {
    cls.name: cls
    for cls in (XclipBackend, XselBackend, WaylandBackend, MacBackend, PowerShellBackend)
}
ALIASES = {"wl-paste": "wl-clipboard", "wayland": "wl-clipboard", "pbcopy": "pbpaste",
           "macos": "pbpaste", "windows": "powershell", "pwsh": "powershell"}

__all__ = ["ALIASES", "BACKENDS", "Backend", "MacBackend", "PowerShellBackend", "ReadResult",
           "ToolResult", "WaylandBackend", "XclipBackend", "XselBackend", "has_image",
           "is_rewritable_text", "run_tool"]
