"""Find and stop the masking fork servers (tcg.runner.maskserver) a test started.

Every test has its own TCG_HOME, so every test that runs a session may start a
server of its own; the hermetic fixture stops them when the test ends (they
would otherwise wait out their idle time)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

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
