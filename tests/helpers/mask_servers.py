"""Find and stop the masking fork servers (tcg.runner.maskserver) a test started.

Every test has its own TCG_HOME, so every test that runs a session may start a
server of its own; the hermetic fixture stops them when the test ends (they
would otherwise wait out their idle time)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.helpers.waiting import wait_for

SERVER_MARK = b"tcg.runner.maskserver --server"


def _read(pid: int, name: str) -> bytes:
    try:
        with open(f"/proc/{pid}/{name}", "rb") as fh:  # not pathlib: see _marked
            return fh.read()
    except OSError:
        return b""


def _ppid(pid: int) -> int:
    stat = _read(pid, "stat")
    fields = stat.rpartition(b")")[2].split()
    return int(fields[1]) if len(fields) > 1 else 0


def _marked(tcg_home: Path | str) -> list[int]:
    """Processes running the server's code (servers and the workers they forked)
    that were started with this TCG_HOME."""
    # os, not pathlib: a test that sets os.name to "nt" (the Windows code paths) is
    # still patched when the hermetic fixture's teardown calls this
    if not os.path.isdir("/proc"):
        return []
    want = b"TCG_HOME=" + os.fsencode(str(tcg_home))
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and SERVER_MARK in _read(int(entry), "cmdline"):
            if want in _read(int(entry), "environ").split(b"\0"):
                out.append(int(entry))
    return out


def _is_server(pid: int) -> bool:
    """A server reads /dev/null; a worker reads its session's output pipe (and
    outlives a killed server, when its parent is no longer a server)."""
    try:
        return os.readlink(f"/proc/{pid}/fd/0") == os.devnull
    except OSError:
        return False


def mask_servers(tcg_home: Path | str) -> list[int]:
    """The server processes of this TCG_HOME (not their workers)."""
    return [pid for pid in _marked(tcg_home) if _is_server(pid)]


def served_workers(tcg_home: Path | str) -> list[int]:
    """Masking workers forked by this TCG_HOME's server."""
    return [pid for pid in _marked(tcg_home) if not _is_server(pid)]


def stop_mask_servers(tcg_home: Path | str) -> None:
    for pid in mask_servers(tcg_home):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def listening(env: dict[str, str] | os._Environ[str]) -> bool:
    """The server of ``env``'s install and TCG_HOME accepts connections (it has
    loaded: it binds its socket only then)."""
    import socket

    from tcg.runner.maskserver import socket_path

    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        s.connect(socket_path(env))
        return True
    except OSError:
        return False
    finally:
        s.close()


# A listener that records how many descriptors and bytes its one connection brought.
FAKE_SERVER = """
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(sys.argv[1])
s.listen(4)
open(sys.argv[2] + ".ready", "w").close()
c, _ = s.accept()
c.settimeout(60)
try:
    msg, fds, _, _ = socket.recv_fds(c, 1 << 20, 8)
except OSError:
    msg, fds = b"", []
open(sys.argv[2], "w").write("%d %d" % (len(fds), len(msg)))
"""


@contextmanager
def fake_listener(path: str, report: Path) -> Iterator[subprocess.Popen[bytes]]:
    """FAKE_SERVER bound at ``path`` in namespaces of its own (bwrap): what a command
    inside the agents' OS view (the same uid, tcg's state dir writable) could do.
    It writes what it received to ``report``; the socket is removed afterwards."""
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    fake = subprocess.Popen(["bwrap", "--dev-bind", "/", "/", "--", sys.executable, "-I", "-c",
                             FAKE_SERVER, path, str(report)])
    try:
        wait_for(lambda: Path(str(report) + ".ready").exists() or fake.poll() is not None, 60,
                 "the fake server to listen")
        assert fake.poll() is None, "bwrap could not start the fake server"
        yield fake
    finally:
        if fake.poll() is None:
            fake.kill()
            fake.wait()
        if os.path.exists(path):
            os.unlink(path)
