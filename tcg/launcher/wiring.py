"""Per-agent wiring: the environment a launched agent gets, and the helper files it points at.

Every agent gets ``TCG_ACTOR=agent``, ``TCG_AGENT=<name>`` and ``TCG_SESSION``
(the station agent reads them: its decisions are then the agent's). Then each
agent is routed through the choke point it offers (docs/agents.md):

- Claude Code: ``CLAUDE_CODE_SHELL_PREFIX`` = an executable that hands the
  whole line to the station (tcg.launcher.claude_prefix).
- codex, qwen / qwen-code, cursor-agent, cursor: they run tool commands as
  ``bash -c``/``bash -lc`` (or ``zsh -c``/``-lc``). ``BASH_ENV`` names a file bash
  reads before running the ``-c`` string; it re-runs that string
  (``$BASH_EXECUTION_STRING``) through the station. For zsh, ``ZDOTDIR`` points
  at a directory whose ``.zshenv`` does the same with ``$ZSH_EXECUTION_STRING``
  and then restores the user's own ZDOTDIR, so the user's zsh files still load.

Nothing in the user's own agent configuration is modified: all of it is
per-launch environment. Helper files are generated into tcg's state directory
(0700) with the absolute interpreter path, because package files may lose their
exec bit on install; an existing copy is verified (owner, mode, exact content)
and rewritten atomically when it differs.

The code lives in tcg.launcher.fastpath: every launch (cache hit or not) runs
it, and one module imports faster than two.
"""

from tcg.launcher.fastpath import (
    BASH_ENV_NAME,
    CLAUDE_AGENTS,
    PREFIX_NAME,
    SHELL_ENV_AGENTS,
    ZDOTDIR_NAME,
    WiringError,
    _quote,
    _shebang_ok,
    _write_verified,
    agent_env,
    bash_env_text,
    claude_prefix_text,
    ensure_claude_prefix,
    ensure_shell_env,
    helper_dir,
    zshenv_text,
)

__all__ = [
    "BASH_ENV_NAME", "CLAUDE_AGENTS", "PREFIX_NAME", "SHELL_ENV_AGENTS", "ZDOTDIR_NAME", "WiringError", "_quote",
    "_shebang_ok", "_write_verified", "agent_env", "bash_env_text", "claude_prefix_text", "ensure_claude_prefix",
    "ensure_shell_env", "helper_dir", "zshenv_text",
]
