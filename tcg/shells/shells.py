"""One class per supported shell: which hook file, how to quote, how to install.

The hook files are real shell files in this package (valid at rest, linted by
shellcheck/zsh -n); a class only fills the TEMPLATE placeholders with values
escaped for its shell (direnv's per-shell ``Hook`` classes, click's
``ShellComplete.source()``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from importlib import resources

from tcg.shells import quoting

BEGIN_MARK = "# >>> tcg shell hook >>>"
END_MARK = "# <<< tcg shell hook <<<"
# The early start block (bash, zsh): first in the rc file, so that the shell a
# terminal starts becomes a session before it reads the rest (docs/shells.md).
EARLY_BEGIN_MARK = "# >>> tcg early start >>>"
EARLY_END_MARK = "# <<< tcg early start <<<"
START_SLOT = "# @TCG_START@\n"  # where a hook file takes the session start
INIT_LINE = "tcg_shell init"  # the eval form's line: `eval "$(tcg_shell init zsh)"`

# cmd.exe's content-reader macros (cmd has no session; docs/shells.md).
READERS = (
    "cat", "less", "more", "head", "tail", "grep", "egrep", "fgrep", "rg", "bat", "nl", "od",
    "xxd", "strings",
)
_AGENT_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


_HOOK_ID_RE = re.compile(r"^# tcg hook for (\S+) \(tcg-hook-id: ([\w.-]+)\)", re.M)


def hook_ids(text: str) -> list[tuple[str, str]]:
    """(shell, hook id) of each generated hook's header line in ``text``: which
    version of the hook an rc file holds (a hook whose hello lacks what the
    station now checks is from an older version)."""
    return _HOOK_ID_RE.findall(text)


def older_hook(found: str, current: str) -> bool:
    """Whether hook id ``found`` names an older version than ``current``
    (``tcg-shell-hook-v2`` < ``-v3``); a newer or unreadable one is not older."""
    a, b = re.search(r"-v(\d+)$", found), re.search(r"-v(\d+)$", current)
    return bool(a and b and found[:a.start()] == current[:b.start()] and int(a[1]) < int(b[1]))


def installed_parts(text: str) -> tuple[bool, bool]:
    """Whether an rc file's ``text`` loads the hook (its marked block, or an
    uncommented `tcg_shell init` line that is not the early form) and whether it
    has the early start block (tcg doctor, `tcg_shell init --early --rc`)."""
    hook = early = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped == EARLY_BEGIN_MARK:
            early = True
        elif stripped == BEGIN_MARK or (INIT_LINE in stripped and not stripped.startswith("#")
                                        and "--early" not in stripped):
            hook = True
    return hook, early


@dataclass(frozen=True)
class Features:
    """What the rendered hook wires up, decided once at `init` time (no Python at load)."""

    python: str  # absolute interpreter path (sys.executable: never a pyenv/asdf shim)
    session: bool  # the station (`tcg_shell session`, `run-argv`) is importable
    launch: bool  # `tcg launch` exists: agent functions go through the gate
    agents: tuple[str, ...]
    # the installed tcg package directory: the hook starts a session only while
    # it exists (an uninstalled tcg must not take every new terminal down with it)
    package: str = ""


def package_dir() -> str:
    import tcg

    return os.path.dirname(os.path.abspath(tcg.__file__))


def valid_agents(names: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Agent names usable as function/macro names; anything else is refused."""
    out = []
    for name in names:
        if not _AGENT_RE.match(name):
            raise quoting.QuotingError(
                f"agent name {name!r} in agents.known is not a plain word",
                hint="agent names may use letters, digits and _ . - only",
            )
        out.append(name)
    return tuple(out)


def _template(name: str) -> str:
    return (resources.files("tcg") / "shells" / name).read_text(encoding="utf-8")


def _start_part(name: str) -> str:
    """The session start (start.bash, start.zsh) between its START markers: one
    copy of it, put into the hook and into the early start block alike."""
    text = _template(name)
    begin, end = "# --- START (begin) ---\n", "# --- START (end) ---\n"
    return text[text.index(begin) + len(begin):text.index(end)]


class ShellHook:
    name = ""
    template = ""
    early_template = ""  # the early start block's file; "" where the shell has none
    start_template = ""  # the session start both files take (START_SLOT)
    install = ""
    uninstall = ""

    def quote(self, value: str) -> str:
        raise NotImplementedError

    def values(self, f: Features) -> dict[str, str]:
        return {
            "@TCG_PY@": f.python,
            "@TCG_LAUNCH@": "1" if f.launch else "0",
            "@TCG_SESSION@": "1" if f.session else "0",
            "@TCG_PKG@": f.package or package_dir(),
            "@TCG_AGENTS@": " ".join(valid_agents(f.agents)),
        }

    def render(self, f: Features, early: bool = False) -> str:
        """The hook text (``early``: the early start block) with every placeholder
        replaced by its quoted value."""
        text = _template(self.early_template if early else self.template)
        if self.start_template:
            text = text.replace(START_SLOT, _start_part(self.start_template), 1)
        for key, value in self.values(f).items():
            text = text.replace(self.quote(key), self.quote(value))
        if early:
            return f"{EARLY_BEGIN_MARK}\n{text.rstrip()}\n{EARLY_END_MARK}\n"
        return self.wrap(text)

    def wrap(self, text: str) -> str:
        return f"{BEGIN_MARK}\n{text.rstrip()}\n{END_MARK}\n"

    @property
    def hook_id(self) -> str:
        """This version's hook id (the template's header line)."""
        found = hook_ids(_template(self.template))
        return found[0][1] if found else ""


class Bash(ShellHook):
    name = "bash"
    template = "hook.bash"
    early_template = "early.bash"
    start_template = "start.bash"
    install = "tcg_shell init bash >> ~/.bashrc   (or eval \"$(tcg_shell init bash)\" in ~/.bashrc)"
    uninstall = "tcg_shell init --uninstall bash --rc ~/.bashrc"

    def quote(self, value: str) -> str:
        return quoting.posix_quote(value)


class Zsh(Bash):
    name = "zsh"
    template = "hook.zsh"
    early_template = "early.zsh"
    start_template = "start.zsh"
    install = "tcg_shell init zsh >> ~/.zshrc   (or eval \"$(tcg_shell init zsh)\" in ~/.zshrc)"
    uninstall = "tcg_shell init --uninstall zsh --rc ~/.zshrc"


class PowerShell(ShellHook):
    name = "powershell"
    template = "hook.ps1"
    install = "Invoke-Expression (& tcg_shell init powershell | Out-String)   # in $PROFILE"
    uninstall = "delete the `Invoke-Expression (& tcg_shell init powershell ...)` line from $PROFILE"

    def quote(self, value: str) -> str:
        return quoting.powershell_quote(value)


class Cmd(ShellHook):
    """DOSKEY macro file: fixed macro text, data only after cmd_check()."""

    name = "cmd"
    template = "macros.doskey"
    install = (
        "tcg_shell init cmd > \"%LOCALAPPDATA%\\tcg\\macros.doskey\" then run "
        "doskey /macrofile=\"%LOCALAPPDATA%\\tcg\\macros.doskey\" (docs/shells.md)"
    )
    uninstall = "doskey /reinstall (or open a new console) and delete macros.doskey"

    def render(self, f: Features, early: bool = False) -> str:
        """The macro file (cmd.exe has no early start block: tcg.shells.generator refuses one)."""
        py = quoting.cmd_quote(f.python, what="interpreter path")
        lines = [
            ln for ln in _template(self.template).splitlines()
            if ln.startswith(";") and not ln.startswith(";@")
        ]
        if f.session:
            for name in READERS:
                lines.append(f"{quoting.cmd_name(name)}={py} -I -m tcg.shell_entry run-argv {name} $*")
        for name in valid_agents(f.agents):
            name = quoting.cmd_name(name)
            if f.launch:
                lines.append(f"{name}={py} -I -m tcg launch {name} $*")
        for line in lines:
            quoting.cmd_check(line.replace('"', "").replace("$*", ""), what="macro line")
        return "\r\n".join(lines) + "\r\n"


SHELLS: dict[str, type[ShellHook]] = {
    "zsh": Zsh,
    "bash": Bash,
    "powershell": PowerShell,
    "pwsh": PowerShell,
    "cmd": Cmd,
}
SUPPORTED = tuple(SHELLS)
