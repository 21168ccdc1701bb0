"""Where a path leads: the one symlink resolution the checks share.

A protected file reached through a symlink is the protected file: an MCP
request's path (tcg.mcp.check_request) and an agent file tool's path
(tcg.policy.access.evaluate_access) are judged both as written and where they
lead. Only ``os`` is imported (an agent hook pays its imports on every call).
"""

from __future__ import annotations

import os

MAX_PATH_LEN = 4096  # longer strings are never resolved as paths (no file system takes them)


def real_path(path: str) -> str | None:
    """``path`` (absolute) with every symlink on the way resolved: a symlinked
    parent directory, a chain of links, and a dangling link's target too (what a
    write through it would create). None when it cannot name a file: empty, too
    long, or holding NUL (the caller decides what that means)."""
    if not path or len(path) > MAX_PATH_LEN or "\x00" in path:
        return None
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return None
