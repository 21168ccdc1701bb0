"""Find the real agent binary on PATH, skipping tcg's own shims.

The shell hooks define functions (claude, codex, …) that call `tcg launch`;
functions are invisible to a PATH lookup, so they need no special case. A
PATH entry that is one of tcg's own entry points (a script that would call
`tcg launch` again) is skipped so a launch can never recurse into itself.
Empty PATH entries (the current directory) are never used.

The code lives in tcg.launcher.fastpath (the cache-hit launch runs it, and one
module imports faster than several).
"""

from tcg.launcher.fastpath import SHIM_MARKER, _is_tcg_shim, interpreter, resolve_agent

__all__ = ["SHIM_MARKER", "_is_tcg_shim", "interpreter", "resolve_agent"]
