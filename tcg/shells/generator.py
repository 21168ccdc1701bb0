"""`tcg_shell init [SHELL]`: print the hook for a shell.

Everything the hook needs is decided here, once, so loading the hook starts no
Python: the absolute interpreter path, whether the station agent and the agent
gate (`tcg launch`) are installed, and the agent names from the policy.
``--uninstall SHELL [--rc FILE]`` removes exactly the marked blocks and the
`tcg_shell init` lines from an rc file (or prints how to, without --rc).
``--early`` prints the early start block instead (bash, zsh), which belongs
first in the rc file; ``--early --rc FILE`` puts it there. ``--profile`` prints
the login profile's block that starts the masking fork server (tcg.shells.profile).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

from tcg.errors import TcgError, UsageError, run_with_error_handler
from tcg.shells.profile import PROFILE_BEGIN_MARK, PROFILE_END_MARK, profile_block
from tcg.shells.shells import (
    BEGIN_MARK,
    EARLY_BEGIN_MARK,
    EARLY_END_MARK,
    END_MARK,
    INIT_LINE,
    SHELLS,
    SUPPORTED,
    Features,
    ShellHook,
    hook_ids,
    installed_parts,
    older_hook,
)

USAGE = (
    "usage: tcg_shell init [zsh|bash|powershell|pwsh|cmd]\n"
    "       tcg_shell init [zsh|bash] --early [--rc FILE]   (first in the rc file: docs/shells.md)\n"
    "       tcg_shell init --profile   (for ~/.profile or ~/.zprofile: docs/shells.md)\n"
    "       tcg_shell init --uninstall SHELL [--rc FILE]\n"
)
MARKS = ((BEGIN_MARK, END_MARK), (EARLY_BEGIN_MARK, EARLY_END_MARK),
         (PROFILE_BEGIN_MARK, PROFILE_END_MARK))
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
        if init_lines and INIT_LINE in stripped and not stripped.startswith("#"):
            removed += 1
            continue
        out.append(line)
    if end is not None:
        raise TcgError(
            f"found a tcg block without its end marker `{end}`; nothing changed",
            hint=f"remove the block by hand, up to `{end}`",
        )
    return "".join(out), removed


def _block_spans(lines: list[str], begin: str, end: str) -> tuple[list[tuple[int, int]], bool]:
    """The (first, last) line index of each block between ``begin`` and ``end``
    in ``lines``, and whether a last one has no end marker (torn)."""
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(lines):
        if lines[i].strip() != begin:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and lines[j].strip() != end:
            j += 1
        if j == len(lines):
            return spans, True
        spans.append((i, j))
        i = j + 1
    return spans, False


def replace_block(text: str, begin: str, end: str, block: str) -> tuple[str, bool]:
    """``text`` with its first block between ``begin`` and ``end`` replaced by
    ``block`` where it is (later ones removed); ``found`` False and ``text``
    unchanged when there is none."""
    lines = text.splitlines(keepends=True)
    spans, torn = _block_spans(lines, begin, end)
    if torn:
        raise TcgError(f"found `{begin}` without its end marker `{end}`; nothing changed",
                       hint=f"remove the block by hand, up to `{end}`")
    if not spans:
        return text, False
    inside = {k for first, last in spans for k in range(first, last + 1)}
    out = [block if k == spans[0][0] else line for k, line in enumerate(lines)
           if k == spans[0][0] or k not in inside]
    return "".join(out), True


def read_rc(path: Path) -> str:
    """An rc file's text as it is (CR and CRLF kept: a backup must be a copy); ""
    when it does not exist."""
    try:
        with open(path, encoding="utf-8", errors="surrogateescape", newline="") as fh:
            return fh.read()
    except FileNotFoundError:
        return ""
    except OSError as exc:  # a directory, a symlink loop, no permission
        raise TcgError(f"cannot read {path}: {exc.strerror}; nothing changed",
                       hint="name the rc file itself (e.g. ~/.bashrc)") from exc


def rewrite_rc(path: Path, new: str, old: str | None) -> None:
    """Write ``new`` over the rc file ``path`` (through a symlink to its target):
    ``old`` kept as ``path``.tcg-bak with the file's own mode (rc files hold
    tokens), then the new text written beside the target and renamed over it, so a
    full disk leaves the file as it was. Refused, with nothing changed, for a file
    of another user (the renamed copy would be ours; a new file in another user's
    directory too) or one that is read-only (its owner's write bit: root passes
    every access check). Hard links to the file keep the old text."""
    target = Path(os.path.realpath(path))
    mine: int | None = os.geteuid() if hasattr(os, "geteuid") else None  # None: Windows
    try:
        st = target.stat()
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
        owner: int | None
        try:
            owner = target.parent.stat().st_uid
        except OSError:
            owner = mine  # no directory: the write below says so
        if mine is not None and owner != mine:
            raise TcgError(f"{target.parent} belongs to another user; nothing changed",
                           hint="run this as that user") from None
    except OSError as exc:
        raise TcgError(f"cannot read {path}: {exc.strerror}; nothing changed") from exc
    else:
        if mine is not None and st.st_uid != mine:
            raise TcgError(f"{path} belongs to another user; nothing changed",
                           hint="run this as that user")
        if not st.st_mode & 0o200 or not os.access(target, os.W_OK):
            raise TcgError(f"{path} is read-only; nothing changed",
                           hint="make it writable first, if you mean to change it")
        mode = st.st_mode & 0o7777
    try:
        if old:
            _write_new(path.with_name(path.name + ".tcg-bak"), old, mode)
        _write_new(target, new, mode)
    except OSError as exc:
        raise TcgError(f"cannot write {path}: {exc.strerror}; nothing changed there",
                       hint="check that its directory exists and is writable") from exc


def _write_new(path: Path, text: str, mode: int) -> None:
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tcg-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fchmod(fh.fileno(), mode)
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def install_early(shell: str, path: Path) -> int:
    """Put the early start block in ``path``: where one is already (settings the
    user put above it stay above it), else first; refresh a marked hook block
    generated by another tcg version (a new block with an old hook would miss the
    settings check); say when the hook is missing."""
    block = render(shell, early=True)
    text = read_rc(path)
    new, found = replace_block(text, EARLY_BEGIN_MARK, EARLY_END_MARK, block)
    if not found:
        new = block + text
    if not new.endswith("\n"):  # so that `>> FILE` (the hook, below) starts a line of its own
        new += "\n"
    new, refreshed = _refresh_hook(shell, new)
    if new != text:
        rewrite_rc(path, new, text)
    where = "where it was" if found else "first"
    sys.stdout.write(f"tcg_shell: the early start block is in {path} ({where})\n")
    if refreshed:
        sys.stdout.write(f"tcg_shell: the tcg hook block in {path} was from an older tcg "
                         f"version: brought up to date (the old text is in {path.name}.tcg-bak)\n")
    hook, _early = installed_parts(new)
    if not hook:
        sys.stdout.write(f"tcg_shell: {path} has no tcg hook yet; add it last: "
                         f"tcg_shell init {shell} >> {path}\n")
    return 0


def _refresh_hook(shell: str, text: str) -> tuple[str, bool]:
    """``text`` with its marked hook block replaced by this version's when it holds
    exactly one, whose own header names this shell's hook of an older version
    (the hook id). Anything else stays as it is: a newer block, another shell's,
    one whose header was edited away, two blocks or a torn one (the old text is in
    .tcg-bak)."""
    lines = text.splitlines(keepends=True)
    spans, torn = _block_spans(lines, BEGIN_MARK, END_MARK)
    if torn or len(spans) != 1:
        return text, False
    first, last = spans[0]
    ids = hook_ids("".join(lines[first:last + 1]))
    if len(ids) != 1 or ids[0][0] != shell or not older_hook(ids[0][1], SHELLS[shell]().hook_id):
        return text, False
    new = "".join(lines[:first]) + render(shell) + "".join(lines[last + 1:])
    return new, new != text


def _uninstall(args: list[str]) -> int:
    if not args or args[0] not in SHELLS:
        raise _unsupported(f"--uninstall needs a shell name, got {args[:1]!r}")
    hook: ShellHook = SHELLS[args[0]]()
    if len(args) == 1:
        sys.stdout.write(
            f"To remove the tcg {hook.name} hook: {hook.uninstall}.\n"
            f"With --rc FILE, tcg removes exactly the blocks between `{BEGIN_MARK}` and\n"
            f"`{END_MARK}` (and the early start and mask server blocks'), and every `tcg_shell init` line,\n"
            "keeping a FILE.tcg-bak copy.\n"
            "Then open a new shell.\n"
        )
        return 0
    if len(args) != 3 or args[1] != "--rc":
        raise UsageError("usage: tcg_shell init --uninstall SHELL [--rc FILE]")
    path = Path(args[2])
    text = read_rc(path)
    new, removed = remove_block(text)
    if removed:
        rewrite_rc(path, new, text)
    sys.stdout.write(f"tcg_shell: removed {removed} line(s) from {path}\n")
    return 0


def _init(argv: list[str]) -> int:
    if argv and argv[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return 0
    if argv and argv[0] == "--uninstall":
        return _uninstall(argv[1:])
    if "--profile" in argv:
        if argv != ["--profile"]:
            raise UsageError(f"unexpected arguments: {' '.join(argv)}", hint=USAGE.strip())
        return _profile()
    args = list(argv)
    early = "--early" in args
    rc: Path | None = None
    if early:
        args.remove("--early")
        if "--rc" in args:
            at = args.index("--rc")
            if at + 1 >= len(args):
                raise UsageError("--rc needs a file", hint=USAGE.strip())
            if args[at + 1].startswith("-"):
                raise UsageError(f"--rc needs a file, not {args[at + 1]!r}", hint=USAGE.strip())
            rc = Path(args.pop(at + 1))
            args.pop(at)
    if len(args) > 1 or any(a.startswith("-") for a in args):
        raise UsageError(f"unexpected arguments: {' '.join(argv)}", hint=USAGE.strip())
    shell = args[0].lower() if args else detect_shell()
    if rc is not None:
        return install_early(shell, rc)
    sys.stdout.write(render(shell, early=early))
    return 0


def _profile() -> int:
    sys.stdout.write(profile_block(os.environ, interpreter()))
    return 0


def init_main(argv: list[str]) -> int:
    """`tcg_shell init [SHELL]`: 0 with the hook on stdout; 2 for an unsupported shell."""
    return run_with_error_handler(lambda: _init(argv), prog="tcg_shell")
