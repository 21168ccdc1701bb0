"""How `tcg launch codex` sets Codex up so that tcg, not Codex, builds its commands' OS view.

Codex on Linux runs each command in a sandbox of its own (bubblewrap, seccomp,
Landlock; ``codex exec`` defaults to read-only). Measured with 0.169.0, inside it
the station can do neither of the two things an agent's command needs:

- build tcg's view (secret stores covered): Codex's sandbox forbids creating
  namespaces — ``unshare`` fails and so does bubblewrap ("Creating new namespace
  failed"), under ``read-only`` and ``workspace-write`` alike;
- record the command's event: tcg's state directory is read-only there.

So tcg runs Codex's command runner with ``sandbox_mode = "danger-full-access"``
and puts its own layers in place of Codex's: every command still goes through
the station (policy, the OS view, a scrubbed environment, strict masking, one
event). A ``-c`` override outranks ``config.toml`` and profiles (measured), so a
sandbox chosen there is replaced; one chosen on the command line (``--sandbox``,
``--approve-for-me``, a ``-c sandbox_mode=`` of the user's) outranks tcg's and is
refused at launch with a hint. Should Codex's sandbox be in force anyway (a
managed requirement, a future default), each command fails closed in the
station: no view, or no writable event log → refused with 126.
"""

from __future__ import annotations

FULL_ACCESS = "danger-full-access"
# In front of the user's arguments (root-level options: they reach `exec` and the TUI alike).
# The start-up shell snapshot is a `bash -c` script the station refuses (it runs code it
# cannot see) and Codex waits seconds for; commands go through the station either way.
ARGS = ("-c", "features.shell_snapshot=false", "-c", f'sandbox_mode="{FULL_ACCESS}"')
WIRED = ("codex-no-shell-snapshot", "codex-sandbox-by-tcg")
# Options that put Codex's own sandbox back in force (they outrank tcg's -c override).
OWN_SANDBOX_FLAGS = ("--approve-for-me", "--full-auto")
SANDBOX_OPTIONS = ("-s", "--sandbox")
CONFIG_OPTIONS = ("-c", "--config")


class OwnSandboxChosen(Exception):
    """The user's arguments choose Codex's own sandbox for its commands."""


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _values(args: list[str], names: tuple[str, ...]) -> list[tuple[str, str]]:
    """(the option as written, its value) for every ``NAME VALUE``, ``--name=VALUE``
    and ``-xVALUE`` before ``--``."""
    found = []
    i = 0
    while i < len(args) and args[i] != "--":
        arg = args[i]
        for name in names:
            if arg == name:
                value = args[i + 1] if i + 1 < len(args) else ""
                found.append((f"{arg} {value}", value))
                i += 1
                break
            if name.startswith("--") and arg.startswith(name + "="):
                found.append((arg, arg[len(name) + 1:]))
                break
            if not name.startswith("--") and arg.startswith(name) and len(arg) > len(name):
                found.append((arg, arg[len(name):]))
                break
        i += 1
    return found


def own_sandbox_choice(args: list[str]) -> str | None:
    """The option in ``args`` that would run Codex's commands in its own sandbox, or None."""
    opts = args[: args.index("--")] if "--" in args else args
    for flag in OWN_SANDBOX_FLAGS:
        if flag in opts:
            return flag
    for written, value in _values(args, SANDBOX_OPTIONS):
        if _unquote(value) != FULL_ACCESS:
            return written
    for written, value in _values(args, CONFIG_OPTIONS):
        key, sep, setting = value.partition("=")
        if sep and key.strip() == "sandbox_mode" and _unquote(setting) != FULL_ACCESS:
            return written
    return None


def wire(args: list[str]) -> list[str]:
    """Codex's arguments with tcg's in front; OwnSandboxChosen when the user's own
    arguments would keep Codex's sandbox in force."""
    chosen = own_sandbox_choice(args)
    if chosen is not None:
        raise OwnSandboxChosen(chosen)
    return [*ARGS, *args]
