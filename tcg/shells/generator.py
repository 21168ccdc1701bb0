"""`tcg_shell init [SHELL]`: print the hook for a shell.

Everything the hook needs is decided here, once, so loading the hook starts no
Python: the absolute interpreter path, whether the station agent and the agent
gate (`tcg launch`) are installed, and the agent names from the policy.
``--uninstall SHELL [--rc FILE]`` removes exactly the marked block and the
`tcg_shell init` lines from an rc file (or prints how to, without --rc).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

from tcg.errors import TcgError, UsageError, run_with_error_handler
from tcg.shells.shells import BEGIN_MARK, END_MARK, SHELLS, SUPPORTED, Features, ShellHook

USAGE = (
    "usage: tcg_shell init [zsh|bash|powershell|pwsh|cmd]\n"
    "       tcg_shell init --uninstall SHELL [--rc FILE]\n"
)
DEFAULT_AGENTS = ("claude", "codex", "qwen", "qwen-code", "cursor-agent", "cursor")


class UnsupportedShellError(UsageError):
    """Exit 2 naming the supported shells."""


def _unsupported(what: str) -> UnsupportedShellError:
    return UnsupportedShellError(
        f"{what}; supported shells: {', '.join(SUPPORTED)}",
        hint="name one: `tcg_shell init zsh` (fish, csh, tcsh, nu and others are not supported)",
    )


def detect_shell() -> str:
    """The calling shell's name via shellingham (imported lazily: init only)."""
    try:
        import shellingham

        name, _path = shellingham.detect_shell()
    except Exception as exc:  # noqa: BLE001 - any detection failure is "undetectable"
        raise _unsupported("could not detect your shell") from exc
    name = os.path.basename(name).lower().removesuffix(".exe")
    if name not in SHELLS:
        raise _unsupported(f"detected shell {name!r} is not supported")
    return name


def interpreter() -> str:
    """Absolute path of the running interpreter.

    sys.executable is the binary actually running, so it is never a pyenv/asdf
    shim (the shim has exec'd the real one by now). A venv's bin/python is a
    symlink that must NOT be resolved, or the venv's site-packages are lost.
    """
    exe = sys.executable
    if not exe:
        raise TcgError("cannot tell which Python runs tcg", hint="run tcg_shell from its venv")
    return os.path.abspath(exe)


def _agents() -> tuple[str, ...]:
    try:
        from tcg.policy.load import load_policy

        known = load_policy().model.launch.known_agents
    except TcgError as exc:
        sys.stderr.write(f"tcg_shell: warning: policy not loaded ({exc.message}); default agents used\n")
        return DEFAULT_AGENTS
    return tuple(known) if known else DEFAULT_AGENTS


def current_features() -> Features:
    """What this installation can wire up right now."""
    return Features(
        python=interpreter(),
        session=importlib.util.find_spec("tcg.runner.session") is not None,
        launch=importlib.util.find_spec("tcg.launcher.launch") is not None,
        agents=_agents(),
    )


def render(shell: str, features: Features | None = None) -> str:
    """The hook text for ``shell`` (a key of SHELLS)."""
    cls = SHELLS.get(shell)
    if cls is None:
        raise _unsupported(f"unsupported shell {shell!r}")
    return cls().render(features or current_features())


def remove_block(text: str) -> tuple[str, int]:
    """``text`` without the marked hook block(s) and `tcg_shell init` lines; count removed."""
    out: list[str] = []
    removed = 0
    inside = False
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped == BEGIN_MARK:
            inside = True
            removed += 1
            continue
        if inside:
            removed += 1
            if stripped == END_MARK:
                inside = False
            continue
        if "tcg_shell init" in stripped and not stripped.startswith("#"):
            removed += 1
            continue
        out.append(line)
    if inside:
        raise TcgError(
            f"found `{BEGIN_MARK}` without its end marker; nothing changed",
            hint=f"remove the block by hand, up to `{END_MARK}`",
        )
    return "".join(out), removed


def _uninstall(args: list[str]) -> int:
    if not args or args[0] not in SHELLS:
        raise _unsupported(f"--uninstall needs a shell name, got {args[:1]!r}")
    hook: ShellHook = SHELLS[args[0]]()
    if len(args) == 1:
        sys.stdout.write(
            f"To remove the tcg {hook.name} hook: {hook.uninstall}.\n"
            f"With --rc FILE, tcg removes exactly the block between `{BEGIN_MARK}` and\n"
            f"`{END_MARK}` and every `tcg_shell init` line, keeping a FILE.tcg-bak copy.\n"
            "Then open a new shell.\n"
        )
        return 0
    if len(args) != 3 or args[1] != "--rc":
        raise UsageError("usage: tcg_shell init --uninstall SHELL [--rc FILE]")
    path = Path(args[2])
    text = path.read_text(encoding="utf-8", errors="surrogateescape")
    new, removed = remove_block(text)
    if removed:
        path.with_name(path.name + ".tcg-bak").write_text(text, encoding="utf-8", errors="surrogateescape")
        path.write_text(new, encoding="utf-8", errors="surrogateescape")
    sys.stdout.write(f"tcg_shell: removed {removed} line(s) from {path}\n")
    return 0


def _init(argv: list[str]) -> int:
    if argv and argv[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return 0
    if argv and argv[0] == "--uninstall":
        return _uninstall(argv[1:])
    if len(argv) > 1:
        raise UsageError(f"too many arguments: {' '.join(argv)}", hint=USAGE.strip())
    shell = argv[0].lower() if argv else detect_shell()
    text = render(shell)
    sys.stdout.write(text)
    return 0


def init_main(argv: list[str]) -> int:
    """`tcg_shell init [SHELL]`: 0 with the hook on stdout; 2 for an unsupported shell."""
    return run_with_error_handler(lambda: _init(argv), prog="tcg_shell")
