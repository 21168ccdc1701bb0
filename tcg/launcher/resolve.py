"""Find the real agent binary on PATH, skipping tcg's own shims.

The shell hooks define functions (claude, codex, …) that call `tcg launch`;
functions are invisible to a PATH lookup, so they need no special case. A
PATH entry that is one of tcg's own entry points (a script that would call
`tcg launch` again) is skipped so a launch can never recurse into itself.
Empty PATH entries (the current directory) are never used: the repository
under scan must not be able to plant the agent.
"""

from __future__ import annotations

import os
import sys

# Any executable holding this marker in its first bytes is a tcg shim.
SHIM_MARKER = b"tcg-launch-shim"
_SNIFF = 1024


def is_tcg_shim(path: str) -> bool:
    """True for a file tcg generated (marked) or one of tcg's own console scripts."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(_SNIFF)
    except OSError:
        return False
    if SHIM_MARKER in head:
        return True
    # A console script of this very tcg install (`tcg`, `tcg_shell`) is never an agent.
    return head.startswith(b"#!") and b"from tcg" in head


def _candidates(name: str, path_env: str | None) -> list[str]:
    exts = [""]
    if os.name == "nt":
        exts = [""] + [e.lower() for e in os.environ.get("PATHEXT", ".COM;.EXE;.BAT;.CMD").split(";") if e]
    out = []
    for d in (path_env if path_env is not None else os.defpath).split(os.pathsep):
        if not d:
            continue  # an empty entry means cwd: never pick an agent from the repo under scan
        for ext in exts:
            out.append(os.path.join(d, name + ext))
    return out


def resolve_agent(name: str, path_env: str | None = None) -> str | None:
    """Absolute path of the first executable ``name`` on PATH that is not a tcg shim."""
    if os.sep in name or (os.altsep and os.altsep in name):
        return None  # agents are names from the policy, never paths
    seen: set[str] = set()
    for cand in _candidates(name, path_env):
        if not os.path.isfile(cand) or not os.access(cand, os.X_OK):
            continue
        real = os.path.realpath(cand)
        if real in seen:
            continue
        seen.add(real)
        if is_tcg_shim(real):
            continue
        return os.path.abspath(cand)
    return None


def interpreter() -> str:
    """The absolute path of the running Python (what generated helpers exec).

    ``sys.executable`` is never resolved through symlinks: a venv's
    ``bin/python`` is a link whose target would lose the venv's packages.
    """
    return os.path.abspath(sys.executable)
