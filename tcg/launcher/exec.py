"""Become the agent: on POSIX the same process (os.execve), on Windows a child.

POSIX: no wrapper process and no PTY between the agent and the terminal — the
agent inherits the very file descriptors (and controlling terminal) `tcg
launch` was started with, and keeps its PID. Python ignores SIGPIPE and
SIGXFSZ, and ignored dispositions survive exec, so they are reset first.
Windows: os.execv does not replace the process (python/cpython#101191), so the
agent runs as a child with inherited handles and its exit code is returned.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Mapping

from tcg.errors import ExitCode


def exec_agent(path: str, argv: list[str], env: Mapping[str, str]) -> int:
    """Replace this process with the agent (POSIX); return its exit code (Windows).

    Returns only on failure (POSIX): 126 not executable, 127 not found.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "nt":
        import subprocess

        try:
            return subprocess.call([path, *argv[1:]], env=dict(env))
        except OSError as exc:
            sys.stderr.write(f"tcg: cannot start {argv[0]}: {exc.strerror}\n")
            return ExitCode.BLOCKED
    for name in ("SIGPIPE", "SIGXFSZ"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    try:
        os.execve(path, argv, dict(env))
    except OSError as exc:
        sys.stderr.write(f"tcg: cannot start {argv[0]} ({path}): {exc.strerror}\n")
        return ExitCode.NOT_FOUND if isinstance(exc, FileNotFoundError) else ExitCode.BLOCKED
    return ExitCode.NOT_FOUND  # pragma: no cover - execve does not return
