"""Small OS helpers every layer uses: PATH lookup, whole writes, pipe sizes, fd identity,
a bounded file lock, the signal module, and the error for a program that cannot be started.

They sit below the masker, the runner, the sandbox, the scanner and the MCP relay,
so none of those depends on another to write to a pipe or start a program (the
sandbox's spawner reports exec failures the way the runner's does). Standard library only, imported lazily
where a helper needs more than ``os`` (these run on every mediated command).
"""

from __future__ import annotations

import os
import sys

# The signal module every layer uses: the C module (see tcg._lean); the stdlib
# wrapper builds IntEnums and imports enum (~4 ms a command, in every child).
from tcg._lean.signals import signal  # noqa: F401

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


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


def machine() -> str:
    """``platform.machine()`` without importing platform (and the modules behind it,
    ~1-2 ms of every masking process's start): the same value, from uname, on POSIX."""
    if hasattr(os, "uname"):
        return os.uname().machine
    import platform

    return platform.machine()


PIPE_SIZE = 1 << 20
F_SETPIPE_SZ = 1031  # Linux fcntl (older Pythons' fcntl module does not name it)
GIVE_UP_EVERY = 0.25  # seconds between lock_exclusive's questions to its give_up


def lock_exclusive(fd: int, wait: float, poll: float = 0.0005,
                   give_up: Callable[[], bool] | None = None) -> bool:
    """An exclusive advisory lock on ``fd`` (flock), waited for at most ``wait``
    seconds, checked every ``poll``: a holder stopped with Ctrl-Z (or hung) must not
    stop every other tcg process. ``give_up``: asked about every 0.25 s while the
    lock is busy; True ends the wait early (say, the holder is known to be stopped).
    False where there is no such lock (Windows, a file system without flock) or it
    stayed busy: the caller goes on without it."""
    try:
        import fcntl
    except ImportError:  # Windows
        return False
    import time

    start = time.monotonic()
    deadline, ask_at = start + wait, start + GIVE_UP_EVERY
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            now = time.monotonic()
            if now >= deadline:
                return False
            if give_up is not None and now >= ask_at:
                if give_up():
                    return False
                ask_at = now + GIVE_UP_EVERY
            time.sleep(poll)
        except OSError:  # e.g. a filesystem without flock
            return False


def stopped_process(pid: int) -> bool:
    """Linux: is ``pid`` stopped (Ctrl-Z, a debugger) or gone? False where that
    cannot be told (no /proc): the caller then waits as long as it would anyway."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except FileNotFoundError:
        return os.path.isdir("/proc/self")  # gone, where /proc exists
    except OSError:
        return False
    state = stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3]  # after "pid (comm) "
    return state in (b"T", b"t")


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


class SpawnError(Exception):
    """The command could not be started; ``exit_code`` is what a shell would return
    (127 not found, 126 not executable: tcg.errors.ExitCode)."""

    def __init__(self, message: str, exit_code: int | None = None):
        super().__init__(message)
        if exit_code is None:
            from tcg.errors import ExitCode

            exit_code = int(ExitCode.NOT_FOUND)
        self.exit_code = exit_code


def resolve_program(argv: list[str], env: dict[str, str]) -> str:
    """The path ``argv[0]`` runs (PATH from ``env``); SpawnError (127) when there is none."""
    if not argv:
        raise SpawnError("empty command", 127)
    path = which(argv[0], env.get("PATH"))
    if path is None:
        raise SpawnError(f"{argv[0]}: command not found", 127)
    return path


def spawn_error(name: str, err: int, message: str) -> SpawnError:
    """The SpawnError for an exec that failed with errno ``err``: 126 when the file is
    there but cannot be executed, as a shell says, else 127."""
    import errno

    code = 126 if err in (errno.EACCES, errno.ENOEXEC, errno.EPERM) else 127
    return SpawnError(f"{name}: {message}", code)


def dot_git_dir(start: str) -> str | None:
    """The nearest directory at or above ``start`` holding an entry named ``.git``, else
    None: the project-root walk every surface uses (the entity registry's project, the
    sandbox's store search, the launcher's "is a repository here" check).

    ``lexists``, not ``exists``: a ``.git`` that is a dangling symlink (or a gitfile of a
    removed worktree) still marks where the user's project is. Following it with
    ``exists`` would walk past it to an enclosing repository (a dotfiles repository in
    the home directory, say), widen the project to that tree and pick another entity
    registry; stopping at it makes git's own error ("cannot read the repository")
    surface instead. ``start`` is used as given: callers normalise it.
    """
    d = start
    while True:
        if os.path.lexists(os.path.join(d, ".git")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def ask_on_tty(question: str) -> bool:
    """One y/N question on the controlling terminal — never stdin, which an agent
    may own. No terminal, or any error reading it, is a no."""
    try:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return False
    try:
        os.write(fd, f"tcg: {question} [y/N] ".encode())
        return os.read(fd, 64).decode(errors="replace").strip().lower() in ("y", "yes")
    except OSError:
        return False
    finally:
        os.close(fd)
