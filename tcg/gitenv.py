"""The environment tcg runs git in: read-only, program-free, offline.

Shared by the scanner (tcg.scan.gitobjects) and the launch gate's state key
(tcg.launcher.state), so both see a repository the same way. Plain ``os``:
the launch imports it on every run.

- no inherited repository overrides (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE,
  GIT_OBJECT_DIRECTORY), no command-line config from the caller;
- a scanned repository's own config must not run programs: ``core.fsmonitor``
  names a command that `git status`/`git ls-files` would execute, and
  command-line level config (GIT_CONFIG_COUNT) overrides the repository's;
- never the network: in a partial clone git would fetch missing objects from
  the promisor remote on demand; no transport allowed = the fetch fails fast;
- C locale, no prompt, no system config.
"""

from __future__ import annotations

import os

GIT_ENV_DROP = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY")


def git_env() -> dict[str, str]:
    """Environment for git children (see the module docstring)."""
    env = {k: v for k, v in os.environ.items()
           if k not in GIT_ENV_DROP and not k.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))}
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["LC_ALL"] = "C"
    env.setdefault("GIT_CONFIG_NOSYSTEM", "1")
    env["GIT_ALLOW_PROTOCOL"] = ""
    env["GIT_CONFIG_COUNT"] = "1"
    env["GIT_CONFIG_KEY_0"] = "core.fsmonitor"
    env["GIT_CONFIG_VALUE_0"] = "false"
    return env
