"""The environment tcg runs git in: read-only, program-free, offline.

Shared by the scanner (tcg.scan.gitobjects) and the launch gate's state key
(tcg.launcher.state), so both see a repository the same way. Plain ``os``:
the launch imports it on every run.

- no inherited repository overrides (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE,
  GIT_OBJECT_DIRECTORY), no command-line config from the caller;
- a scanned repository's own config must not run programs: ``core.fsmonitor``
  names a command that `git status`/`git ls-files` would execute, and
  command-line level config (GIT_CONFIG_COUNT) overrides the repository's;
- never the network: in a partial clone git would fetch missing objects from
  the promisor remote on demand; no transport allowed = the fetch fails fast;
- C locale, no prompt, no system config.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, BinaryIO

GIT_ENV_DROP = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY")


def git_env() -> dict[str, str]:
    """Environment for git children (see the module docstring)."""
    env = {k: v for k, v in os.environ.items()
           if k not in GIT_ENV_DROP and not k.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))}
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["LC_ALL"] = "C"
    env.setdefault("GIT_CONFIG_NOSYSTEM", "1")
    env["GIT_ALLOW_PROTOCOL"] = ""
    env["GIT_CONFIG_COUNT"] = "1"
    env["GIT_CONFIG_KEY_0"] = "core.fsmonitor"
    env["GIT_CONFIG_VALUE_0"] = "false"
    return env


# ------------------------------------------------------------------ git children
# The scanner and the launch gate start a handful of short git commands per call.
# subprocess costs more to import (signal, selectors, locale, contextlib and its own
# ~2,000 lines) than those commands take to run, so POSIX systems start git with
# os.posix_spawnp on plain pipes; elsewhere (Windows) subprocess.Popen, which offers
# the same attributes (pid, stdin, stdout, stderr, returncode, wait, kill, communicate).

PIPE = -1  # the values of subprocess.PIPE and subprocess.DEVNULL, so both paths take them
DEVNULL = -3


class GitProcess:
    """A git child started by :func:`popen_git` on POSIX: the part of subprocess.Popen's
    interface the callers use. ``stdin``/``stdout``/``stderr`` are buffered binary files
    for the streams given as PIPE, else None."""

    __slots__ = ("args", "pid", "returncode", "stderr", "stdin", "stdout")

    def __init__(self, args: list[str], pid: int, stdin: BinaryIO | None, stdout: BinaryIO | None,
                 stderr: BinaryIO | None) -> None:
        self.args = args
        self.pid = pid
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
        self.returncode: int | None = None

    def wait(self) -> int:
        if self.returncode is None:
            _, status = os.waitpid(self.pid, 0)
            self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, _signals().SIGKILL)
            except ProcessLookupError:
                pass

    def communicate(self, input: bytes | None = None) -> tuple[bytes, bytes]:
        """Write ``input`` to stdin (then close it) while reading stdout and stderr to
        their ends, without blocking on a full pipe; wait for the child."""
        import select

        writing = b""
        if self.stdin is not None:
            self.stdin.flush()
            writing = input or b""
            if not writing:
                self.stdin.close()
        chunks: dict[int, list[bytes]] = {}
        poller = select.poll()
        for f in (self.stdout, self.stderr):
            if f is not None:
                chunks[f.fileno()] = []
                poller.register(f.fileno(), select.POLLIN)
        win = self.stdin.fileno() if self.stdin is not None and writing else -1
        if win >= 0:
            os.set_blocking(win, False)
            poller.register(win, select.POLLOUT)
        view = memoryview(writing)
        open_fds = len(chunks) + (win >= 0)
        while open_fds:
            for fd, _event in poller.poll():
                if fd == win:
                    try:
                        view = view[os.write(fd, view[:1 << 16]):]
                    except BrokenPipeError:
                        view = view[:0]
                    if not view:
                        poller.unregister(fd)
                        assert self.stdin is not None
                        self.stdin.close()
                        open_fds -= 1
                    continue
                data = os.read(fd, 1 << 16)
                if data:
                    chunks[fd].append(data)
                else:
                    poller.unregister(fd)
                    open_fds -= 1
        out = [b"".join(chunks[f.fileno()]) if f is not None else b"" for f in (self.stdout, self.stderr)]
        for f in (self.stdout, self.stderr):
            if f is not None:
                f.close()
        self.wait()
        return out[0], out[1]


def _signals() -> Any:
    """The signal numbers, from the lean C module (see tcg._lean): the stdlib wrapper
    builds IntEnums at import; imported when a child is started."""
    from tcg._lean.signals import signal
    return signal


def popen_git(args: list[str], *, env: dict[str, str], stdin: int | BinaryIO | None = None,
              stdout: int | None = PIPE, stderr: int | None = PIPE, bufsize: int = -1) -> Any:
    """Start ``args`` (a git command line) the way ``subprocess.Popen`` would with these
    arguments: each stream PIPE, DEVNULL, None (inherited) or, for stdin, another
    child's stdout. SIGPIPE and SIGXFSZ are back to their defaults in the child (as
    subprocess's restore_signals does), so a writer to a closed pipe ends quietly.
    git not found raises FileNotFoundError, as subprocess does."""
    if not hasattr(os, "posix_spawnp"):  # pragma: no cover - Windows
        import subprocess

        return subprocess.Popen(args, stdin=stdin, stdout=stdout, stderr=stderr, env=env, bufsize=bufsize)
    signal = _signals()
    actions: list[tuple[Any, ...]] = []
    ours: list[int | None] = [None, None, None]  # the parent's ends of new pipes
    theirs: list[int] = []  # the child's ends, closed here once it runs
    try:
        for fd, spec in enumerate((stdin, stdout, stderr)):
            if spec is None:
                continue
            if spec == DEVNULL:
                actions.append((os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY, 0))
            elif spec == PIPE:
                r, w = os.pipe()
                child, ours[fd] = (r, w) if fd == 0 else (w, r)
                theirs.append(child)
                actions.append((os.POSIX_SPAWN_DUP2, child, fd))
            else:
                src = spec if isinstance(spec, int) else spec.fileno()
                actions.append((os.POSIX_SPAWN_DUP2, src, fd))
        reset = [s for s in (getattr(signal, "SIGPIPE", None), getattr(signal, "SIGXFSZ", None)) if s]
        pid = os.posix_spawnp(args[0], args, env, file_actions=actions, setsigdef=reset)
    except BaseException:
        for end in ours:
            if end is not None:
                os.close(end)
        raise
    finally:
        for end in theirs:
            os.close(end)
    files = [None if end is None else open(end, "wb" if i == 0 else "rb", buffering=bufsize)  # noqa: SIM115
             for i, end in enumerate(ours)]
    return GitProcess(args, pid, *files)
