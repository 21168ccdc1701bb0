"""`tcg_shell init [SHELL]`: print the hook for a shell.

Everything the hook needs is decided here, once, so loading the hook starts no
Python: the absolute interpreter path, whether the station agent and the agent
gate (`tcg launch`) are installed, and the agent names from the policy.
``--uninstall SHELL [--rc FILE]`` removes exactly the marked blocks and the
`tcg_shell init` lines from an rc file (or prints how to, without --rc).
``--early`` prints the early start block instead (bash, zsh), which belongs
first in the rc file; ``--early --rc FILE`` puts it there.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

from tcg.errors import TcgError, UsageError, run_with_error_handler
from tcg.shells.shells import (
    BEGIN_MARK,
    EARLY_BEGIN_MARK,
    EARLY_END_MARK,
    END_MARK,
    SHELLS,
    SUPPORTED,
    Features,
    ShellHook,
)

USAGE = (
    "usage: tcg_shell init [zsh|bash|powershell|pwsh|cmd]\n"
    "       tcg_shell init [zsh|bash] --early [--rc FILE]   (first in the rc file: docs/shells.md)\n"
    "       tcg_shell init --uninstall SHELL [--rc FILE]\n"
)
MARKS = ((BEGIN_MARK, END_MARK), (EARLY_BEGIN_MARK, EARLY_END_MARK))
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


def render(shell: str, features: Features | None = None, early: bool = False) -> str:
    """The hook text for ``shell`` (a key of SHELLS); ``early``: its early start block."""
    cls = SHELLS.get(shell)
    if cls is None:
        raise _unsupported(f"unsupported shell {shell!r}")
    hook = cls()
    if early and not hook.early_template:
        raise UsageError(f"{shell} has no early start block",
                         hint="`--early` is for bash and zsh, whose rc file the session runs again")
    return hook.render(features or current_features(), early=early)


def remove_block(text: str, marks: tuple[tuple[str, str], ...] = MARKS,
                 init_lines: bool = True) -> tuple[str, int]:
    """``text`` without the blocks between ``marks`` and (``init_lines``) the
    `tcg_shell init` lines; count removed."""
    out: list[str] = []
    removed = 0
    end: str | None = None
    begins = dict(marks)
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if end is None and stripped in begins:
            end = begins[stripped]
            removed += 1
            continue
        if end is not None:
            removed += 1
            if stripped == end:
                end = None
            continue
        if init_lines and "tcg_shell init" in stripped and not stripped.startswith("#"):
            removed += 1
            continue
        out.append(line)
    if end is not None:
        raise TcgError(
            f"found a tcg block without its end marker `{end}`; nothing changed",
            hint=f"remove the block by hand, up to `{end}`",
        )
    return "".join(out), removed


def install_early(shell: str, path: Path) -> int:
    """Put the early start block first in ``path`` (replacing one already there,
    anywhere in the file), keeping ``path``.tcg-bak; say where the hook itself is."""
    block = render(shell, early=True)
    try:
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
    except FileNotFoundError:
        text = ""
    rest, _removed = remove_block(text, ((EARLY_BEGIN_MARK, EARLY_END_MARK),), init_lines=False)
    new = block + rest
    if new != text:
        if text:
            path.with_name(path.name + ".tcg-bak").write_text(text, encoding="utf-8",
                                                             errors="surrogateescape")
        path.write_text(new, encoding="utf-8", errors="surrogateescape")
    sys.stdout.write(f"tcg_shell: the early start block is first in {path}\n")
    if BEGIN_MARK not in rest and "tcg_shell init" not in rest:
        sys.stdout.write(f"tcg_shell: {path} has no tcg hook yet; add it last: "
                         f"tcg_shell init {shell} >> {path}\n")
    return 0


def _uninstall(args: list[str]) -> int:
    if not args or args[0] not in SHELLS:
        raise _unsupported(f"--uninstall needs a shell name, got {args[:1]!r}")
    hook: ShellHook = SHELLS[args[0]]()
    if len(args) == 1:
        sys.stdout.write(
            f"To remove the tcg {hook.name} hook: {hook.uninstall}.\n"
            f"With --rc FILE, tcg removes exactly the blocks between `{BEGIN_MARK}` and\n"
            f"`{END_MARK}` (and the early start block's), and every `tcg_shell init` line,\n"
            "keeping a FILE.tcg-bak copy.\n"
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
    args = list(argv)
    early = "--early" in args
    rc: Path | None = None
    if early:
        args.remove("--early")
        if "--rc" in args:
            at = args.index("--rc")
            if at + 1 >= len(args):
                raise UsageError("--rc needs a file", hint=USAGE.strip())
            rc = Path(args.pop(at + 1))
            args.pop(at)
    if len(args) > 1 or any(a.startswith("-") for a in args):
        raise UsageError(f"unexpected arguments: {' '.join(argv)}", hint=USAGE.strip())
    shell = args[0].lower() if args else detect_shell()
    if rc is not None:
        return install_early(shell, rc)
    sys.stdout.write(render(shell, early=early))
    return 0


def init_main(argv: list[str]) -> int:
    """`tcg_shell init [SHELL]`: 0 with the hook on stdout; 2 for an unsupported shell."""
    return run_with_error_handler(lambda: _init(argv), prog="tcg_shell")
