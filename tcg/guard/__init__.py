"""Reversible deletes, git snapshots and outbound channels (docs/guard.md).

This module is imported by the policy engine for every line, so it holds only
the cheap test of whether a line needs the guard at all; the rules live in
tcg.guard.rules and are imported only for lines that touch them.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tcg.policy.cmdline import ParsedLine

# Programs whose runs the guard looks at: deleters, overwriters, git, the
# interpreters whose one-liners may delete, and tcg itself (the agent may not
# approve its own requests or empty the trash).
GUARDED = frozenset({
    "rm", "rmdir", "unlink", "find", "shred", "truncate", "dd", "cp", "mv", "install", "ln", "tee",
    "sed", "perl", "rsync", "git", "curl", "wget",
    "python", "python3", "python2", "pypy", "pypy3", "node", "bun", "deno", "ruby", "php",
    "tcg", "tcg_shell",
})
_TRUNCATING = frozenset({">", ">|", "&>"})


def wanted(parsed: ParsedLine) -> bool:
    """True when some command or redirection of the line is the guard's business."""
    for cmd in parsed.commands:
        if cmd.opaque or (cmd.argv and cmd.name is None) or cmd.name in GUARDED:
            return True
    return any(r.op in _TRUNCATING and r.target is not None for r in parsed.redirects)
