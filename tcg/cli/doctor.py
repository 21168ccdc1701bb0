"""`tcg doctor`: a self-check a user can run when something seems off.

Each check is a small function returning a Check; the command prints one line
per check and exits 1 when any check FAILs. Warnings (optional tools, hooks
not installed yet) are printed but do not fail. Checks take the environment as
an argument so tests can point them at a hermetic home.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import click

from tcg.errors import PolicyError
from tcg.paths import Paths, get_paths

OK = "ok"
WARN = "warn"
FAIL = "FAIL"

HOOK_MARKER = "tcg_shell init"


@dataclass(frozen=True)
class Check:
    status: str  # OK | WARN | FAIL
    name: str
    detail: str
    hint: str | None = None


Env = Mapping[str, str]


def check_python(env: Env) -> list[Check]:
    v = sys.version_info
    ver = f"{v.major}.{v.minor}.{v.micro}"
    if v < (3, 10):
        return [Check(FAIL, "python", f"Python {ver} is too old", "tcg needs Python 3.10 or newer")]
    return [Check(OK, "python", f"Python {ver} ({sys.executable})")]


def check_entry_points(env: Env) -> list[Check]:
    """The console scripts are installed and on PATH (the shell hooks call them by name)."""
    from importlib import metadata

    out: list[Check] = []
    try:
        eps = {ep.name: ep for ep in metadata.entry_points(group="console_scripts")}
    except Exception as exc:  # noqa: BLE001 - broken metadata is a finding, not a crash
        return [Check(FAIL, "install", f"cannot read installed entry points: {exc}")]
    for name in ("tcg", "tcg_shell"):
        ep = eps.get(name)
        if ep is None:
            out.append(
                Check(FAIL, name, "entry point not installed", "reinstall: pipx install tcg (or pip install -e .)")
            )
            continue
        try:
            ep.load()
        except Exception as exc:  # noqa: BLE001
            out.append(Check(FAIL, name, f"entry point {ep.value} does not load: {type(exc).__name__}",
                             "reinstall tcg"))
            continue
        found = shutil.which(name, path=env.get("PATH", os.defpath))
        if found is None:
            out.append(
                Check(FAIL, name, "installed but not on PATH",
                      "add the install's bin directory to PATH (pipx ensurepath)")
            )
        else:
            out.append(Check(OK, name, found))
    return out


def check_policy(env: Env) -> list[Check]:
    from tcg.policy.load import load_policy

    try:
        pol = load_policy(environ=dict(env))
    except PolicyError as exc:
        return [Check(FAIL, "policy", exc.message, exc.hint)]
    out = [Check(OK, "policy", f"{pol.snapshot_id} from {', '.join(pol.sources)}")]
    out += [Check(WARN, "policy", notice) for notice in pol.notices]
    return out


def _mode_problem(path: Path, want: int) -> str | None:
    if os.name != "posix":
        return None
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        return f"{path} has mode {mode:04o}, expected {want:04o}"
    return None


def _nearest_existing(path: Path) -> Path:
    for p in (path, *path.parents):
        if p.exists():
            return p
    return Path("/")


def check_event_log(paths: Paths) -> list[Check]:
    """The log can be appended to, and the file (0600) and directory (0700) are private.

    Opens the file for append without writing, so doctor adds no record.
    """
    log = paths.events_file
    state = log.parent
    if not state.exists():
        parent = _nearest_existing(state)
        if os.access(parent, os.W_OK | os.X_OK):
            return [Check(OK, "event log", f"{log} (will be created on first event)")]
        return [Check(FAIL, "event log", f"cannot create {state}: {parent} is not writable",
                      "fix the permissions, or set TCG_HOME to a writable directory")]
    out: list[Check] = []
    problem = _mode_problem(state, 0o700)
    if problem:
        out.append(Check(FAIL, "event log", problem, f"chmod 700 {state}"))
    if log.exists():
        try:
            fd = os.open(log, os.O_WRONLY | os.O_APPEND)
            os.close(fd)
        except OSError as exc:
            return [*out, Check(FAIL, "event log", f"cannot append to {log}: {exc.strerror}",
                                f"check the owner and permissions of {log}")]
        problem = _mode_problem(log, 0o600)
        if problem:
            return [*out, Check(FAIL, "event log", problem, f"chmod 600 {log}")]
    elif not os.access(state, os.W_OK | os.X_OK):
        return [*out, Check(FAIL, "event log", f"{state} is not writable", f"check the permissions of {state}")]
    if not out:
        out.append(Check(OK, "event log", str(log)))
    return out


def check_key(paths: Paths) -> list[Check]:
    from tcg.keyhash import KEY_BYTES

    key = paths.key_file
    if not key.exists():
        return [Check(OK, "key", f"{key} (will be created on first use)")]
    problem = _mode_problem(key, 0o600)
    if problem:
        return [Check(FAIL, "key", problem, f"chmod 600 {key}")]
    try:
        size = len(key.read_bytes())
    except OSError as exc:
        return [Check(FAIL, "key", f"cannot read {key}: {exc.strerror}", f"check the owner of {key}")]
    if size < KEY_BYTES:
        return [Check(FAIL, "key", f"{key} is damaged ({size} bytes)",
                      f"delete it (rm {key}); a new key is made on next use, old placeholders change")]
    return [Check(OK, "key", str(key))]


def _clipboard_tools(env: Env) -> tuple[str, ...]:
    if sys.platform == "darwin":
        return ("pbcopy",)
    if sys.platform == "win32":
        return ()  # the clipboard is reached through the Windows API
    if env.get("WAYLAND_DISPLAY"):
        return ("wl-copy", "xclip", "xsel")
    return ("xclip", "xsel", "wl-copy")


def check_tools(env: Env) -> list[Check]:
    path = env.get("PATH", os.defpath)
    out: list[Check] = []

    def tool(name: str, missing_status: str, why: str) -> None:
        found = shutil.which(name, path=path)
        if found:
            out.append(Check(OK, f"tool {name}", found))
        else:
            out.append(Check(missing_status, f"tool {name}", f"not found ({why})",
                             f"install {name} with your package manager"))

    tool("git", FAIL, "repository scans and the launch gate need it")
    for name in ("bash", "zsh"):
        tool(name, WARN, "needed only if you use that shell")
    tool("tmux", WARN, "optional")
    clip = _clipboard_tools(env)
    if clip:
        found = [c for c in clip if shutil.which(c, path=path)]
        if found:
            out.append(Check(OK, "clipboard", ", ".join(found)))
        else:
            out.append(Check(WARN, "clipboard", f"none of {', '.join(clip)} found "
                             "(tcg clipboard watch needs one)", f"install {clip[0]}"))
    tool("shellcheck", WARN, "optional, for developing the hooks")
    return out


def _rc_files(env: Env) -> dict[str, Path]:
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    zdot = Path(env["ZDOTDIR"]) if env.get("ZDOTDIR") else home
    return {"bash": home / ".bashrc", "zsh": zdot / ".zshrc"}


def _installed_parts(text: str, shell: str) -> tuple[bool, bool, bool]:
    """(the hook, the early start block, a hook block of another version) in an rc
    file's text (tcg.shells.shells)."""
    try:
        from tcg.shells.shells import SHELLS, hook_ids, installed_parts, older_hook
    except ImportError:  # the hooks are a later part: an eval line or the marked block counts
        return any((HOOK_MARKER in ln and not ln.lstrip().startswith("#"))
                   or ln.strip() == "# >>> tcg shell hook >>>" for ln in text.splitlines()), False, False
    current = SHELLS[shell]().hook_id
    stale = any(name == shell and older_hook(found, current) for name, found in hook_ids(text))
    return (*installed_parts(text), stale)


def check_hooks(env: Env) -> list[Check]:
    """Hook lines in the rc files of installed shells: an uncommented `tcg_shell init …`
    (eval form) or the marked block that `tcg_shell init SHELL >> RC` appends."""
    out: list[Check] = []
    path = env.get("PATH", os.defpath)
    for shell, rc in _rc_files(env).items():
        if not shutil.which(shell, path=path) and not rc.exists():
            continue
        hint = f"echo 'eval \"$(tcg_shell init {shell})\"' >> {rc}"
        try:
            text = rc.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            out.append(Check(WARN, f"hook {shell}", f"{rc} does not exist", hint))
            continue
        except OSError as exc:
            out.append(Check(WARN, f"hook {shell}", f"cannot read {rc}: {exc.strerror}"))
            continue
        hook, early, stale = _installed_parts(text, shell)
        if stale:  # its hello lacks what the station checks now, or worse
            out.append(Check(WARN, f"hook {shell}", f"the tcg hook block in {rc} is from an older "
                             "tcg version", f"tcg_shell init --uninstall {shell} --rc {rc}, then "
                             f"tcg_shell init {shell} >> {rc}"
                             + (f" and tcg_shell init {shell} --early --rc {rc}" if early else "")))
        elif hook:
            if early:
                out.append(Check(OK, f"hook {shell}", f"present in {rc}, the early start block too"))
            else:
                out.append(Check(OK, f"hook {shell}", f"present in {rc} (a new terminal runs it "
                                 f"twice; `tcg_shell init {shell} --early --rc {rc}` avoids that)"))
        elif early:  # a session would start, but its shell would ask about no line
            out.append(Check(WARN, f"hook {shell}", f"{rc} has the early start block but not the "
                             "hook: a session starts and no line in it is checked",
                             f"tcg_shell init {shell} >> {rc}"))
        else:
            out.append(Check(WARN, f"hook {shell}", f"not installed in {rc}", hint))
    return out


def check_mask_server(env: Env) -> list[Check]:
    """The masking fork server of terminal sessions (Linux): serving, or why not; and
    a login profile block made for another install or version (it would start a
    Python at every login shell and never find its server)."""
    from tcg.runner import maskserver
    from tcg.runner.maskserver_cmd import ask, serving, why_not

    if not sys.platform.startswith("linux"):
        return []
    name = "mask server"
    out = _profile_blocks(env)
    if not maskserver.enabled(env):
        return out + [Check(OK, name, "off (TCG_MASK_SERVER=0): every session loads its own "
                                      "masking process")]
    answer = ask(env, b"ping")
    served = serving(answer)
    if served is not None:
        return out + [Check(OK, name, f"serving this install (pid {served[0]}; it exits after "
                                      f"{served[1]} s without a new session)")]
    if answer in ("absent", "no code", "no request"):
        return out + [Check(OK, name, f"{why_not(answer, env)}: a terminal that finds none loads "
                                      "its own masking process and starts one; `tcg_shell init "
                                      "--profile >> ~/.profile` starts it at login (docs/shells.md)")]
    hint = ("find it with `pgrep -af 'tcg.runner.maskserver --server'` and stop it"
            if answer != "too long" else "a shorter TCG_HOME or XDG_STATE_HOME")
    return out + [Check(WARN, name, f"{why_not(answer, env)}: sessions do not use it (each loads "
                                    "its own masking process)", hint)]


def _profile_blocks(env: Env) -> list[Check]:
    from tcg.errors import TcgError
    from tcg.shells.generator import interpreter
    from tcg.shells.profile import marked_block, profile_block

    home = Path(env.get("HOME") or os.path.expanduser("~"))
    zdot = Path(env["ZDOTDIR"]) if env.get("ZDOTDIR") else home
    try:
        current: str | None = profile_block(env, interpreter())
    except TcgError:
        current = None  # no server can run: any block starts a Python for nothing
    out: list[Check] = []
    for path in (home / ".profile", home / ".bash_profile", home / ".bash_login", zdot / ".zprofile"):
        try:
            found = marked_block(path.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
        if found is not None and found != current:
            out.append(Check(WARN, "mask server", f"the block in {path} was made for another tcg "
                             "install, version or setting: it starts a Python at every login "
                             "shell, for a server sessions do not use",
                             "delete its lines from `# >>> tcg mask server >>>` to `# <<< tcg mask "
                             f"server <<<` in {path}, then tcg_shell init --profile >> {path}"))
    return out


def check_agent_hooks(env: Env, cwd: str | None = None) -> list[Check]:
    """Claude Code's settings: tcg's hooks installed or not, other hooks on the same tools
    (hooks run in parallel and the last to finish wins: another PostToolUse hook's
    output can replace tcg's masked one), and settings that switch hooks off."""
    from tcg.agents.install import (
        InstallError,
        claude_settings_files,
        installed,
        other_tool_hooks,
        read_settings,
        tcg_interpreters,
    )

    here = cwd or os.getcwd()
    out: list[Check] = []
    user_has_tcg = False
    for scope, path in claude_settings_files(env, here):
        try:
            data = read_settings(path)
        except InstallError as exc:
            out.append(Check(WARN, f"claude {scope} settings", exc.message, exc.hint))
            continue
        if data is None:
            continue
        if scope == "user":
            user_has_tcg = installed(data)
            for python in sorted(tcg_interpreters(data)):
                if not os.access(python, os.X_OK):
                    out.append(Check(FAIL, "claude hooks", f"{path} runs tcg's hooks with {python}, which is gone: "
                                     "every tool call is blocked", "run `tcg agents install claude` again"))
        if data.get("disableAllHooks") is True:
            status = FAIL if scope == "managed" else WARN
            out.append(Check(status, f"claude {scope} settings", f"{path} sets disableAllHooks",
                             "remove it: `tcg launch claude` overrides it for its session, `claude` alone does not"
                             if scope != "managed" else "ask your administrator; tcg launch refuses to start claude"))
        if scope == "managed" and data.get("allowManagedHooksOnly") is True:
            out.append(Check(FAIL, "claude managed settings", f"{path} sets allowManagedHooksOnly",
                             "tcg's hooks cannot run; tcg launch refuses to start claude"))
        for event, matcher, command in other_tool_hooks(data):
            out.append(Check(WARN, f"claude {scope} settings",
                             f"another {event} hook on {matcher!r} ({command}) in {path}",
                             "hooks run in parallel and the last reply wins: a hook that rewrites tool input or "
                             "output can undo tcg's; remove it or make sure it never returns "
                             "updatedInput/updatedToolOutput"))
    if user_has_tcg:
        out.append(Check(OK, "claude hooks", "tcg's hooks are installed in the user settings"))
    else:
        out.append(Check(WARN, "claude hooks", "not installed in the user settings (`tcg launch claude` wires "
                         "them for its session)", "to cover `claude` started directly: tcg agents install claude"))
    return out


def check_sandbox(env: Env) -> list[Check]:
    """Which layer an agent's commands get below the line policy (docs/policy.md, "The sandbox view")."""
    from tcg.policy.load import load_policy
    from tcg.sandbox import UNAVAILABLE_HINT, fail_mode, probe

    try:
        policy = load_policy(environ=env)
    except PolicyError:
        return [Check(WARN, "sandbox", "not checked: the policy does not load (see the policy check)")]
    try:
        layer, problem = probe(policy)
    except Exception as exc:  # noqa: BLE001 - a broken check is a finding
        return [Check(FAIL, "sandbox", f"cannot check the sandbox view ({type(exc).__name__})")]
    if problem is None:
        return [Check(OK, "sandbox", f"{layer}: agent commands run with secret stores covered and secret "
                                     "variables removed")]
    if layer == "none" and sys.platform == "win32":
        return [Check(WARN, "sandbox", problem)]
    if fail_mode(policy) == "warn":
        return [Check(WARN, "sandbox", f"unavailable ({problem}); agent commands run with the line policy, a "
                                       "scrubbed environment and masking only", UNAVAILABLE_HINT)]
    return [Check(FAIL, "sandbox", f"unavailable ({problem}); agent commands are refused (sandbox-unavailable)",
                  UNAVAILABLE_HINT)]


def run_checks(env: Env | None = None) -> list[Check]:
    """Every check, in display order."""
    e: Env = os.environ if env is None else env
    paths = get_paths(dict(e))
    steps: list[Callable[[], list[Check]]] = [
        lambda: check_python(e),
        lambda: check_entry_points(e),
        lambda: check_policy(e),
        lambda: check_event_log(paths),
        lambda: check_key(paths),
        lambda: check_tools(e),
        lambda: check_hooks(e),
        lambda: check_mask_server(e),
        lambda: check_agent_hooks(e),
        lambda: check_sandbox(e),
    ]
    out: list[Check] = []
    for step in steps:
        out += step()
    return out


@click.command()
@click.pass_context
def doctor(ctx: click.Context) -> None:
    """Check the install, policy, event log, key, tools, shell hooks and mask server. Exit 1 on problems."""
    checks = run_checks()
    for c in checks:
        click.echo(f"{c.status:<4}  {c.name}: {c.detail}")
        if c.hint and c.status != OK:
            click.echo(f"      hint: {c.hint}")
    problems = [c for c in checks if c.status == FAIL]
    if problems:
        click.echo(f"\n{len(problems)} problem(s):", err=True)
        for c in problems:
            click.echo(f"  - {c.name}: {c.detail}", err=True)
        ctx.exit(1)
    click.echo("\ntcg looks healthy" + (" (with warnings)" if any(c.status == WARN for c in checks) else ""))
