"""What Claude Code's ``CLAUDE_CODE_SHELL_PREFIX`` runs: hand the line to the station.

Claude Code calls the prefix executable with the WHOLE shell line as one
argument (``source <snapshot> … && eval '<cmd>' < /dev/null && pwd -P >| <file>``)
for every Bash-tool command and every hook command (docs/agents.md). The
line is run exactly as `tcg_shell run-line LINE` would: policy first (actor =
agent, from TCG_ACTOR/TCG_AGENT), then the shell, output masked (pipe mode).

The shell is the one Claude Code itself would use: its snapshot file names it
(``snapshot-zsh-…``), else $SHELL when that is bash or zsh, else bash. The
launcher materialises a tiny executable that imports this module (see
tcg.launcher.wiring.ensure_claude_prefix).
"""

from __future__ import annotations

import os
import sys

from tcg.errors import ExitCode

USAGE = "usage: tcg-claude-prefix LINE  (Claude Code passes the whole command line as ONE argument)\n"


def pick_shell(line: str, env: dict[str, str] | os._Environ[str]) -> str:
    """bash or zsh, as Claude Code would have run the line."""
    from tcg.runner.base import which

    wanted = None
    head = line[:4096]
    if "snapshot-zsh-" in head:
        wanted = "zsh"
    elif "snapshot-bash-" in head:
        wanted = "bash"
    user = env.get("SHELL", "")
    if wanted is None and os.path.basename(user) in ("bash", "zsh"):
        wanted = os.path.basename(user)
    if wanted and os.path.basename(user) == wanted and os.access(user, os.X_OK):
        return user
    for name in (wanted or "bash", "bash", "zsh"):
        found = which(name, env.get("PATH"))
        if found:
            return found
    return "/bin/sh"


EVAL = " && eval "
CWD_FILE = " < /dev/null && pwd -P >| "


def agent_command(line: str) -> str | None:
    """The model's own command inside Claude Code's wrapper (``… && eval 'CMD' <
    /dev/null && pwd -P >| FILE``, measured with 2.1.328), or None when the line
    has another shape. The wrapper changes with every call (its cwd file), so a
    person's approval (`tcg approve`) is for this command, as the agent's hook
    saw it, not for the wrapper."""
    start = line.find(EVAL)
    end = line.rfind(CWD_FILE)
    if start < 0 or end <= start or " " in line[end + len(CWD_FILE):]:
        return None
    import shlex

    try:
        words = shlex.split(line[start + len(EVAL):end])
    except ValueError:
        return None
    return words[0] if len(words) == 1 else None


def main(argv: list[str]) -> int:
    """Entry point of the materialised prefix: ``argv`` is everything after the program name."""
    if len(argv) != 1:
        # Not what Claude Code does; refuse rather than guess what would run.
        sys.stderr.write(f"tcg-claude-prefix: expected ONE argument, got {len(argv)}\n{USAGE}")
        return ExitCode.BLOCKED
    from tcg.errors import run_with_error_handler
    from tcg.runner.station import Station

    line = argv[0]

    def run() -> int:
        station = Station()
        station.approval_line = agent_command(line)
        return station.run_line(line, shell=pick_shell(line, os.environ))

    return run_with_error_handler(run, prog="tcg")
