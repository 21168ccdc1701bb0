"""The same view built by bubblewrap (``sandbox.mechanism = "bwrap"``, or ``auto``
where the kernel lets only bwrap create namespaces).

The command line: the whole filesystem as it is (``--dev-bind / /``), a new PID
namespace with its own ``/proc``, and one ``--ro-bind-data FD STORE`` per store
(bwrap copies the fd's bytes into a read-only file of its own: an empty memfd for
covered stores, one memfd per twin). Differences from the namespaces mechanism:
bwrap's PID 1 ends every background process when the command exits, and each
read-only bind costs bwrap a re-read of the mount table (~0.2 ms per store).

Whether the command ran: bwrap exits 1 both when it cannot build the view (no
namespaces — inside another sandbox, say — or a bind that fails) and when the
command exits 1. ``--json-status-fd`` tells them apart: bwrap writes the
command's ``exit-code`` there only once its setup finished, so a run without
that record never reached the command (tcg.runner.agent_view then refuses it as
``sandbox-unavailable``).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from tcg.sandbox.linux import View

ROOT_DROPPED = ("CAP_SYS_ADMIN", "CAP_DAC_READ_SEARCH", "CAP_SYS_PTRACE", "CAP_SYS_MODULE", "CAP_SYS_RAWIO",
                "CAP_MKNOD")


def _memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name, 0)  # inheritable: bwrap reads it
    if data:
        os.write(fd, data)
        os.lseek(fd, 0, os.SEEK_SET)
    return fd


SETUP_FAILED_EXIT = 1  # bwrap's own exit status when it gives up


def arguments(exe: str, view: View, fds: Callable[[bytes], int], root: bool, status_fd: int | None = None
              ) -> list[str]:
    """bwrap's argv before the command (``fds(data)`` returns an fd holding ``data``;
    ``status_fd`` receives bwrap's JSON status lines)."""
    args = [exe, "--dev-bind", "/", "/"]
    if not root:
        args.append("--unshare-user")
    else:
        for cap in ROOT_DROPPED:
            args += ["--cap-drop", cap]
    args += ["--unshare-pid", "--proc", "/proc", "--die-with-parent"]
    if status_fd is not None:
        args += ["--json-status-fd", str(status_fd)]
    for path, twin in view.targets:  # bwrap reads and closes each fd: one per store
        if os.path.isfile(path):
            args += ["--ro-bind-data", str(fds(b"" if twin < 0 else view.twins[twin])), path]
    args.append("--")
    return args


class Wrapper:
    """bwrap's argv for a command, the fds it reads, and whether the command ran."""

    def __init__(self, exe: str, view: View):
        self.exe = exe
        self.view = view
        self.opened: list[int] = []
        self.status_r: int | None = None
        self.prefix: list[str] = []

    def _fd(self, data: bytes) -> int:
        fd = _memfd("tcg-view", data)
        self.opened.append(fd)
        return fd

    def wrap(self, argv: list[str]) -> list[str]:
        if not self.prefix:
            status_r, status_w = os.pipe()
            os.set_inheritable(status_w, True)  # bwrap writes it; the station keeps the read end
            self.status_r = status_r
            self.opened.append(status_w)
            self.prefix.extend(arguments(self.exe, self.view, self._fd, os.geteuid() == 0, status_w))
        return [*self.prefix, *argv]

    def setup_failed(self, exit_code: int) -> bool:
        """Did bwrap exit (with ``exit_code``) without ever starting the command?"""
        if exit_code != SETUP_FAILED_EXIT or self.status_r is None:
            return False
        self.close()  # our copy of the write end: the read below then ends
        data = b""
        os.set_blocking(self.status_r, False)
        try:
            while len(data) < 1 << 16:
                chunk = os.read(self.status_r, 4096)
                if not chunk:
                    break
                data += chunk
        except BlockingIOError:  # a process the command left behind holds the write end
            pass
        return b'"exit-code"' not in data

    def close(self) -> None:
        while self.opened:
            try:
                os.close(self.opened.pop())
            except OSError:
                pass

    def release(self) -> None:
        self.close()
        if self.status_r is not None:
            os.close(self.status_r)
            self.status_r = None
