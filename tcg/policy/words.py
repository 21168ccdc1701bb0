"""The parsed shell line's model and the word evaluation the walker uses.

:class:`Word`, :class:`Redirect`, :class:`Assignment`, :class:`SimpleCommand` and
:class:`ParsedLine` are what tcg.policy.cmdline returns; the helpers below evaluate a
word's parts as far as is safe without running anything (quote removal, escapes,
``$'…'``, brace expansion, ``~``), marking everything else with :data:`DYN`.
"""

from __future__ import annotations

import posixpath

from tcg.record import Record

# Records are tcg.record.Record tuples, not dataclasses, and typing is for checkers only:
# dataclasses and typing together cost import time on every mediated command.
TYPE_CHECKING = False
if TYPE_CHECKING:
    pass

DYN = "\x00"
"""Stands for an unknown (run-time) part of a word's value."""

MAX_DEPTH = 8
"""How deep ``eval``/``bash -c`` strings are parsed before the line is unparsable."""

MAX_FOR_VALUES = 16
"""A ``for`` loop with more static values than this binds its variable as dynamic."""


SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"})

_GLOB_CHARS = frozenset("*?[")


class Word(Record, fields="value static glob pattern vars source recursive",
           defaults=(True, False, None, (), "", False)):
    """One shell word after expansion as far as it can be known before running.

    ``value`` is the literal after quote removal and escapes, with ``~``,
    ``$HOME`` and other resolvable parts substituted; each unknown part is
    :data:`DYN`. ``static`` is True when nothing is unknown. ``glob`` is True
    when unquoted ``* ? [`` make the word a pattern (``pattern`` is then an
    fnmatch pattern in which quoted metacharacters are escaped). ``vars`` names
    every parameter the word expands, resolved or not. ``recursive`` marks
    pattern words standing for files found anywhere under a directory (``find``).
    """

    __slots__ = ()
    value: str
    static: bool
    glob: bool
    pattern: str | None
    vars: tuple[str, ...]
    source: str
    recursive: bool

    @property
    def is_literal(self) -> bool:
        return self.static and not self.glob


class Redirect(Record, fields="op target fd body", defaults=(None, None, None)):
    """A redirection. ``op`` is the operator as written (``<``, ``>``, ``>>``,
    ``>|``, ``&>``, ``&>>``, ``<&``, ``>&``, ``<<``, ``<<-``, ``<<<``); ``fd`` the
    explicit descriptor; ``target`` the file word (None for here-docs/strings);
    ``body`` the here-doc or here-string text."""

    __slots__ = ()
    op: str
    target: Word | None
    fd: int | None
    body: Word | None

    @property
    def is_fd_dup(self) -> bool:
        """``2>&1``, ``<&0``, ``>&-``: no file involved."""
        return (
            self.op in ("<&", ">&")
            and self.target is not None
            and (self.target.value.isdigit() or self.target.value == "-")
        )

    @property
    def reads(self) -> bool:
        return self.op in ("<", "<>") or (self.op == "<&" and not self.is_fd_dup)

    @property
    def writes(self) -> bool:
        return self.op in (">", ">>", ">|", "&>", "&>>", "<>") or (self.op == ">&" and not self.is_fd_dup)


class Assignment(Record, fields="name value", defaults=(None,)):
    """``NAME=value`` before a command (``value`` None for ``NAME=``)."""

    __slots__ = ()
    name: str
    value: Word | None


class SimpleCommand(Record, fields="argv redirects assignments wrappers depth opaque text",
                    defaults=((), (), (), 0, None, "")):
    """A command that would run. Wrappers are peeled off: ``sudo -u x cat f``
    becomes ``argv=(cat, f)`` with ``wrappers=("sudo",)``. ``depth`` counts the
    ``eval``/``sh -c`` strings it was found in. ``opaque`` says why the command
    runs code that could not be seen (``eval "$X"``, ``bash -c "$X"``)."""

    __slots__ = ()
    argv: tuple[Word, ...]
    redirects: tuple[Redirect, ...]
    assignments: tuple[Assignment, ...]
    wrappers: tuple[str, ...]
    depth: int
    opaque: str | None
    text: str

    @property
    def name(self) -> str | None:
        """Basename of the program (``/bin/cat`` → ``cat``), None when dynamic."""
        if not self.argv or not self.argv[0].is_literal:
            return None
        return posixpath.basename(self.argv[0].value) or self.argv[0].value

    @property
    def args(self) -> tuple[Word, ...]:
        return self.argv[1:]


class ParsedLine(Record, fields="commands redirects unparsable problems", defaults=((), False, ())):
    """Every command a line would run, every redirection, and whether the parse
    was complete. ``unparsable`` lines may still carry what could be extracted."""

    __slots__ = ()
    commands: tuple[SimpleCommand, ...]
    redirects: tuple[Redirect, ...]
    unparsable: bool
    problems: tuple[str, ...]

# Parts of a word under construction: (text, kind) with kind "lit" (unquoted
# literal: globs, braces and ~ are active), "q" (quoted literal), "x" (the value of an
# unquoted expansion, still to be split on IFS) or "dyn".
Part = tuple[str, str]


def unescape_word(text: str) -> list[Part]:
    """Unquoted word text: ``\\x`` quotes x; a backslash-newline disappears."""
    parts: list[Part] = []
    buf: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            if buf:
                parts.append(("".join(buf), "lit"))
                buf = []
            if text[i + 1] != "\n":
                parts.append((text[i + 1], "q"))
            i += 2
            continue
        buf.append(ch)
        i += 1
    if buf:
        parts.append(("".join(buf), "lit"))
    return parts


def unescape_dq(text: str) -> str:
    """Inside double quotes only ``\\$ \\` \\" \\\\`` and backslash-newline are escapes."""
    import re
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)


_ANSI = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b",
         "f": "\f", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}


def ansi_c(body: str) -> str:
    import re
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\" or i + 1 >= len(body):
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in _ANSI:
            out.append(_ANSI[nxt])
            i += 2
        elif nxt == "x":
            m = re.match(r"[0-9a-fA-F]{1,2}", body[i + 2 :])
            out.append(chr(int(m.group(0), 16)) if m else "\\x")
            i += 2 + (len(m.group(0)) if m else 0)
        elif nxt in "uU":
            m = re.match(r"[0-9a-fA-F]{1,8}" if nxt == "U" else r"[0-9a-fA-F]{1,4}", body[i + 2 :])
            out.append(chr(min(int(m.group(0), 16), 0x10FFFF)) if m else "\\" + nxt)
            i += 2 + (len(m.group(0)) if m else 0)
        elif nxt in "01234567":
            m = re.match(r"[0-7]{1,3}", body[i + 1 :])
            assert m is not None  # noqa: S101 - nxt is an octal digit
            out.append(chr(int(m.group(0), 8)))
            i += 1 + len(m.group(0))
        else:
            out.append("\\" + nxt)
            i += 2
    return "".join(out)


def brace_expand(s: str) -> list[str]:
    """Comma brace expansion (``{a,b}.env``), bounded; ranges are left alone."""
    m = None
    depth = 0
    start = -1
    for i, ch in enumerate(s):
        if ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                inner = s[start + 1 : i]
                if "," in inner:
                    m = (start, i, inner)
                    break
    if m is None:
        return [s]
    start, end, inner = m
    items: list[str] = []
    depth = 0
    buf: list[str] = []
    for ch in inner:
        if ch == "," and depth == 0:
            items.append("".join(buf))
            buf = []
            continue
        depth += ch == "{"
        depth -= ch == "}"
        buf.append(ch)
    items.append("".join(buf))
    out: list[str] = []
    for item in items:
        out.extend(brace_expand(s[:start] + item + s[end + 1 :]))
        if len(out) > 64:
            break
    return out[:64]


_Q_OPEN, _Q_CLOSE = "\x01", "\x02"  # internal markers for quoted text during assembly


def assemble(parts: list[Part], names: list[str], source: str, home: str | None) -> list[Word]:
    if not parts:
        return [Word("", source=source)]
    parts = list(parts)
    # Tilde expansion: only an unquoted ~ or ~/… at the very start.
    first_text, first_kind = parts[0]
    if first_kind == "lit" and first_text.startswith("~"):
        head, sep, rest = first_text.partition("/")
        if head == "~":
            if home is not None:
                parts[0] = (home, "q")
                if sep:
                    parts.insert(1, ("/" + rest, "lit"))
            else:
                parts[0] = (DYN, "dyn")
                if sep:
                    parts.insert(1, ("/" + rest, "lit"))
        else:  # ~user, ~+, ~-: not resolved
            parts[0] = (DYN, "dyn")
            if sep:
                parts.insert(1, ("/" + rest, "lit"))
    static = all(k != "dyn" for _, k in parts)
    glob = any(k == "lit" and any(c in _GLOB_CHARS for c in t) for t, k in parts)
    braces = any(k == "lit" and "{" in t for t, k in parts) and any(
        k == "lit" and "}" in t for t, k in parts
    )
    value = "".join(t for t, _ in parts)
    pattern = None
    if glob:
        pattern = "".join(t if k != "q" else escape_glob(t) for t, k in parts)
    vars_ = tuple(dict.fromkeys(names))
    if not braces:
        return [Word(value, static, glob, pattern, vars_, source)]
    # Brace expansion over the unquoted text (quoted text protected by markers).
    marked = "".join(t if k == "lit" else _Q_OPEN + t + _Q_CLOSE for t, k in parts)
    out: list[Word] = []
    for variant in brace_expand(marked):
        v = variant.replace(_Q_OPEN, "").replace(_Q_CLOSE, "")
        pat = None
        if glob:
            import re

            pat = re.sub(
                _Q_OPEN + "(.*?)" + _Q_CLOSE, lambda m: escape_glob(m.group(1)), variant, flags=re.S
            )
        out.append(Word(v, static, glob, pat, vars_, source))
    return out


def escape_glob(text: str) -> str:
    return "".join(f"[{c}]" if c in _GLOB_CHARS else c for c in text)


def join_words(ws: list[Word]) -> Word:
    if len(ws) == 1:
        return ws[0]
    return Word(
        " ".join(w.value for w in ws),
        static=all(w.static for w in ws),
        glob=any(w.glob for w in ws),
        vars=tuple(dict.fromkeys(v for w in ws for v in w.vars)),
        source=" ".join(w.source for w in ws),
    )


def name_of(argv: list[Word]) -> str | None:
    if not argv or not argv[0].is_literal:
        return None
    return posixpath.basename(argv[0].value) or argv[0].value


def stdin_word(upstream: SimpleCommand | None) -> Word:
    """The arguments ``xargs`` reads from its stdin. Known when the upstream stage
    is ``echo``/``printf`` with literal words; otherwise unknown."""
    if upstream is not None and upstream.name in ("echo", "printf") and upstream.args:
        words = [w for w in upstream.args if not w.value.startswith("-")]
        if words and all(w.is_literal for w in words):
            return join_words(words) if len(words) > 1 else words[0]
    if upstream is not None and upstream.name == "find":
        found = find_results(list(upstream.argv))
        if len(found) == 1:
            return found[0]
    return Word(DYN, static=False, source="<stdin>")


def find_results(argv: list[Word]) -> list[Word]:
    """What ``find ROOT… -name PAT`` yields, as recursive pattern words (one per root);
    a single unknown word when there is no single literal ``-name``/``-iname``."""
    args = argv[1:]
    roots: list[Word] = []
    for w in args:
        if w.value.startswith(("-", "(", "!")) and w.is_literal:
            break
        roots.append(w)
    names = [args[i + 1] for i, w in enumerate(args[:-1]) if w.value in ("-name", "-iname")]
    if len(names) != 1 or not names[0].static:
        return [Word(DYN, static=False, source="{}")]
    name = names[0]
    out: list[Word] = []
    for root in roots or [Word(".")]:
        base = root.value.rstrip("/") or "/"
        pat = name.pattern if name.glob and name.pattern else name.value
        out.append(
            Word(f"{base}/{name.value}", static=root.static, glob=True, pattern=f"{base}/{pat}",
                 source="{}", recursive=True)
        )
    return out


def static_output(cmd: SimpleCommand) -> str | None:
    """What ``echo 'literal' | bash`` feeds the shell, when it is literal."""
    if cmd.name in ("echo", "printf") and cmd.args and all(w.is_literal for w in cmd.args):
        words = [w.value for w in cmd.args if not (cmd.name == "echo" and w.value in ("-n", "-e", "-E"))]
        return " ".join(words)
    return None


def shell_code(args: list[Word], su: bool = False) -> Word | None:
    """The ``-c`` string of ``bash [opts] -c CODE [argv0 args…]`` (or ``su -c``)."""
    i = 0
    while i < len(args):
        w = args[i]
        v = w.value
        if not w.is_literal:
            return None
        if su and (v.startswith("--command=") or v.startswith("--session-command=")):
            return Word(v.split("=", 1)[1], static=w.static, source=w.source)
        if su and v in ("--command", "--session-command") and i + 1 < len(args):
            return args[i + 1]
        if v == "--":
            return None
        if v.startswith(("-", "+")) and not v.startswith("--") and len(v) > 1:
            # -o/-O take an argument, also inside a cluster: `bash -euo pipefail -c …`
            skip = v.count("o") + v.count("O")
            if "c" in v[1:] and v[0] == "-":
                j = i + 1 + skip
                return args[j] if j < len(args) else Word(DYN, static=False)
            i += 1 + skip
            continue
        if v.startswith(("-", "+")):
            i += 1
            continue
        if su:
            i += 1  # the user name
            continue
        return None
    return None
