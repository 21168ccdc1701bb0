"""``tcg_shell mask-server start|status|stop``: the masking fork server by hand.

Sessions start the server themselves (tcg.runner.maskserver), so every terminal
but the first gets a masking process that has its code and detector loaded. The
first one after login, and the first after the server's idle time ran out, load
them on their own, which is most of a new terminal's wait for its first prompt.
``start`` from a login profile (``tcg_shell init --profile``) has the server
loaded before the first terminal opens; its server stays for ``--idle`` seconds
without a session (12 hours unless told: a working day), where one a session
started stays 30 minutes. Linux only, as the server.
"""

from __future__ import annotations

import os
import sys
import time

from tcg.errors import ExitCode
from tcg.runner import maskserver

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

USAGE = """usage: tcg_shell mask-server start [--idle SECONDS] [--wait SECONDS]
       tcg_shell mask-server status
       tcg_shell mask-server stop [--wait SECONDS]
"""
PROG = "tcg_shell mask-server"
LOGIN_IDLE = 12 * 3600  # seconds a started server waits for sessions: a working day
ASK_WAIT = 2.0  # seconds a server may take to answer ping or stop
LOCK_WAIT = 3.0  # seconds start waits for a server that holds the lock to serve or go
STOP_WAIT = 30.0  # seconds stop waits for a loading server to serve, to stop it


def ask(env: Mapping[str, str], verb: bytes) -> str:
    """The server's answer to ``verb`` (maskserver.CONTROL), or why there is none:
    ``absent`` (nobody listens), ``not ours`` (a listener this install must not
    trust: another user, namespace or interpreter), ``too long`` (no socket can
    have that path) or ``no answer``. Nothing is sent before the peer is trusted."""
    path = maskserver.socket_path(env)
    if len(path.encode()) > maskserver.SUN_PATH_MAX:
        return "too long"
    from tcg._lean import sockets as socket

    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC)
    try:
        s.settimeout(ASK_WAIT)
        try:
            s.connect(path)
        except (FileNotFoundError, ConnectionRefusedError):
            return "absent"
        if not maskserver.peer_is_ours(s):
            return "not ours"
        s.send(b"\0".join((maskserver.MAGIC, maskserver.identity().encode(), verb)))
        return s.recv(256).decode("ascii", "replace") or "no answer"
    except OSError:
        return "no answer"
    finally:
        s.close()


def serving(answer: str) -> tuple[int, int] | None:
    """(pid, idle seconds) from a ``serving PID IDLE`` answer."""
    parts = answer.split()
    if len(parts) == 3 and parts[0] == "serving" and parts[1].isdigit() and parts[2].isdigit():
        return int(parts[1]), int(parts[2])
    return None


def lock_held(env: Mapping[str, str]) -> bool:
    """A server of this install holds its lock: loading (not listening yet) or
    serving, or exiting. A lock path that is no regular file counts as free
    (opened without following links or blocking: a FIFO there cannot hang us)."""
    import fcntl
    import stat

    path = maskserver.lock_path(maskserver.socket_path(env))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)


def why_not(answer: str, env: Mapping[str, str]) -> str:
    """What ``answer`` (not ``serving``) means, for a person."""
    if answer == "not ours":
        return (f"a process this install does not trust listens at {maskserver.socket_path(env)} "
                "(not tcg's server for this user and install)")
    if answer == "too long":
        return (f"the server's socket path is too long ({len(maskserver.socket_path(env).encode())} "
                f"bytes, at most {maskserver.SUN_PATH_MAX}): no server can run with this "
                "TCG_HOME or XDG_STATE_HOME")
    if answer == "no request":
        return "a server of an older tcg runs (it leaves at the next session or after its idle time)"
    if answer == "no code":  # it ran other code than this install has, and is leaving
        return "no server runs for this install (one of other code has just left)"
    if answer == "absent":
        return "a server is loading" if lock_held(env) else "no server runs for this install"
    return f"the server did not answer ({answer})"


def _fail(message: str, hint: str) -> int:
    sys.stderr.write(f"{PROG}: {message}\nhint: {hint}\n")
    return int(ExitCode.ERROR)


def _seconds(args: list[str], name: str, default: float) -> float:
    if name not in args:
        return default
    at = args.index(name)
    value = args[at + 1] if at + 1 < len(args) else ""
    del args[at:at + 2]
    if not value.isdigit() or int(value) <= 0:
        raise ValueError(f"{name} needs a whole number of seconds above 0, not {value!r}")
    return float(value)


def _until(limit: float, done: Callable[[], bool]) -> bool:
    """Poll ``done()`` every 50 ms for ``limit`` seconds."""
    deadline = time.monotonic() + limit
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def start(args: list[str], env: Mapping[str, str]) -> int:
    """Launch a server unless one of this install serves or is loading; ``--wait``:
    until it serves (and then it loads at once; without, it waits its start delay,
    as one a session launches: a terminal may be opening beside it)."""
    idle = _seconds(args, "--idle", LOGIN_IDLE)
    wait = _seconds(args, "--wait", 0.0)
    if args:
        raise ValueError(f"unexpected arguments: {' '.join(args)}")
    if env.get(maskserver.ENV_SWITCH) == "0":
        return _fail("no masking fork server here (TCG_MASK_SERVER=0 turns it off)",
                     "sessions start a masking process of their own (docs/shells.md)")
    answer = ask(env, b"ping")
    if answer in ("not ours", "too long"):
        return _fail(why_not(answer, env), "see docs/shells.md (the masking fork server)")
    if serving(answer) is None:
        # one that holds the lock is loading (it will serve) or exiting (stale,
        # stopped): wait for either; a server launched meanwhile would give up
        _until(LOCK_WAIT, lambda: not lock_held(env) or serving(ask(env, b"ping")) is not None)
        if not lock_held(env):
            maskserver.launch(dict(env, **{maskserver.ENV_IDLE: str(int(idle))}), now=wait > 0)
            maskserver.hurry(10.0)
    if wait and not _until(wait, lambda: serving(ask(env, b"ping")) is not None):
        return _fail(f"the server did not serve within {wait:g} s ({why_not(ask(env, b'ping'), env)})",
                     f"`{PROG} status`, or `tcg doctor`")
    return 0


def status(env: Mapping[str, str]) -> int:
    answer = ask(env, b"ping")
    served = serving(answer)
    if served is not None:
        sys.stdout.write(f"{PROG}: serving this install (pid {served[0]}; it exits after "
                         f"{served[1]} s without a new session)\n")
        return 0
    if answer in ("not ours", "too long"):
        return _fail(why_not(answer, env), "see docs/shells.md (the masking fork server)")
    why = why_not(answer, env)
    if env.get(maskserver.ENV_SWITCH) == "0":
        why += " (TCG_MASK_SERVER=0: sessions use none)"
    elif why.startswith("no server runs"):
        why += f"; the next session starts one, or `{PROG} start`"
    sys.stdout.write(f"{PROG}: {why}\n")
    return int(ExitCode.ERROR)


def stop(args: list[str], env: Mapping[str, str]) -> int:
    """Stop this install's server (one still loading once it serves); sessions it
    served keep their masking processes."""
    wait = _seconds(args, "--wait", STOP_WAIT)
    if args:
        raise ValueError(f"unexpected arguments: {' '.join(args)}")
    answer = ask(env, b"stop")
    if answer in ("absent", "no code") and lock_held(env):  # loading: stop it once it listens
        _until(wait, lambda: not lock_held(env) or ask(env, b"ping") not in ("absent", "no code"))
        answer = ask(env, b"stop") if lock_held(env) else "absent"
    if answer == "stopping":
        sys.stdout.write(f"{PROG}: stopped\n")
        return 0
    if answer == "too long" or (answer in ("absent", "no code") and not lock_held(env)):
        sys.stdout.write(f"{PROG}: none was running\n")
        return 0
    return _fail(f"not stopped: {why_not(answer, env)}",
                 "find it with `pgrep -af 'tcg.runner.maskserver --server'`")


def main(argv: list[str]) -> int:
    """Entry of ``tcg_shell mask-server``."""
    if not argv or argv[0] in ("-h", "--help"):
        (sys.stdout if argv else sys.stderr).write(USAGE)
        return 0 if argv else int(ExitCode.USAGE)
    verb, rest = argv[0], list(argv[1:])
    if verb not in ("start", "status", "stop") or (verb == "status" and rest):
        sys.stderr.write(f"{PROG}: unknown or malformed command {' '.join(argv)!r}\n{USAGE}")
        return int(ExitCode.USAGE)
    if not sys.platform.startswith("linux"):
        return _fail("no masking fork server on this system (it runs on Linux only)",
                     "every session starts a masking process of its own (docs/shells.md)")
    env = os.environ
    try:
        if verb == "start":
            return start(rest, env)
        return status(env) if verb == "status" else stop(rest, env)
    except ValueError as exc:
        sys.stderr.write(f"{PROG}: {exc}\n{USAGE}")
        return int(ExitCode.USAGE)
