"""The helper files through which `tcg launch` routes an agent's shell commands
into the station, by name.

tcg.launcher.wiring writes them into tcg's state directory and points the
agent's environment at them (CLAUDE_CODE_SHELL_PREFIX, BASH_ENV, ZDOTDIR); an
agent's hook (tcg.agents.claude, tcg.agents.qwen) reads the same environment
to tell whether the agent's own shell commands already go through the station.
The names live here, below both, so the hook never imports the launcher.
"""

from __future__ import annotations

PREFIX_NAME = "tcg-claude-prefix"  # the CLAUDE_CODE_SHELL_PREFIX executable
BASH_ENV_NAME = "tcg-bash-env.sh"  # the BASH_ENV file of agents that run `bash -c`
ZDOTDIR_NAME = "zdotdir"  # the ZDOTDIR of agents that run `zsh -c`
