"""``tcg_shell mask-server start|status|stop``: the masking fork server by hand.

Sessions start the server themselves (tcg.runner.maskserver), so every terminal
but the first gets a masking process that has its code and detector loaded. The
first one after login, and the first after the server's idle time ran out, load
them on their own, which is most of a new terminal's wait for its first prompt.
``start`` in a login profile (~/.profile, ~/.zprofile) has the server loaded
before the first terminal opens; its server stays for ``--idle`` seconds without
a session (12 hours unless told: a working day), where one a session started
stays 30 minutes. Linux only, as the server.
"""

from __future__ import annotations

import os
import sys
import time

from tcg.errors import ExitCode
from tcg.runner import maskserver

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

USAGE = """usage: tcg_shell mask-server start [--idle SECONDS] [--wait SECONDS]
       tcg_shell mask-server status
       tcg_shell mask-server stop
"""
PROG = "tcg_shell mask-server"
LOGIN_IDLE = 12 * 3600  # seconds a started server waits for sessions: a working day
ASK_WAIT = 2.0  # seconds a server may take to answer ping or stop


def ask(env: Mapping[str, str], verb: bytes) -> str:
    """The server's answer to ``verb`` (maskserver.CONTROL), or why there is none:
    ``absent`` (nobody listens), ``not ours`` (a listener this install must not
    trust: another user, namespace or interpreter) or ``no answer``."""
    from tcg._lean import sockets as socket

    path = maskserver.socket_path(env)
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


def start(args: list[str], env: Mapping[str, str]) -> int:
    """Launch a server unless one of this install serves; ``--wait``: until it serves."""
    try:
        idle = _seconds(args, "--idle", LOGIN_IDLE)
        wait = _seconds(args, "--wait", 0.0)
    except ValueError as exc:
        sys.stderr.write(f"{PROG}: {exc}\n{USAGE}")
        return int(ExitCode.USAGE)
    if args:
        sys.stderr.write(f"{PROG}: unexpected arguments: {' '.join(args)}\n{USAGE}")
        return int(ExitCode.USAGE)
    if not maskserver.enabled(env):
        why = ("TCG_MASK_SERVER=0 turns it off" if env.get(maskserver.ENV_SWITCH) == "0"
               else "it runs on Linux only")
        return _fail(f"no masking fork server here ({why})",
                     "sessions start a masking process of their own (docs/shells.md)")
    answer = ask(env, b"ping")
    if answer == "not ours":
        return _not_ours(env)
    if answer == "no code":  # a stale server: it is exiting, and holds the lock until it has
        _wait_unlocked(env, ASK_WAIT)
    if serving(answer) is None:  # absent, stale, or still loading: the lock decides
        maskserver.launch(dict(env, **{maskserver.ENV_IDLE: str(int(idle))}), now=True)
        maskserver.hurry(10.0)
    if wait:
        deadline = time.monotonic() + wait
        while serving(ask(env, b"ping")) is None:
            if time.monotonic() > deadline:
                return _fail(f"the server did not serve within {wait:g} s",
                             f"`{PROG} status`, or `tcg doctor`")
            time.sleep(0.05)
    return 0


def _wait_unlocked(env: Mapping[str, str], limit: float) -> None:
    """Until no server holds this install's lock (a new one would give up on it)."""
    import fcntl

    try:
        fd = os.open(maskserver.socket_path(env)[:-5] + ".lock", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                return
            except OSError:
                time.sleep(0.02)
    finally:
        os.close(fd)


def _not_ours(env: Mapping[str, str]) -> int:
    return _fail(f"a process this install does not trust listens at {maskserver.socket_path(env)}",
                 "it is not tcg's server for this user and install: find it with "
                 "`ss -xlp`, stop it, then try again")


def status(env: Mapping[str, str]) -> int:
    answer = ask(env, b"ping")
    served = serving(answer)
    if served is not None:
        sys.stdout.write(f"{PROG}: serving this install (pid {served[0]}; it exits after "
                         f"{served[1]} s without a new session)\n")
        return 0
    if answer == "not ours":
        return _not_ours(env)
    why = {"absent": "no server runs for this install",
           "no code": "the server ran other code than this install has, and has stopped"
           }.get(answer, f"the server did not answer ({answer})")
    sys.stdout.write(f"{PROG}: {why}; the next session starts one, or `{PROG} start`\n")
    return int(ExitCode.ERROR)


def stop(env: Mapping[str, str]) -> int:
    """Stop this install's server; sessions it served keep their masking processes."""
    answer = ask(env, b"stop")
    if answer in ("stopping", "no code", "absent"):
        sys.stdout.write(f"{PROG}: {'stopped' if answer == 'stopping' else 'none was running'}\n")
        return 0
    if answer == "not ours":
        return _not_ours(env)
    return _fail(f"the server did not answer ({answer})", f"`{PROG} status`")


def main(argv: list[str]) -> int:
    """Entry of ``tcg_shell mask-server``."""
    if not argv or argv[0] in ("-h", "--help"):
        (sys.stdout if argv else sys.stderr).write(USAGE)
        return 0 if argv else int(ExitCode.USAGE)
    verb, rest = argv[0], list(argv[1:])
    env = os.environ
    if verb == "start":
        return start(rest, env)
    if verb in ("status", "stop") and not rest:
        return status(env) if verb == "status" else stop(env)
    sys.stderr.write(f"{PROG}: unknown or malformed command {' '.join(argv)!r}\n{USAGE}")
    return int(ExitCode.USAGE)
