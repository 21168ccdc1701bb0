"""The same view built by bubblewrap (``sandbox.mechanism = "bwrap"``, or ``auto``
where the kernel lets only bwrap create namespaces).

The command line: the whole filesystem as it is (``--dev-bind / /``), a new PID
namespace with its own ``/proc``, and one ``--ro-bind-data FD STORE`` per store
(bwrap copies the fd's bytes into a read-only file of its own: an empty memfd for
covered stores, one memfd per twin). Differences from the namespaces mechanism:
bwrap's PID 1 ends every background process when the command exits, and each
read-only bind costs bwrap a re-read of the mount table (~0.2 ms per store).
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


def arguments(exe: str, view: View, fds: Callable[[bytes], int], root: bool) -> list[str]:
    """bwrap's argv before the command (``fds(data)`` returns an fd holding ``data``)."""
    args = [exe, "--dev-bind", "/", "/"]
    if not root:
        args.append("--unshare-user")
    else:
        for cap in ROOT_DROPPED:
            args += ["--cap-drop", cap]
    args += ["--unshare-pid", "--proc", "/proc", "--die-with-parent"]
    for path, twin in view.targets:  # bwrap reads and closes each fd: one per store
        if os.path.isfile(path):
            args += ["--ro-bind-data", str(fds(b"" if twin < 0 else view.twins[twin])), path]
    args.append("--")
    return args


def wrapper(exe: str, view: View) -> tuple[Callable[[list[str]], list[str]], Callable[[], None]]:
    """(argv → bwrap argv, close the fds once the command started)."""
    opened: list[int] = []

    def fds(data: bytes) -> int:
        fd = _memfd("tcg-view", data)
        opened.append(fd)
        return fd

    prefix: list[str] = []

    def wrap(argv: list[str]) -> list[str]:
        if not prefix:
            prefix.extend(arguments(exe, view, fds, os.geteuid() == 0))
        return [*prefix, *argv]

    def close() -> None:
        while opened:
            try:
                os.close(opened.pop())
            except OSError:
                pass

    return wrap, close
