"""How `tcg_shell run-line` was started: its arguments, the shell to run the line
with, and whether an outer tcg already mediates this process (then the line passes
through: :func:`exec_direct`).

Read on every command before anything is decided, so this module imports only
``os`` and ``sys`` (the OS helpers it needs come from tcg.osutil when called).
"""

from __future__ import annotations

import os
import sys

from tcg.errors import ExitCode

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

USAGE = "usage: tcg_shell run-line [--shell PATH] [--] LINE\n"

# Basenames accepted as "the parent shell" (the process that called us).
KNOWN_SHELLS = frozenset(
    {"bash", "zsh", "sh", "dash", "ksh", "ksh93", "mksh", "oksh", "yash", "fish", "ash"}
)
MEDIATED = "TCG_MEDIATED"
MEDIATED_FDS = "TCG_MEDIATED_FDS"
SANDBOXED = "TCG_SANDBOXED"  # set inside an agent's view: a nested tcg is already in it (tcg.runner.agent_view)


class UsageError(Exception):
    """The run-line arguments are malformed (the message says how)."""


def parse_args(argv: list[str]) -> tuple[str | None, str]:
    """``[--shell PATH] [--] LINE`` — LINE must be exactly one argument."""
    shell = None
    args = list(argv)
    while args and args[0].startswith("--"):
        opt = args.pop(0)
        if opt == "--":
            break
        if opt == "--shell":
            if not args:
                raise UsageError("--shell needs a value")
            shell = args.pop(0)
        elif opt.startswith("--shell="):
            shell = opt.split("=", 1)[1]
        else:
            raise UsageError(f"unknown option {opt!r}")
    if not args:
        raise UsageError("missing LINE")
    if len(args) > 1:
        raise UsageError(
            f"LINE must be ONE argument, got {len(args)} (quote the whole command line)"
        )
    if shell == "":
        raise UsageError("--shell needs a value")
    return shell, args[0]


def detect_shell(option: str | None, env: Any,
                 parent_shell: Callable[[], str | None] | None = None) -> str:
    """``--shell``, else $TCG_SHELL, else the shell that called us, else $SHELL.

    The parent is read from /proc (one readlink) instead of shellingham, which
    costs import time on every command. ``parent_shell`` replaces that lookup
    (the path of the calling shell, or None when the caller is not a shell), so
    a test decides what called us instead of depending on how it was started.
    """
    from tcg.osutil import which

    for candidate in (option, env.get("TCG_SHELL")):
        if candidate:
            found = which(candidate, env.get("PATH"))
            return found or candidate
    parent = (parent_shell or _parent_shell)()
    if parent:
        return parent
    user_shell = env.get("SHELL", "")
    if user_shell and os.path.basename(user_shell) in KNOWN_SHELLS and os.access(user_shell, os.X_OK):
        return user_shell
    for name in ("bash", "zsh"):
        found = which(name, env.get("PATH"))
        if found:
            return found
    return "/bin/sh"


def _parent_shell() -> str | None:
    try:
        exe = os.readlink(f"/proc/{os.getppid()}/exe")
    except OSError:
        return None
    if exe.endswith(" (deleted)"):
        return None
    return exe if os.path.basename(exe) in KNOWN_SHELLS else None


def is_nested(env: Any) -> bool:
    """True when a mediating tcg already masks our stdout and stderr.

    TCG_MEDIATED alone is not trusted (anyone can set it): fds 1 and 2 must be
    the very PTY or pipes the outer station reads (TCG_MEDIATED_FDS). Then
    everything we print passes the outer masker anyway, and a second PTY or
    masker would only cost time.
    """
    if not env.get(MEDIATED):
        return False
    ids = set(env.get(MEDIATED_FDS, "").split(","))
    from tcg.osutil import fd_identity

    try:
        return fd_identity(1) in ids and fd_identity(2) in ids
    except OSError:
        return False


def exec_direct(argv: list[str], env: Any) -> int:
    """Nested pass-through: become the command (no second PTY or masker)."""
    from tcg.osutil import signal, which

    path = which(argv[0], env.get("PATH"))
    if path is None:
        sys.stderr.write(f"tcg: {argv[0]}: command not found\n")
        return ExitCode.NOT_FOUND
    for name in ("SIGPIPE", "SIGXFSZ"):  # ignored dispositions survive exec
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(path, argv, env)
    except OSError as exc:
        sys.stderr.write(f"tcg: {argv[0]}: {exc.strerror}\n")
        return 126 if exc.errno == 13 else 127
    return 127  # pragma: no cover - execve does not return
