"""Become the agent: on POSIX the same process (os.execve), on Windows a child.

POSIX: no wrapper process and no PTY between the agent and the terminal — the
agent inherits the very file descriptors (and controlling terminal) `tcg
launch` was started with, and keeps its PID. Python ignores SIGPIPE and
SIGXFSZ, and ignored dispositions survive exec, so they are reset first.
Windows: os.execv does not replace the process (python/cpython#101191), so the
agent runs as a child with inherited handles and its exit code is returned.

The code lives in tcg.launcher.fastpath (the cache-hit launch runs it).
"""

import os  # noqa: F401 - tests patch exec.os.name to exercise the Windows branch

from tcg.launcher.fastpath import exec_agent

__all__ = ["exec_agent"]
