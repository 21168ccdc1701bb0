"""Linux: run a command in its own user, mount and PID namespaces, secret stores covered.

Why direct ``unshare(2)`` + ``mount(2)`` rather than bubblewrap: both cost ~3 ms for
the namespaces, but bwrap re-reads the mount table for every read-only bind, so
50 stores cost 13 ms with bwrap and 5.6 ms here (bench/sandbox_cost.py). bwrap
stays available as ``sandbox.mechanism = "bwrap"`` (tcg.sandbox.bwrap) for hosts
whose security module allows namespaces only to it (Ubuntu 24.04's AppArmor).

The process tree, all forked from the station (no helper binary):

    station ── X (new user namespace) ── P1 (pid 1 of a new PID namespace; a new
    mount namespace: covers the stores, mounts a /proc that shows only the sandbox)
    ── C (exec: the shell)

- covering: a tmpfs is mounted over ``/proc`` (nothing to hide lives there), the
  empty file and the twins are written into it, it is made read-only, each store
  gets a bind of one of them, then P1's own /proc is mounted over it (unmounting it
  would cost an RCU grace period before every command; it holds no secret);
- the mount namespace is P1's, not X's: its teardown runs in P1's exit, which
  nobody waits for, not in X's, which the station waits for;
- the PID namespace and its own /proc: the command cannot read another process's
  environment (``/proc/PPID/environ`` of the agent), memory or fds;
- P1 forwards signals to C, reports C's exit status to X, then stays to reap
  whatever C left running in the background (a dev server lives on, as without
  tcg); P1 holds no pipe of the station's, so the station's drain is unaffected;
- X forwards the station's signals to P1 and exits with C's status; if X is
  killed, P1 dies with it (PDEATHSIG) until C has exited;
- unprivileged users map only their own uid and gid; after exec the command has no
  capabilities, and a namespace it creates inside sees every bind as locked (it
  cannot unmount one to uncover a store). root keeps its uid without a user
  namespace (a namespace would cut its access to other users' files) but loses
  CAP_SYS_ADMIN (umount), CAP_DAC_READ_SEARCH (open_by_handle_at), CAP_SYS_PTRACE,
  CAP_SYS_MODULE, CAP_SYS_RAWIO and CAP_MKNOD from its bounding set. root can still
  read a raw block device: run agents as an unprivileged user (docs/policy.md).

Setup failures in X or P1 are written to the exec-error pipe as
``sandbox:STEP:ERRNO`` before anything runs, so the station can apply
``sandbox.on-unavailable`` (block, or warn and run without the view).
"""

from __future__ import annotations

import os

# the C module: the stdlib wrapper imports enum, in every child
from tcg.osutil import signal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
# CAP_DAC_READ_SEARCH, CAP_SYS_MODULE, CAP_SYS_RAWIO, CAP_SYS_PTRACE, CAP_SYS_ADMIN, CAP_MKNOD
ROOT_DROPPED_CAPS = (2, 16, 17, 19, 21, 27)
STAGE = "/proc"
# Errors binding one store that mean "nothing to cover there": it vanished, or
# its directory cannot be searched (then the command cannot open it either).
SKIPPABLE = frozenset({2, 13, 20, 40})  # ENOENT, EACCES, ENOTDIR, ELOOP
SETUP_PREFIX = b"sandbox:"
FORWARD = ("SIGTERM", "SIGHUP", "SIGINT", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGWINCH", "SIGCONT", "SIGALRM")
TERMINAL = ("SIGINT", "SIGQUIT", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGHUP", "SIGTERM", "SIGWINCH")

_LIBC: list[Any] = []


class SetupFailed(Exception):
    """The sandbox could not be built (reported by the child before anything ran)."""

    def __init__(self, step: str, err: int):
        self.step = step
        self.errno = err
        super().__init__(f"{step}: {os.strerror(err) if err else 'failed'}")


def libc() -> Any:
    """(functions, get_errno): libc's mount, unshare, prctl and memset,
    bound on first use (agent commands only), before any fork, through ctypes'
    C core (tcg._lean.libc) and else through ctypes."""
    if not _LIBC:
        from tcg._lean.libc import bind, bind_ctypes

        try:
            _LIBC.append(bind(_SIGNATURES))
        except (ImportError, AttributeError, TypeError):  # pragma: no cover - another interpreter
            _LIBC.append(bind_ctypes(_SIGNATURES))
    return _LIBC[0]


# name: (argument type codes, return type code), codes as in ctypes' simple types:
# i int, L unsigned long (size_t on Linux), z char *, P void *
_SIGNATURES = {
    "mount": ("zzzLz", "i"),
    "unshare": ("i", "i"),
    "prctl": ("iLLLL", "i"),
    "memset": ("PiL", "P"),
}


def supported() -> str | None:
    """None when this kernel offers what the view needs, else why not."""
    import sys

    if not sys.platform.startswith("linux"):
        return "not Linux"
    try:
        libc()
    except (OSError, AttributeError) as exc:
        return f"libc is not usable through ctypes ({type(exc).__name__})"
    return None


class View:
    """What a command's filesystem looks like: ``targets`` are (path, twin index or -1
    for the empty file), ``twins`` the twin contents."""

    __slots__ = ("targets", "twins")

    def __init__(self, targets: list[tuple[str, int]], twins: list[bytes]):
        self.targets = targets
        self.twins = twins


# ----------------------------------------------------------------- in the child


def _fail(err_w: int, step: str, err: int) -> None:
    try:
        os.write(err_w, SETUP_PREFIX + f"{step}:{err}".encode())
    finally:
        os._exit(127)


def _call(err_w: int, step: str, result: int) -> None:
    if result != 0:
        _fail(err_w, step, libc()[1]())


def _mount(src: str | None, dst: str, fstype: str | None, flags: int, data: str | None = None) -> int:
    lib, get_errno = libc()
    enc = os.fsencode
    rc = lib.mount(enc(src) if src else None, enc(dst), enc(fstype) if fstype else None, flags,
                   data.encode() if data else None)
    return 0 if rc == 0 else get_errno()


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


STAGE_FLAGS = MS_NOSUID | MS_NODEV | MS_NOEXEC


def _cover(view: View, err_w: int) -> None:
    """Bind the empty file / twins over every store (we are in the new mount
    namespace, with CAP_SYS_ADMIN in it). The staging tmpfs is made read-only once
    its files are written; a bind is a copy of its source's mount, flags included,
    so each store costs one mount(2) and every cover is read-only on a read-only
    file system."""
    err = _mount("tcg-view", STAGE, "tmpfs", STAGE_FLAGS, "mode=0755")
    if err:
        _fail(err_w, "staging tmpfs", err)
    empty = os.path.join(STAGE, "empty")
    os.close(os.open(empty, os.O_WRONLY | os.O_CREAT, 0o444))
    for i, data in enumerate(view.twins):
        fd = os.open(os.path.join(STAGE, f"twin{i}"), os.O_WRONLY | os.O_CREAT, 0o444)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
    err = _mount(None, STAGE, None, MS_REMOUNT | MS_RDONLY | STAGE_FLAGS)
    if err:
        _fail(err_w, "read-only staging", err)
    for path, twin in view.targets:
        src = empty if twin < 0 else os.path.join(STAGE, f"twin{twin}")
        err = _mount(src, path, None, MS_BIND)
        if err in SKIPPABLE:
            continue
        if err:
            _fail(err_w, "bind", err)


def _close_fds(keep: tuple[int, ...]) -> None:
    """Close every fd above 2 but ``keep`` (the station's pipes, its signal pipe …).
    Listed from /proc/self/fd: closing a fixed range costs one syscall per number."""
    try:
        fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        fds = list(range(3, 1024))
    for fd in fds:
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def _null_stdio() -> None:
    fd = os.open(os.devnull, os.O_RDWR)
    for target in (0, 1, 2):
        os.dup2(fd, target)
    if fd > 2:
        os.close(fd)


def _signals(forward_to: int | None) -> None:
    """Forward (pipe mode) or ignore (PTY mode: the terminal signals C's process
    group directly) the signals the station passes on."""
    signal.set_wakeup_fd(-1)
    names = FORWARD if forward_to is not None else TERMINAL
    for name in names:
        sig = getattr(signal, name, None)
        if sig is None:
            continue
        if forward_to is None:
            signal.signal(sig, signal.SIG_IGN)
        else:
            signal.signal(sig, _forwarder(forward_to))


def _forwarder(pid: int) -> Any:
    def forward(sig: int, _frame: object) -> None:
        _kill(pid, sig)

    return forward


def _kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except OSError:
        pass


def _wipe_environ(err_w: int) -> None:
    """Zero this process's initial environment block (what /proc/PID/environ shows):
    P1 inherited the station's, secrets included. Python's own copy (os.environ) is on
    the heap, readable only through /proc/PID/mem, which a non-dumpable process denies."""
    try:
        with open("/proc/self/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        start, end = int(fields[47]), int(fields[48])  # env_start, env_end (fields 50, 51)
    except (OSError, ValueError, IndexError):
        _fail(err_w, "environment wipe", 0)
        return
    if 0 < start < end:
        libc()[0].memset(start, 0, end - start)


def _pid1(view: View, path: str, argv: list[str], env: dict[str, str], err_w: int, status_w: int, root: bool,
          forward: bool) -> None:
    """PID 1 of the sandbox: the mount namespace and its covers, its /proc, the
    command, signal forwarding, reaping."""
    lib, get_errno = libc()
    # P1 is a copy of the station: its /proc/1/environ holds the unscrubbed environment.
    # Not dumpable → only a process with CAP_SYS_PTRACE may read it (the command has none).
    if lib.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        _fail(err_w, "not dumpable", get_errno())
    _wipe_environ(err_w)  # root reads /proc/1/environ even so: clear the strings themselves
    if lib.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0) != 0:
        _fail(err_w, "parent-death signal", get_errno())
    # The mount namespace is P1's alone, not X's: the last process to leave a mount
    # namespace tears it down (an RCU grace period, ~10 ms median on a loaded machine),
    # and X's exit is what the station waits for; nobody waits for P1's.
    _call(err_w, "unshare", lib.unshare(CLONE_NEWNS))
    err = _mount(None, "/", None, MS_REC | MS_PRIVATE)
    if err:
        _fail(err_w, "private mounts", err)
    _cover(view, err_w)
    err = _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)  # over the staging tmpfs
    if err:
        _fail(err_w, "mount /proc", err)
    if root:
        for cap in ROOT_DROPPED_CAPS:  # limits what C gains at exec; P1 keeps its own
            if lib.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and get_errno() != 22:  # EINVAL: unknown cap
                _fail(err_w, "drop capabilities", get_errno())
    os.set_inheritable(status_w, False)
    reset = [getattr(signal, n) for n in ("SIGPIPE", "SIGXFSZ", *TERMINAL) if hasattr(signal, n)]
    try:  # vfork: no copy of this (large) process's page tables for a child that only execs
        child = os.posix_spawn(path, argv, env, setsigdef=reset, setsigmask=[])
    except OSError as exc:
        os.write(err_w, f"{exc.errno}:{exc.strerror}".encode())
        os._exit(127)
    os.close(err_w)
    _null_stdio()
    _close_fds((status_w,))
    _signals(child if forward else None)
    reported = False
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if pid == child and not reported:
            reported = True
            lib.prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0)  # from now on X may go: orphans live on
            try:
                os.write(status_w, str(status).encode())
            except OSError:
                pass
            os.close(status_w)
    os._exit(0)


def enter(view: View, path: str, argv: list[str], env: dict[str, str], err_w: int, *, forward: bool) -> None:
    """Run in the forked child (X): build the view, start P1 and C, exit with C's
    status. Never returns."""
    try:
        root = os.geteuid() == 0
        uid, gid = os.geteuid(), os.getegid()
        lib, _ = libc()
        _call(err_w, "unshare", lib.unshare(CLONE_NEWPID | (0 if root else CLONE_NEWUSER)))
        if not root:
            try:
                _write("/proc/self/setgroups", "deny")
                _write("/proc/self/uid_map", f"{uid} {uid} 1\n")
                _write("/proc/self/gid_map", f"{gid} {gid} 1\n")
            except OSError as exc:
                _fail(err_w, "user namespace id map", exc.errno or 0)
        status_r, status_w = os.pipe()
        p1 = os.fork()
        if p1 == 0:
            os.close(status_r)
            _pid1(view, path, argv, env, err_w, status_w, root, forward)
        os.close(status_w)
        os.close(err_w)
        _null_stdio()
        _close_fds((status_r,))
        _signals(p1 if forward else None)
        data = b""
        while True:
            chunk = os.read(status_r, 64)
            if not chunk:
                break
            data += chunk
        if data:
            _exit_like(int(data))
        _, status = os.waitpid(p1, 0)  # P1 died before C had exited
        _exit_like(status)
    except BaseException:  # noqa: BLE001 - never return into the station's code
        _fail(err_w, "internal", 0)


def _exit_like(status: int) -> None:
    """Exit as C did: the same code, or death by the same signal."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            import resource  # only here: C died by a signal, which is rare

            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
            os.kill(os.getpid(), sig)
        except (OSError, ValueError, ImportError):
            pass
        os._exit(128 + sig)
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


# ----------------------------------------------------------------- in the station


def spawn_pipes(argv: list[str], env: dict[str, str], view: View, *,
                channel_var: str | None = None) -> tuple[int, int, int]:
    """tcg.runner.posix.spawn_pipes, in the view: (pid, stdout_r, stderr_r).

    Raises SetupFailed (nothing ran) or SpawnError (the command could not start).
    """
    from tcg.osutil import fd_identity, grow_pipe, resolve_program, spawn_error

    path = resolve_program(argv, env)
    libc()  # bind before forking: the children must not pay for it three times
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    rep_r, rep_w = os.pipe()
    try:
        for fd in (out_r, err_r):
            grow_pipe(fd)
        if channel_var:
            env = {**env, channel_var: ",".join((fd_identity(out_r), fd_identity(err_r)))}
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child; leaves through exec or _exit
            try:
                os.close(rep_r)
                os.dup2(out_w, 1)
                os.dup2(err_w, 2)
                for fd in (out_r, err_r, out_w, err_w):
                    os.close(fd)
            except BaseException:  # noqa: BLE001
                os._exit(127)
            enter(view, path, argv, env, rep_w, forward=True)
    except BaseException:
        os.close(out_r)
        os.close(err_r)
        raise
    finally:
        os.close(out_w)
        os.close(err_w)
        os.close(rep_w)
    try:
        report = _read_report(rep_r)
    finally:
        os.close(rep_r)
    if report:
        os.close(out_r)
        os.close(err_r)
        os.waitpid(pid, 0)
        raise report_error(argv[0], report, spawn_error)
    return pid, out_r, err_r


def pty_child_exec(view: View) -> Any:
    """The ``child_exec`` for tcg.runner.posix.spawn_pty: called in the forked child
    after it took the terminal; builds the view instead of a plain exec."""
    libc()

    def run(path: str, argv: list[str], env: dict[str, str], err_w: int) -> None:
        enter(view, path, argv, env, err_w, forward=False)

    return run


def _read_report(fd: int) -> bytes:
    chunks: list[bytes] = []
    while True:
        data = os.read(fd, 4096)
        if not data:
            return b"".join(chunks)
        chunks.append(data)


def report_error(name: str, report: bytes, spawn_error: Any) -> Exception:
    """The exception for what the child wrote on the exec-error pipe."""
    text = report.decode(errors="replace")
    if report.startswith(SETUP_PREFIX):
        step, _, num = text[len(SETUP_PREFIX):].rpartition(":")
        return SetupFailed(step, int(num) if num.isdigit() else 0)
    num, _, msg = text.partition(":")
    return spawn_error(name, int(num) if num.isdigit() else 0, msg)
