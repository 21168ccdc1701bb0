"""Real clipboard fixtures: an Xvfb server of our own, xclip to copy and paste.

Xvfb picks a free display itself (-displayfd). xclip -i forks a child that owns
the selection until another client takes it; those children die with the X
server, which the fixture stops at the end of the session.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time

import pytest

from tests.helpers.waiting import wait_for

needs_x = pytest.mark.skipif(
    not (shutil.which("Xvfb") and shutil.which("xclip")), reason="Xvfb and xclip are required"
)


class XServer:
    """A private Xvfb; ``display`` is e.g. ":7"."""

    def __init__(self, display_num: int | None = None):
        self.display_num = display_num
        self.proc: subprocess.Popen | None = None

    @property
    def display(self) -> str:
        return f":{self.display_num}"

    def start(self) -> XServer:
        r, w = os.pipe()
        argv = ["Xvfb", "-nolisten", "tcp", "-screen", "0", "320x200x24"]
        if self.display_num is None:
            # Xvfb picks a free display and writes its number there once it is up
            argv[1:1] = ["-displayfd", str(w)]
        else:
            argv.insert(1, self.display)
        self.proc = subprocess.Popen(argv, pass_fds=(w,), stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        os.close(w)
        if self.display_num is None:
            data = b""
            while not data.endswith(b"\n"):
                chunk = os.read(r, 64)  # EOF if Xvfb dies
                if not chunk:
                    break
                data += chunk
            if not data.strip():
                os.close(r)
                self.stop()
                pytest.skip("Xvfb did not start")
            self.display_num = int(data.strip())
        os.close(r)
        self._wait_ready()
        return self

    def _wait_ready(self) -> None:
        """Ready = a copy through xclip can be pasted back."""
        deadline = time.monotonic() + 30
        env = {**os.environ, "DISPLAY": self.display}
        probe = f"ready-{os.getpid()}-{time.monotonic()}".encode()
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                break
            w = subprocess.run(["xclip", "-selection", "clipboard", "-i"], input=probe, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10)
            if w.returncode == 0:
                r = subprocess.run(["xclip", "-selection", "clipboard", "-o"], env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=10)
                if r.stdout == probe:
                    return
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"Xvfb on {self.display} never became ready")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        self.proc = None


@pytest.fixture(scope="session")
def xserver():
    if not (shutil.which("Xvfb") and shutil.which("xclip")):
        pytest.skip("Xvfb and xclip are required")
    srv = XServer().start()
    yield srv
    srv.stop()


@pytest.fixture
def display(xserver, monkeypatch) -> str:
    """DISPLAY of the session's Xvfb, with the clipboard emptied of earlier content."""
    monkeypatch.setenv("DISPLAY", xserver.display)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    copy(b"-")
    return xserver.display


def copy(data: bytes, target: str = "UTF8_STRING", wait: bool = True) -> None:
    """Put ``data`` on the CLIPBOARD selection like a user would (xclip owns it).

    xclip -i returns before its forked child has taken the selection (Xlib sends
    the request at the child's first flush), so wait until a paste shows it.
    """
    subprocess.run(["xclip", "-selection", "clipboard", "-t", target, "-i"], input=data,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, timeout=20)
    if wait:  # (not when a running watcher may already have replaced it)
        wait_for(lambda: paste(target) == data, timeout=20)


def paste(target: str = "UTF8_STRING") -> bytes:
    r = subprocess.run(["xclip", "-selection", "clipboard", "-t", target, "-o"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=20)
    return r.stdout


