"""Wrapper commands peeled off to find the command that really runs.

``sudo``, ``env``, ``timeout``, ``xargs``, ``uv run`` … each get a function that
returns the wrapped argv (plus any assignments and redirects the wrapper implies),
or None when the wrapper runs nothing. tcg.policy.walker applies them repeatedly;
the code a command carries inside it (git alias bodies, ``find -exec``) is found here too.
"""

from __future__ import annotations

from tcg.policy.words import DYN, Assignment, Redirect, Word, join_words

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_Peeled = tuple[list[Word], list[Assignment], list[Redirect], bool]


def _skip_options(
    args: list[Word], with_value: frozenset[str], stop_at_positional: bool = True
) -> int:
    """Index of the first non-option argument (``--`` consumed)."""
    i = 0
    while i < len(args):
        v = args[i].value
        if v == "--":
            return i + 1
        if not v.startswith("-") or v == "-":
            return i
        if "=" in v and v.startswith("--"):
            i += 1
            continue
        if v in with_value:
            i += 2
            continue
        if not v.startswith("--") and len(v) > 2:
            # a cluster: the first letter taking a value takes the rest (-uroot)
            # or, when it is the last letter, the next argument (-Eu root)
            step = 1
            for k, letter in enumerate(v[1:], start=1):
                if "-" + letter in with_value:
                    step = 2 if k == len(v) - 1 else 1
                    break
            i += step
            continue
        i += 1
    return i


def _simple(with_value: set[str]) -> Any:
    wv = frozenset(with_value)

    def peel(argv: list[Word]) -> _Peeled | None:
        args = argv[1:]
        i = _skip_options(args, wv)
        return (args[i:], [], [], False)

    return peel


def _peel_sudo(argv: list[Word]) -> _Peeled | None:
    import re
    args = argv[1:]
    i = _skip_options(args, frozenset({"-u", "-g", "-p", "-C", "-h", "-D", "-r", "-t", "-T", "-U",
                                       "--user", "--group", "--prompt", "--close-from", "--host",
                                       "--chdir", "--role", "--type", "--command-timeout",
                                       "--other-user"}))
    assigns: list[Assignment] = []
    while i < len(args) and args[i].is_literal and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", args[i].value):
        n, _, v = args[i].value.partition("=")
        assigns.append(Assignment(n, Word(v, source=args[i].source)))
        i += 1
    return (args[i:], assigns, [], False)


def _peel_env(argv: list[Word]) -> _Peeled | None:
    import re
    args = argv[1:]
    i = 0
    assigns: list[Assignment] = []
    while i < len(args):
        w = args[i]
        v = w.value
        if v in ("-u", "--unset", "-C", "--chdir"):
            i += 2
            continue
        if v in ("-S", "--split-string") and i + 1 < len(args):
            split = args[i + 1]
            if split.is_literal:
                rest = [Word(x, source=x) for x in split.value.split()]
                return (rest + args[i + 2 :], assigns, [], False)
            return ([Word(DYN, static=False)], assigns, [], False)
        if v == "--":
            i += 1
            break
        if v.startswith("-") and v != "-":
            i += 1
            continue
        if v == "-":
            i += 1
            continue
        if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", v):
            n, _, val = v.partition("=")
            assigns.append(Assignment(n, Word(val, static=w.static, source=w.source, vars=w.vars)))
            i += 1
            continue
        break
    while i < len(args) and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", args[i].value):
        n, _, val = args[i].value.partition("=")
        assigns.append(Assignment(n, Word(val, source=args[i].source)))
        i += 1
    if i >= len(args):
        return None  # `env` alone (or with only assignments/options): prints the environment
    return (args[i:], assigns, [], False)


def _peel_command(argv: list[Word]) -> _Peeled | None:
    args = argv[1:]
    i = 0
    while i < len(args) and args[i].value.startswith("-") and args[i].value != "--":
        if "v" in args[i].value or "V" in args[i].value:
            return None  # `command -v x` looks up, does not run
        i += 1
    if i < len(args) and args[i].value == "--":
        i += 1
    return (args[i:], [], [], False)


def _peel_exec(argv: list[Word]) -> _Peeled | None:
    args = argv[1:]
    i = _skip_options(args, frozenset({"-a"}))
    return (args[i:], [], [], False)


def _peel_timeout(argv: list[Word]) -> _Peeled | None:
    args = argv[1:]
    i = _skip_options(args, frozenset({"-s", "-k", "--signal", "--kill-after"}))
    return (args[i + 1 :], [], [], False)  # skip DURATION


def _peel_xargs(argv: list[Word]) -> _Peeled | None:
    args = argv[1:]
    i = 0
    replace: str | None = None
    redirs: list[Redirect] = []
    with_value = {"-n", "-L", "-s", "-P", "-d", "-E", "-a", "-I", "--max-args", "--max-lines",
                  "--max-chars", "--max-procs", "--delimiter", "--eof", "--arg-file",
                  "--replace", "--process-slot-var"}
    while i < len(args):
        v = args[i].value
        if v == "--":
            i += 1
            break
        if not v.startswith("-"):
            break
        opt, eq, attached = v.partition("=")
        if opt in ("-I", "--replace") or v.startswith("-I") or v.startswith("-i"):
            if opt == "-I" and not eq and i + 1 < len(args):
                replace = args[i + 1].value
                i += 2
                continue
            replace = attached or (v[2:] if v.startswith(("-I", "-i")) and len(v) > 2 else "{}")
            i += 1
            continue
        if opt in ("-a", "--arg-file"):
            target = Word(attached, source=attached) if eq else (args[i + 1] if i + 1 < len(args) else None)
            if target is not None:
                redirs.append(Redirect("<", target))
            i += 1 if eq else 2
            continue
        if opt in with_value and not eq:
            i += 2
            continue
        if len(v) > 2 and not v.startswith("--") and v[:2] in with_value:
            i += 1
            continue
        i += 1
    inner = args[i:] or [Word("echo", source="echo")]
    if replace:
        stdin = Word(DYN, static=False, source="<stdin>")
        return ([stdin if replace in w.value else w for w in inner], [], redirs, False)
    return (inner, [], redirs, True)


def _peel_watch(argv: list[Word]) -> _Peeled | None:
    args = argv[1:]
    i = _skip_options(args, frozenset({"-n", "-d", "--interval", "-q", "--equexit"}))
    rest = args[i:]
    if not rest:
        return None
    # watch joins its arguments and runs them with `sh -c`
    code = join_words(rest)
    return ([Word("sh"), Word("-c"), code], [], [], False)


def _peel_run_sub(sub: str, with_value: set[str]) -> Any:
    wv = frozenset(with_value)

    def peel(argv: list[Word]) -> _Peeled | None:
        args = argv[1:]
        i = _skip_options(args, wv)
        if i >= len(args) or args[i].value != sub:
            return None
        j = i + 1 + _skip_options(args[i + 1 :], wv)
        return (args[j:], [], [], False)

    return peel


def _peel_direnv(argv: list[Word]) -> _Peeled | None:
    args = argv[1:]
    if len(args) >= 3 and args[0].value == "exec":
        return (args[2:], [], [], False)
    return None


_WRAPPERS: dict[str, Any] = {
    "sudo": _peel_sudo,
    "doas": _simple({"-u", "-C"}),
    "pkexec": _simple({"--user"}),
    "env": _peel_env,
    "command": _peel_command,
    "builtin": _simple(set()),
    "exec": _peel_exec,
    "nice": _simple({"-n", "--adjustment"}),
    "ionice": _simple({"-c", "-n", "-p", "--class", "--classdata"}),
    "timeout": _peel_timeout,
    "nohup": _simple(set()),
    "setsid": _simple(set()),
    "stdbuf": _simple({"-i", "-o", "-e", "--input", "--output", "--error"}),
    "time": _simple({"-f", "-o", "--format", "--output"}),
    "xargs": _peel_xargs,
    "watch": _peel_watch,
    "unbuffer": _simple(set()),
    "chronic": _simple(set()),
    "uv": _peel_run_sub("run", {"--with", "--python", "-p", "--project", "--directory",
                                "--package", "--group", "--extra", "--env-file", "--index"}),
    "poetry": _peel_run_sub("run", {"-C", "--directory", "-P", "--project"}),
    "pipenv": _peel_run_sub("run", set()),
    "pdm": _peel_run_sub("run", {"-p", "--project"}),
    "hatch": _peel_run_sub("run", {"-e", "--env"}),
    "bundle": _peel_run_sub("exec", set()),
    "direnv": _peel_direnv,
}


def git_alias_bodies(args: list[Word]) -> list[Word]:
    """The alias bodies a git command line carries (``args`` without ``git``):
    ``git -c alias.x='!cat .env' x`` runs one now, ``git config alias.x '!cat .env'``
    stores one for a later ``git x``; either way the body is code to judge."""
    bodies: list[Word] = []
    i = 0
    while i < len(args):
        v = args[i].value
        if v == "-c" and i + 1 < len(args):
            key, eq, _ = args[i + 1].value.partition("=")
            if eq and key.lower().startswith("alias."):
                w = args[i + 1]
                bodies.append(Word(w.value.split("=", 1)[1], w.static, w.glob, w.pattern, w.vars, w.source))
            i += 2
            continue
        if v in ("-C", "--git-dir", "--work-tree", "--namespace", "--config-env"):
            i += 2
            continue
        if v.startswith("-"):
            i += 1
            continue
        if v == "config":
            rest = [w for w in args[i + 1:] if not w.value.startswith("-")]
            if rest and rest[0].value in ("set", "--add"):
                rest = rest[1:]
            if len(rest) >= 2 and rest[0].value.lower().startswith("alias."):
                bodies.append(rest[1])
        break
    return bodies


def find_exec_split(argv: list[Word]) -> tuple[list[Word], list[list[Word]]]:
    """``find … -exec CMD {} ;`` split into find's own words and each ``-exec``/
    ``-execdir``/``-ok``/``-okdir`` command (``{}`` still in place)."""
    args = argv[1:]
    keep: list[Word] = [argv[0]]
    inners: list[list[Word]] = []
    i = 0
    while i < len(args):
        w = args[i]
        if w.value in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            inner: list[Word] = []
            while j < len(args) and args[j].value not in (";", "+"):
                inner.append(args[j])
                j += 1
            if inner:
                inners.append(inner)
            i = j + 1
            continue
        keep.append(w)
        i += 1
    return keep, inners
