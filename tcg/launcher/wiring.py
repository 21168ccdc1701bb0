"""Per-agent wiring: the environment a launched agent gets, and the helper files it points at.

Every agent gets ``TCG_ACTOR=agent``, ``TCG_AGENT=<name>`` and ``TCG_SESSION``
(the station reads them: its decisions are then the agent's). Then each agent
is routed through the choke point it offers (docs/agents.md):

- Claude Code: ``CLAUDE_CODE_SHELL_PREFIX`` = an executable that hands the
  whole line to the station (tcg.launcher.claude_prefix).
- codex, qwen / qwen-code, cursor-agent, cursor: they run tool commands as
  ``bash -c``/``bash -lc`` (or ``zsh -c``/``-lc``). ``BASH_ENV`` names a file bash
  reads before running the ``-c`` string; it re-runs that string
  (``$BASH_EXECUTION_STRING``) through the station. For zsh, ``ZDOTDIR`` points
  at a directory whose ``.zshenv`` does the same with ``$ZSH_EXECUTION_STRING``
  and then restores the user's own ZDOTDIR, so the user's zsh files still load.

Nothing in the user's own agent configuration is modified: all of it is
per-launch environment. The helper files are real files in this package
(``tcg/launcher/shims/``: valid shell or Python at rest, shellcheck-clean),
rendered like the shell hooks: the TEMPLATE block's placeholder is replaced by
the absolute interpreter path, quoted for the file's language. They are
written into tcg's state directory (0700) — package files may lose their exec
bit on install — and an existing copy is verified on every launch (owner,
mode, exact content) and rewritten atomically when it differs.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from tcg.agents.routes import BASH_ENV_NAME, PREFIX_NAME, ZDOTDIR_NAME
from tcg.errors import ExitCode, TcgError
from tcg.paths import Paths, ensure_private_dir, get_paths
from tcg.shells.quoting import posix_quote

PY_PLACEHOLDER = "@TCG_PY@"

CLAUDE_AGENTS = frozenset({"claude"})
# Agents that run their tool commands through `bash -c` / `zsh -c` child shells.
SHELL_ENV_AGENTS = frozenset({"codex", "qwen", "qwen-code", "cursor-agent", "cursor"})
QWEN_AGENTS = frozenset({"qwen", "qwen-code"})
CODEX_AGENTS = frozenset({"codex"})
# Agents that report a command as "still running" after a short wait (Codex: 10 s by
# default): the launch builds the station's caches first, so a first command that would
# compile the detector is not cut short.
WARMED_AGENTS = CODEX_AGENTS
# A launched agent's own commands are fresh lines: a mediated shell's markers must not leak in.
DROPPED_ENV = ("TCG_MEDIATED", "TCG_MEDIATED_FDS")


class WiringError(TcgError):
    """A helper file the agent's wiring needs cannot be created or trusted."""

    exit_code = ExitCode.BLOCKED


def shim_template(name: str) -> str:
    """The text of ``tcg/launcher/shims/NAME``.

    Read next to this module (every install we support keeps package data
    there: wheel and editable); importlib.resources only for a zipped
    package — importing it costs ~20 ms, more than the rest of a launch.
    """
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shims", name)
    if os.path.isfile(here):
        with open(here, encoding="utf-8") as fh:
            return fh.read()
    from importlib import resources  # pragma: no cover - zipped installs only

    return (resources.files("tcg.launcher") / "shims" / name).read_text(encoding="utf-8")


def shebang_ok(python: str) -> bool:
    """Can ``python`` be a shebang line? Linux passes at most one argument, stops at
    whitespace, and the historical limit is 127 bytes."""
    return not any(c.isspace() for c in python) and len(python) < 100 and python.isprintable()


def render_shell(name: str, python: str) -> str:
    """A shell shim with its TEMPLATE value replaced by the quoted interpreter path."""
    template = shim_template(name)
    quoted = posix_quote(PY_PLACEHOLDER)
    if quoted not in template:
        raise WiringError(f"the shim template {name} has no {PY_PLACEHOLDER} value",
                          hint="reinstall tcg (tcg doctor checks the install)")
    return template.replace(quoted, posix_quote(python))


def claude_prefix_text(python: str) -> str:
    """The prefix executable: Python when the interpreter path fits a shebang, else sh."""
    if shebang_ok(python):
        return shim_template("claude-prefix.py").replace(PY_PLACEHOLDER, python, 1)
    return render_shell("claude-prefix.sh", python)


def bash_env_text(python: str) -> str:
    """Read by every non-interactive bash the agent starts (BASH_ENV)."""
    return render_shell("bash-env.bash", python)


def zshenv_text(python: str) -> str:
    """``$ZDOTDIR/.zshenv`` for an agent's zsh: the same choke point as BASH_ENV."""
    return render_shell("zshenv.zsh", python)


def helper_dir(paths: Paths | None = None) -> str:
    return os.path.join((paths or get_paths()).state_dir, "bin")


def _read(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def write_verified(path: str, text: str, mode: int) -> str:
    """Make ``path`` hold exactly ``text`` with ``mode``, owned by us; verify it."""
    data = text.encode("utf-8")
    try:
        st = os.lstat(path)
        trusted = (
            (st.st_mode & 0o170000) != 0o120000  # not a symlink
            and (os.name != "posix" or st.st_uid == os.getuid())
            and (st.st_mode & 0o7777) == mode
            and st.st_size == len(data)
        )
        if trusted and _read(path) == data:
            return path
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise WiringError(f"cannot read {path}: {exc.strerror}",
                          hint="check the tcg state directory (tcg doctor)") from exc
    parent, name = os.path.split(path)
    tmp = os.path.join(parent, f".{name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        try:
            os.write(fd, data)
            if os.name == "posix":
                os.fchmod(fd, mode)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise WiringError(
            f"cannot write the agent helper {path}: {exc.strerror}",
            hint="check permissions of the tcg state directory (tcg doctor)",
        ) from exc
    if _read(path) != data or (os.name == "posix" and (os.stat(path).st_mode & 0o7777) != mode):
        raise WiringError(f"the agent helper {path} did not verify", hint="check the tcg state directory (tcg doctor)")
    return path


def private_helper_dir(paths: Paths | None) -> str:
    """The helper directory (0700), created when missing."""
    try:
        return os.fspath(ensure_private_dir(helper_dir(paths)))
    except OSError as exc:
        raise WiringError(f"cannot create the agent helper directory: {exc.strerror}",
                          hint="check permissions of the tcg state directory (tcg doctor)") from exc


def ensure_executable(path: str, text: str) -> str:
    """A generated executable (0700) holding ``text``, created or repaired as needed."""
    write_verified(path, text, 0o700)
    if os.name == "posix" and not os.access(path, os.X_OK):
        raise WiringError(f"the agent helper {path} is not executable",
                          hint="is the tcg state directory on a noexec mount? set TCG_HOME elsewhere")
    return path


def ensure_claude_prefix(python: str, paths: Paths | None = None) -> str:
    """The CLAUDE_CODE_SHELL_PREFIX executable (0700), created or repaired as needed."""
    return ensure_executable(os.path.join(private_helper_dir(paths), PREFIX_NAME), claude_prefix_text(python))


def ensure_shell_env(python: str, paths: Paths | None = None) -> tuple[str, str]:
    """(BASH_ENV file, ZDOTDIR directory) for agents that spawn bash/zsh."""
    d = private_helper_dir(paths)
    bash_env = write_verified(os.path.join(d, BASH_ENV_NAME), bash_env_text(python), 0o600)
    zdot = os.path.join(d, ZDOTDIR_NAME)
    try:
        ensure_private_dir(zdot)
    except OSError as exc:
        raise WiringError(f"cannot create {zdot}: {exc.strerror}",
                          hint="check permissions of the tcg state directory (tcg doctor)") from exc
    write_verified(os.path.join(zdot, ".zshenv"), zshenv_text(python), 0o600)
    return bash_env, zdot


class Wiring:
    """What a launch hands the agent: its environment, its arguments (tcg may add some
    before the user's), and the names of the mechanisms wired (for the event)."""

    __slots__ = ("args", "env", "wired")

    def __init__(self, env: dict[str, str], args: list[str], wired: list[str]):
        self.env = env
        self.args = args
        self.wired = wired


class UnmediatedError(WiringError):
    """The agent would run with tcg's own wiring switched off (its hooks, say)."""


class OwnSandboxError(WiringError):
    """The user chose the agent's own sandbox for its commands: tcg could neither build
    its view nor record events inside it (tcg.launcher.codex), so every command would
    be refused. Not a policy choice: the launch is refused with what to drop."""


def _write_settings(paths: Paths | None, name: str, settings: dict[str, object]) -> str:
    """A generated settings file (0600) in the helper directory, named by its content."""
    import json

    from tcg.digest import sha256_hex

    text = json.dumps(settings, indent=2, sort_keys=True) + "\n"
    d = private_helper_dir(paths)
    return write_verified(os.path.join(d, f"{name}-{sha256_hex(text.encode())[:12]}.json"), text, 0o600)


def _claude(env: dict[str, str], args: list[str], python: str, paths: Paths | None, cwd: str) -> list[str]:
    """Claude Code: the shell prefix, and the hooks through a generated ``--settings`` file."""
    from tcg.agents import claude, settings

    why = settings.claude_hooks_switched_off(args, env)
    if why:
        raise UnmediatedError(f"{why}, so Read, Write, WebFetch and MCP calls would not be mediated",
                              hint="drop that option or variable, or set launch.on-unmediated in your policy")
    try:
        rest, theirs = settings.split_option(args, "--settings")
        base: dict[str, object] = {}
        for value in theirs:
            base.update(settings.load_settings_value(value, cwd))
    except settings.SettingsError as exc:
        raise WiringError(str(exc), hint="fix the --settings value (a JSON object or a file holding one)") from None
    path = _write_settings(paths, "claude-settings", settings.with_hooks(base, claude.settings_hooks(python)))
    return ["--settings", path, *rest]


def _qwen(env: dict[str, str], python: str, paths: Paths | None, args: list[str]) -> None:
    """Qwen Code: the hooks through a generated system settings file."""
    from tcg.agents import qwen, settings

    why = settings.qwen_hooks_switched_off(args, env)
    if why:
        raise UnmediatedError(f"{why}, so read_file, write_file, grep and web tools would not be mediated",
                              hint="drop that option, or set launch.on-unmediated in your policy")
    try:
        original, base = settings.qwen_system_base(env)
    except settings.SettingsError as exc:
        raise WiringError(str(exc), hint="fix or remove that file") from None
    env["QWEN_CODE_SYSTEM_SETTINGS_PATH"] = _write_settings(paths, "qwen-system-settings",
                                                            settings.with_hooks(base, qwen.settings_hooks(python)))
    if original:
        env["TCG_USER_QWEN_SYSTEM_SETTINGS"] = original


def wire(
    agent: str,
    session: str,
    base: Mapping[str, str],
    args: list[str],
    python: str,
    paths: Paths | None = None,
    *,
    cwd: str | None = None,
    unmediated_ok: bool = False,
) -> Wiring:
    """The agent's environment and arguments, wired to tcg.

    UnmediatedError when the agent would run with tcg's hooks switched off
    (unless ``unmediated_ok``: the policy allows it; then nothing is added for
    those hooks and ``wired`` says so); WiringError when a helper file cannot
    be written or a value tcg must merge cannot be read.
    """
    env = {k: v for k, v in base.items() if k not in DROPPED_ENV}
    env["TCG_ACTOR"] = "agent"
    env["TCG_AGENT"] = agent
    env["TCG_SESSION"] = session
    wired = ["env"]
    out_args = list(args)
    here = cwd or os.getcwd()
    if agent in CLAUDE_AGENTS:
        env["CLAUDE_CODE_SHELL_PREFIX"] = ensure_claude_prefix(python, paths)
        wired.append("claude-shell-prefix")
        try:
            out_args = _claude(env, args, python, paths, here)
            wired.append("claude-hooks")
        except UnmediatedError:
            if not unmediated_ok:
                raise
    elif agent in SHELL_ENV_AGENTS:
        bash_env, zdot = ensure_shell_env(python, paths)
        user_bash_env = base.get("BASH_ENV")
        if user_bash_env and user_bash_env != bash_env:
            env["TCG_USER_BASH_ENV"] = user_bash_env
        env["BASH_ENV"] = bash_env
        user_zdot = base.get("ZDOTDIR")
        if user_zdot and user_zdot != zdot:
            env["TCG_USER_ZDOTDIR"] = user_zdot
        env["ZDOTDIR"] = zdot
        wired += ["bash-env", "zdotdir"]
        if agent in QWEN_AGENTS:
            try:
                _qwen(env, python, paths, args)
                wired.append("qwen-hooks")
            except UnmediatedError:
                if not unmediated_ok:
                    raise
        if agent in CODEX_AGENTS:
            from tcg.launcher import codex

            try:
                out_args = codex.wire(args)
            except codex.OwnSandboxChosen as exc:
                raise OwnSandboxError(
                    f"`codex {exc}` runs Codex's commands in its own sandbox, where tcg can neither hide "
                    "secret stores nor record events, so every command would be refused",
                    hint="drop that option: tcg runs Codex with sandbox_mode=\"danger-full-access\" and gives "
                         "each command its own OS view instead (docs/agents.md)") from None
            wired += codex.WIRED
    return Wiring(env, out_args, wired)


def warm_station_caches(policy: object, paths: Paths | None) -> None:
    """Create the install key and the compiled strict detector before the agent starts
    (the first command would otherwise spend seconds on them). Best effort: the station
    creates or checks both itself and fails closed."""
    from tcg.keyhash import load_or_create_key
    from tcg.mask import masker_for

    try:
        load_or_create_key(paths)
        m = masker_for(policy, "strict")  # type: ignore[arg-type]
        m.feed(b"warm")
        m.flush()
    except Exception:  # noqa: BLE001 - an optimisation; the station re-checks
        pass


def agent_env(
    agent: str,
    session: str,
    base: Mapping[str, str],
    python: str,
    paths: Paths | None = None,
) -> tuple[dict[str, str], list[str]]:
    """The agent's environment and the names of the mechanisms wired (no arguments)."""
    w = wire(agent, session, base, [], python, paths)
    return w.env, w.wired
