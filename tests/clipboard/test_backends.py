"""Backends: exact commands, content over stdio only, timeouts and size limits.

macOS (pbpaste/pbcopy/osascript) and Windows (powershell.exe) cannot run on the
Linux CI: those backends are tested by the exact argv, stdin and environment
they would hand to the tool, through a recording runner. The runner itself
(run_tool) is tested with real processes.
"""

from __future__ import annotations

import os
import stat
import sys

import pytest

from tcg.clipboard.backends import (
    MAX_READ,
    MacBackend,
    PowerShellBackend,
    ToolResult,
    WaylandBackend,
    XclipBackend,
    XselBackend,
    has_image,
    is_rewritable_text,
    run_tool,
)

SECRET = b"ghp_Zq8Lm3Nv7Rt2Wx5Yb9Kc4Hd6Jf1Gs0Pa3Ue"


class Recorder:
    """Stands in for the tool (which cannot run here) and records each call."""

    def __init__(self, stdout: bytes = b"", problem: str | None = None, stderr: str = ""):
        self.calls: list[dict] = []
        self.stdout, self.problem, self.stderr = stdout, problem, stderr

    def __call__(self, argv, *, input=None, timeout=None, capture=True, max_output=None, env=None):
        self.calls.append({"argv": list(argv), "input": input, "timeout": timeout, "env": env})
        return ToolResult(0 if self.problem is None else 1, self.stdout, self.stderr, self.problem)


def _no_content_in_argv(rec: Recorder) -> None:
    for call in rec.calls:
        for arg in call["argv"]:
            assert SECRET.decode() not in arg


def test_macos_backend_runs_exactly_these_commands():
    # Mocked: pbpaste/pbcopy exist only on macOS. We assert the exact commands.
    rec = Recorder(stdout=b"token " + SECRET)
    be = MacBackend(runner=rec, env={"PATH": "/usr/bin"})
    assert be.read().data == b"token " + SECRET
    be.write(b"token <SECRET:x:1>")
    assert rec.calls[0]["argv"] == ["pbpaste", "-Prefer", "txt"]
    assert rec.calls[1]["argv"] == ["pbcopy"]
    assert rec.calls[1]["input"] == b"token <SECRET:x:1>"
    assert rec.calls[0]["env"]["LC_CTYPE"] == "UTF-8"  # pbcopy/pbpaste speak UTF-8 only then
    assert be.targets_argv() == ["osascript", "-e", "clipboard info"]
    _no_content_in_argv(rec)


def test_macos_clipboard_info_is_parsed_to_formats():
    rec = Recorder(stdout="«class PNGf», 1234, «class utf8», 20\n".encode())
    targets = MacBackend(runner=rec, env={}).targets()
    assert "image/png" in targets and has_image(targets)


def test_windows_backend_runs_exactly_these_commands():
    # Mocked: powershell.exe exists only on Windows. We assert the exact commands.
    rec = Recorder(stdout=SECRET)
    be = PowerShellBackend(runner=rec)
    be.read()
    be.write(b"masked \xe2\x9c\x93")
    prefix = ["powershell.exe", "-NoLogo", "-NoProfile", "-NonInteractive", "-Sta",
              "-ExecutionPolicy", "Bypass", "-Command"]
    read_argv, write_argv = rec.calls[0]["argv"], rec.calls[1]["argv"]
    assert read_argv[:-1] == prefix and write_argv[:-1] == prefix
    assert "Get-Clipboard -Raw" in read_argv[-1] and "[Console]::Out.Write($t)" in read_argv[-1]
    assert "UTF8Encoding" in read_argv[-1]
    assert "[Console]::In.ReadToEnd()" in write_argv[-1] and "Set-Clipboard -Value $t" in write_argv[-1]
    assert rec.calls[1]["input"] == b"masked \xe2\x9c\x93"  # content on stdin only
    assert "GetFormats()" in be.targets_argv()[-1]
    _no_content_in_argv(rec)


@pytest.mark.parametrize(
    ("cls", "read", "write", "targets"),
    [
        (XclipBackend, ["xclip", "-selection", "clipboard", "-t", "UTF8_STRING", "-o"],
         ["xclip", "-selection", "clipboard", "-t", "UTF8_STRING", "-i"],
         ["xclip", "-selection", "clipboard", "-t", "TARGETS", "-o"]),
        (XselBackend, ["xsel", "--clipboard", "--output"], ["xsel", "--clipboard", "--input"], None),
        (WaylandBackend, ["wl-paste", "--no-newline", "--type", "text/plain;charset=utf-8"],
         ["wl-copy", "--type", "text/plain;charset=utf-8"], ["wl-paste", "--list-types"]),
    ],
)
def test_linux_backend_commands(cls, read, write, targets):
    rec = Recorder(stdout=SECRET)
    be = cls(runner=rec)
    be.read()
    be.write(SECRET)
    assert rec.calls[0]["argv"] == read
    assert rec.calls[1]["argv"] == write and rec.calls[1]["input"] == SECRET
    assert be.targets_argv() == targets
    _no_content_in_argv(rec)


@pytest.mark.parametrize(
    ("stderr", "kind", "problem"),
    [
        ("Error: Can't open display: :77", "error", "display"),
        ("Error: target UTF8_STRING not available", "empty", None),
        ("No selection", "empty", None),
        ("No suitable type of content copied", "empty", None),
        ("something odd", "error", "failed"),
    ],
)
def test_read_failures_are_classified(stderr, kind, problem):
    res = XclipBackend(runner=Recorder(problem="failed", stderr=stderr)).read()
    assert res.kind == kind
    assert res.problem == problem


def test_targets_decide_what_is_rewritable_text():
    assert is_rewritable_text(["TARGETS", "UTF8_STRING"])
    assert is_rewritable_text(["text/html", "text/plain;charset=utf-8", "UTF8_STRING"])
    assert not is_rewritable_text(["TARGETS", "image/png"])
    assert not is_rewritable_text(["image/png", "UTF8_STRING", "text/html"])  # an image: left alone
    assert not is_rewritable_text(["application/x-foo"])


def _script(tmp_path, name, body):
    p = tmp_path / name
    p.write_text(f"#!{sys.executable}\n{body}\n")
    p.chmod(p.stat().st_mode | stat.S_IXUSR)
    return str(p)


def test_run_tool_times_out_a_hanging_tool(tmp_path):
    tool = _script(tmp_path, "hang", "import time; time.sleep(60)")
    res = run_tool([tool], timeout=0.5)
    assert res.problem == "timeout" and res.stdout == b""


def test_run_tool_stops_reading_past_the_limit(tmp_path):
    tool = _script(tmp_path, "big", "import sys; sys.stdout.buffer.write(b'x' * 3_000_000)")
    res = run_tool([tool], timeout=20, max_output=1_000_000)
    assert res.problem == "too-large" and res.stdout == b""
    assert MAX_READ >= 10 * 1024 * 1024  # a 10 MB clipboard is read whole


def test_run_tool_passes_content_on_stdin_and_reports_missing_tools(tmp_path):
    out = tmp_path / "got"
    tool = _script(tmp_path, "sink", f"import sys; open({str(out)!r}, 'wb').write(sys.stdin.buffer.read())")
    res = run_tool([tool], input=SECRET * 1000, capture=False, timeout=20)
    assert res.problem is None and out.read_bytes() == SECRET * 1000
    assert run_tool([str(tmp_path / "nope")]).problem == "missing"


def test_run_tool_does_not_wait_for_a_forked_selection_owner(tmp_path):
    # xclip -i / wl-copy fork a child that keeps the inherited fds; the write must return.
    tool = _script(tmp_path, "forks",
                   "import os, sys, time\nsys.stdin.buffer.read()\n"
                   "if os.fork() == 0:\n    time.sleep(30)\n    os._exit(0)\n")
    res = run_tool([tool], input=b"abc", capture=False, timeout=10)
    assert res.problem is None


def test_run_tool_failure_keeps_stderr_line(tmp_path):
    tool = _script(tmp_path, "fail", "import sys; sys.stderr.write('Error: boom\\n'); sys.exit(3)")
    res = run_tool([tool])
    assert res.problem == "failed" and res.returncode == 3 and "boom" in res.stderr
    assert os.name == "posix"
