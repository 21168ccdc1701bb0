"""Small OS helpers every layer uses: PATH lookup, whole writes, pipe sizes, fd identity.

They sit below the masker, the runner, the scanner and the MCP relay, so none of
those depends on another to write to a pipe. Standard library only, imported lazily
where a helper needs more than ``os`` (these run on every mediated command).
"""

from __future__ import annotations

import os
import sys


def which(name: str, path: str | None) -> str | None:
    """PATH lookup without importing shutil (hot path)."""
    if os.sep in name or (os.altsep and os.altsep in name):
        return name if os.access(name, os.X_OK) and not os.path.isdir(name) else None
    for d in (path or os.defpath).split(os.pathsep):
        candidate = os.path.join(d or ".", name)
        if os.access(candidate, os.X_OK) and not os.path.isdir(candidate):
            return candidate
    return None


def write_all(fd: int, data: bytes | memoryview) -> None:
    """Write every byte, waiting on a non-blocking fd instead of failing."""
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except BlockingIOError:
            import select

            select.select([], [fd], [])
            continue
        view = view[n:]


PIPE_SIZE = 1 << 20
F_SETPIPE_SZ = 1031  # Linux fcntl (older Pythons' fcntl module does not name it)


def grow_pipe(fd: int, size: int = PIPE_SIZE) -> None:
    """Linux: ask for a ``size`` pipe buffer (default 64 KiB), so bulk data moves in a
    few large reads and writes instead of many small ones, each a wake-up. Best
    effort: not Linux, not a pipe, or over /proc/sys/fs/pipe-max-size keeps the default."""
    if fd < 0 or not sys.platform.startswith("linux"):
        return
    try:
        import fcntl

        fcntl.fcntl(fd, F_SETPIPE_SZ, size)
    except OSError:
        pass


def fd_identity(fd: int) -> str:
    """A stable id for what ``fd`` is connected to: a pipe's inode or a tty's rdev."""
    import stat

    st = os.fstat(fd)
    if stat.S_ISCHR(st.st_mode):
        return f"c{st.st_rdev}"
    return f"i{st.st_dev}:{st.st_ino}"
