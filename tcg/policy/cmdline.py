"""Parse one shell command line into every simple command that would run.

The policy must judge what a line *does*, not what its text looks like, so this
module walks a real bash syntax tree (tree-sitter-bash, see docs/parser.md) and
flattens it: pipelines, lists, subshells, groups, if/while/for/case/function
bodies, command and process substitutions, redirections, env-assignment
prefixes, wrappers (``sudo``, ``env``, ``timeout``, ``xargs``…), ``eval`` strings
and ``bash -c``/``sh -c`` strings (recursively, depth-limited).

Words are evaluated as far as is safe without running anything: quote removal,
backslash and ``$'…'`` escapes, ``~``/``$HOME`` and a few non-secret path
variables, variables assigned earlier in the same line, and ``for`` loop values.
Everything else (``$VAR``, ``$(…)``, ``$((…))``) is a dynamic part, marked with
:data:`DYN` in :attr:`Word.value` and making the word non-static.

Pure: no filesystem access, no environment lookups beyond the mapping passed in.
"""

from __future__ import annotations

import posixpath

from tcg.record import Record

# Records are tcg.record.Record tuples, not dataclasses, and typing is for checkers only:
# dataclasses and typing together cost ~10 ms of import on every mediated command.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

DYN = "\x00"
"""Stands for an unknown (run-time) part of a word's value."""

MAX_DEPTH = 8
"""How deep ``eval``/``bash -c`` strings are parsed before the line is unparsable."""

MAX_FOR_VALUES = 16
"""A ``for`` loop with more static values than this binds its variable as dynamic."""

# Variables whose values are paths, not secrets: resolved from ``env`` when given.
RESOLVABLE_VARS = frozenset(
    {
        "HOME", "PWD", "TMPDIR", "USER", "LOGNAME", "XDG_CONFIG_HOME", "XDG_STATE_HOME",
        "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR", "TCG_HOME", "TCG_POLICY",
    }
)

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


# ------------------------------------------------------------------ plain lines

# A line of plain words (letters, digits and the marks below, separated by blanks)
# has nothing for bash to interpret: no quote, escape, expansion, glob, operator,
# redirection or comment. Unless its first word is a reserved word, a declaration
# builtin or an assignment, it is one simple command whose words are the blank-
# separated fields, and the tree-sitter walk yields exactly what str.split gives
# (tests/policy/test_plain_lines.py compares both with hypothesis). Such lines
# (`ls -la`, `git status`, `make test`) skip loading the parser, whose extension
# imports re and enum: ~7 ms of every mediated command.
_BLANKS = " \t"
_PLAIN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./,:+-=" + _BLANKS)
# the command word: no assignment (=), and none of the marks tree-sitter-bash misreads
# there (`a+:` is an error to it, `- A=b` loses its `-`)
_PLAIN_FIRST = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./-")
_SPECIAL_FIRST = frozenset({
    # reserved words
    "if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until", "for",
    "in", "select", "function", "time", "coproc",
    # words tree-sitter-bash gives their own node types
    "declare", "typeset", "export", "readonly", "local", "unset", "unsetenv",
})


def _plain_words(text: str) -> list[str] | None:
    """The words of a plain line (see above), or None when the parser must decide."""
    if not _PLAIN.issuperset(text):
        return None
    words = text.split()
    if (not words or words[0] in _SPECIAL_FIRST or words[0][0] == "-"
            or not _PLAIN_FIRST.issuperset(words[0])):
        return None
    if any(w[0] == "=" for w in words):  # tree-sitter-bash reads `==` as an error
        return None
    return words


# ------------------------------------------------------------------ tree-sitter


def _parser() -> Any:
    # Loaded lazily and kept on the function: paid once per process.
    cached = getattr(_parser, "_p", None)
    if cached is None:
        ts = _binding("tree_sitter")
        cached = ts.Parser(ts.Language(_binding("tree_sitter_bash").language()))
        _parser._p = cached  # type: ignore[attr-defined]
    return cached


def _binding(package: str) -> Any:
    """``<package>._binding``, the C extension, loaded without the package's ``__init__``.

    tree_sitter's ``__init__`` imports typing (for one Protocol) and
    tree_sitter_bash's imports importlib.resources (tempfile, zipfile…) to read
    a highlighting query we never use: ~10 ms of every mediated command. The
    extensions need neither. Any surprise in the package layout falls back to
    the ordinary import.
    """
    import sys

    name = f"{package}._binding"
    if package not in sys.modules and name not in sys.modules:
        try:
            import importlib.machinery
            import os

            spec = importlib.machinery.PathFinder.find_spec(package)
            for directory in (spec.submodule_search_locations or []) if spec else []:
                for entry in sorted(os.listdir(directory)):
                    if entry.startswith("_binding.") and entry.endswith((".so", ".pyd")):
                        path = os.path.join(directory, entry)
                        loader = importlib.machinery.ExtensionFileLoader(name, path)
                        module = loader.create_module(importlib.machinery.ModuleSpec(name, loader, origin=path))
                        loader.exec_module(module)
                        sys.modules[name] = module
                        return module
        except (ImportError, OSError, AttributeError):
            pass
    import importlib

    return importlib.import_module(name)


def parse_line(
    line: str, home: str | None = None, env: Mapping[str, str] | None = None
) -> ParsedLine:
    """Parse ``line`` into the commands it would run.

    ``home`` resolves ``~`` and ``$HOME`` (default: ``env["HOME"]``); ``env``
    supplies values only for :data:`RESOLVABLE_VARS` (never secrets).
    """
    variables: dict[str, str | None] = {}
    if env:
        for name in RESOLVABLE_VARS:
            if name in env:
                variables[name] = env[name]
    if home is None:
        home = variables.get("HOME")
    if home is not None:
        variables["HOME"] = home
    walker = _Walker(home=home, variables=variables)
    walker.parse_script(line, depth=0)
    return ParsedLine(
        commands=tuple(walker.commands),
        redirects=tuple(walker.redirects),
        unparsable=walker.unparsable,
        problems=tuple(walker.problems),
    )


# Parts of a word under construction: (text, kind) with kind "lit" (unquoted
# literal: globs, braces and ~ are active), "q" (quoted literal), "x" (the value of an
# unquoted expansion, still to be split on IFS) or "dyn".
_Part = tuple[str, str]


class _Walker:
    def __init__(self, home: str | None, variables: dict[str, str | None]) -> None:
        self.home = home
        self.vars: dict[str, str | Word | None] = dict(variables)
        self.commands: list[SimpleCommand] = []
        self.redirects: list[Redirect] = []
        self.problems: list[str] = []
        self.unparsable = False
        self.depth = 0
        self.wrap_prefix: tuple[str, ...] = ()
        self.src = b""
        self.upstream: SimpleCommand | None = None  # the previous pipeline stage

    # ---------------------------------------------------------------- scripts

    def parse_script(self, text: str, depth: int, wrappers: tuple[str, ...] = ()) -> None:
        if depth > MAX_DEPTH:
            self.unparsable = True
            self.problems.append(f"nested eval/sh -c deeper than {MAX_DEPTH}")
            return
        saved = (self.src, self.depth, self.wrap_prefix)
        self.src = text.encode("utf-8", "surrogateescape")
        self.depth = depth
        self.wrap_prefix = wrappers
        try:
            words = _plain_words(text)
            if words is not None:  # no quoting, expansion or operator: no parser needed
                argv = [w for word in words for w in _assemble(_unescape_word(word), [], word, self.home)]
                self.emit(argv, [], [], text.strip(_BLANKS), upstream=self.upstream)
                return
            tree = _parser().parse(self.src)
            root = tree.root_node
            if root.has_error:
                self.unparsable = True
                self._note_errors(root)
            self.walk(root)
        finally:
            self.src, self.depth, self.wrap_prefix = saved

    def _note_errors(self, node: Any) -> None:
        stack = [node]
        while stack:
            n = stack.pop()
            if n.type == "ERROR" or n.is_missing:
                what = "missing " + n.type if n.is_missing else "syntax error"
                self.problems.append(f"{what} at offset {n.start_byte}")
                if len(self.problems) > 8:
                    return
                continue
            if n.has_error:
                stack.extend(reversed(n.children))

    def text(self, node: Any) -> str:
        return self.src[node.start_byte : node.end_byte].decode("utf-8", "surrogateescape")

    # ------------------------------------------------------------- statements

    def walk(self, node: Any) -> None:
        t = node.type
        if t == "command":
            self.command(node)
        elif t == "redirected_statement":
            self.redirected(node)
        elif t == "declaration_command":
            self.declaration(node)
        elif t == "unset_command":
            words = [self.words(c) for c in node.named_children]
            argv = [Word("unset", source="unset")] + [w for ws in words for w in ws]
            self.emit(argv, [], [], self.text(node))
        elif t == "variable_assignment":
            a = self.assignment(node)
            self.bind(a)
            self.emit([], [a], [], self.text(node))
        elif t == "variable_assignments":
            assigns = [self.assignment(c) for c in node.named_children if c.type == "variable_assignment"]
            for a in assigns:
                self.bind(a)
            self.emit([], assigns, [], self.text(node))
        elif t == "for_statement":
            self.for_loop(node)
        elif t == "pipeline":
            self.pipeline(node)
        elif t.endswith("_redirect"):
            self.redirect(node)  # `$(<.env)`: a redirection with no command reads the file
        elif t in ("comment", "heredoc_body", "heredoc_start", "heredoc_end"):
            return
        elif t in _WORD_TYPES:
            self.words(node)  # case subjects, test operands: collect substitutions
        else:
            for child in node.named_children:
                self.walk(child)

    def pipeline(self, node: Any) -> None:
        stages = [c for c in node.named_children]
        upstream: SimpleCommand | None = None
        simple = ("command", "redirected_statement")
        for stage in stages:
            before = len(self.commands)
            self.upstream = upstream if stage.type in simple else None
            self.walk(stage)
            self.upstream = None
            new = self.commands[before:]
            upstream = new[-1] if stage.type in simple and new else None

    def for_loop(self, node: Any) -> None:
        var_node = node.child_by_field_name("variable")
        body = node.child_by_field_name("body")
        values: list[Word] = []
        has_in = False
        for i, child in enumerate(node.children):
            if node.field_name_for_child(i) == "value":
                has_in = True
                values.extend(self.words(child))
        name = self.text(var_node) if var_node is not None else ""
        if body is None:
            return
        known = has_in and all(w.static for w in values) and 0 < len(values) <= MAX_FOR_VALUES
        saved = self.vars.get(name, _UNSET)
        if known:
            # The body is walked once per value; a glob value keeps its pattern, so
            # `for f in *; do cat "$f"; done` is checked like `cat *`.
            for w in values:
                self.vars[name] = w
                self.walk(body)
        else:
            self.vars[name] = None
            self.walk(body)
        if saved is _UNSET:
            self.vars.pop(name, None)
        else:
            self.vars[name] = saved  # type: ignore[assignment]

    def redirected(self, node: Any) -> None:
        body = node.child_by_field_name("body")
        redirs: list[Redirect] = []
        for i, child in enumerate(node.children):
            if node.field_name_for_child(i) == "redirect" or child.type.endswith("_redirect"):
                redirs.extend(self.redirect(child))
        if body is None:
            self.emit([], [], redirs, self.text(node))
            return
        if body.type == "command":
            self.command(body, extra_redirects=redirs)
        else:
            self.walk(body)

    def declaration(self, node: Any) -> None:
        kw = node.children[0]
        argv = [Word(self.text(kw), source=self.text(kw))]
        assigns: list[Assignment] = []
        for child in node.named_children:
            if child.type == "variable_assignment":
                a = self.assignment(child)
                assigns.append(a)
                self.bind(a)
            else:
                argv.extend(self.words(child))
        self.emit(argv, assigns, [], self.text(node))

    def assignment(self, node: Any) -> Assignment:
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        name = self.text(name_node) if name_node is not None else self.text(node).split("=", 1)[0]
        name = name.split("[", 1)[0]
        value: Word | None = None
        if value_node is not None:
            ws = self.words(value_node)
            value = ws[0] if len(ws) == 1 else _join_words(ws)
        else:
            value = Word("", source="")
        return Assignment(name, value)

    def bind(self, a: Assignment) -> None:
        """Remember ``X=literal`` for later words in this line (``F=.env; cat $F``)."""
        if a.value is not None and a.value.is_literal:
            self.vars[a.name] = a.value.value
        else:
            self.vars[a.name] = None

    def command(self, node: Any, extra_redirects: list[Redirect] | None = None) -> None:
        argv: list[Word] = []
        assigns: list[Assignment] = []
        redirs: list[Redirect] = []
        for child in node.named_children:
            t = child.type
            if t == "variable_assignment":
                assigns.append(self.assignment(child))
            elif t.endswith("_redirect"):
                redirs.extend(self.redirect(child))
            elif t == "command_name":
                for sub in child.named_children:
                    argv.extend(self.words(sub, split=True))
            else:
                argv.extend(self.words(child, split=True))
        redirs.extend(extra_redirects or [])
        if not argv:
            for a in assigns:
                self.bind(a)
        self.emit(argv, assigns, redirs, self.text(node), upstream=self.upstream)

    # ----------------------------------------------------------- redirections

    def redirect(self, node: Any) -> list[Redirect]:
        out: list[Redirect] = []
        fd: int | None = None
        op = ""
        target: Word | None = None
        body: Word | None = None
        if node.type == "heredoc_redirect":
            quoted = False
            for child in node.children:
                ct = child.type
                if ct in ("<<", "<<-"):
                    op = ct
                elif ct == "heredoc_start":
                    quoted = any(ch in self.text(child) for ch in "'\"\\")
                elif ct == "heredoc_body":
                    body = self.heredoc_body(child, quoted)
                elif ct.endswith("_redirect"):
                    out.extend(self.redirect(child))
                elif ct == "file_descriptor":
                    fd = int(self.text(child)) if self.text(child).isdigit() else None
                elif child.is_named and ct not in ("heredoc_end",):
                    self.walk(child)  # `cat <<EOF | cmd`: the rest of the pipeline
            red = Redirect(op or "<<", None, fd, body)
        elif node.type == "herestring_redirect":
            parts = [c for c in node.named_children if c.type != "file_descriptor"]
            for c in node.named_children:
                if c.type == "file_descriptor" and self.text(c).isdigit():
                    fd = int(self.text(c))
            ws = [w for p in parts for w in self.words(p)]
            body = _join_words(ws) if ws else Word("")
            red = Redirect("<<<", None, fd, body)
        else:
            words: list[Word] = []
            for i, child in enumerate(node.children):
                ct = child.type
                if ct == "file_descriptor":
                    txt = self.text(child)
                    fd = int(txt) if txt.isdigit() else None
                elif not child.is_named:
                    op += ct
                elif node.field_name_for_child(i) == "destination" or child.is_named:
                    words.extend(self.words(child))
            target = _join_words(words) if words else None
            red = Redirect(op, target, fd, None)
        out.insert(0, red)
        self.redirects.extend(out)
        return out

    def heredoc_body(self, node: Any, quoted: bool) -> Word:
        if quoted:
            return Word(self.text(node), source=self.text(node))
        parts: list[_Part] = []
        pos = node.start_byte
        names: list[str] = []
        for child in node.named_children:
            if child.type == "heredoc_content":
                continue
            if child.start_byte > pos:
                parts.append((self.src[pos : child.start_byte].decode("utf-8", "surrogateescape"), "q"))
            parts.extend(self.parts(child, names, in_quotes=True))
            pos = child.end_byte
        if node.end_byte > pos:
            parts.append((self.src[pos : node.end_byte].decode("utf-8", "surrogateescape"), "q"))
        return _assemble(parts, names, self.text(node), None)[0]

    # ------------------------------------------------------------------ words

    def words(self, node: Any, *, split: bool = False) -> list[Word]:
        """Evaluate a word-like node (brace expansion may yield several words).

        ``split``: a command's words undergo word splitting — an unquoted expansion
        is cut into several words at the characters of ``IFS``
        (``IFS=_; x=cat_.env; $x`` runs ``cat .env``)."""
        names: list[str] = []
        parts = self.parts(node, names, in_quotes=False)
        if not any(k == "x" for _, k in parts):
            return _assemble(parts, names, self.text(node), self.home)
        if not split:
            return _assemble([(t, "q" if k == "x" else k) for t, k in parts], names, self.text(node), self.home)
        out: list[Word] = []
        for field in self._split_fields(parts):
            out.extend(_assemble(field, names, self.text(node), self.home))
        return out

    def _split_fields(self, parts: list[_Part]) -> list[list[_Part]]:
        """Word splitting of the unquoted expansions ("x" parts) on the current IFS."""
        ifs = self.vars.get("IFS", _UNSET)
        if ifs is _UNSET:
            ifs = " \t\n"
        if not isinstance(ifs, str):  # IFS set from something only known at run time
            return [[(DYN, "dyn") if k == "x" else (t, k) for t, k in parts]]
        if ifs == "":
            return [[(t, "q" if k == "x" else k) for t, k in parts]]
        fields: list[list[_Part]] = [[]]
        for text, kind in parts:
            if kind != "x":
                fields[-1].append((text, kind))
                continue
            start = 0
            for i, ch in enumerate(text):
                if ch in ifs:
                    if text[start:i]:
                        fields[-1].append((text[start:i], "q"))
                    if fields[-1]:
                        fields.append([])
                    start = i + 1
            if text[start:]:
                fields[-1].append((text[start:], "q"))
        return [f for f in fields if f]

    def parts(self, node: Any, names: list[str], in_quotes: bool) -> list[_Part]:
        t = node.type
        if t == "word" or t == "number":
            return _unescape_word(self.text(node)) if not in_quotes else [(self.text(node), "q")]
        if t in ("extglob_pattern", "brace_expression", "regex", "test_operator", "variable_name"):
            return [(self.text(node), "lit")]
        if t == "raw_string":
            return [(self.text(node)[1:-1], "q")]
        if t == "ansi_c_string":
            return [(_ansi_c(self.text(node)[2:-1]), "q")]
        if t in ("string", "translated_string"):
            return self.string_parts(node, names)
        if t == "concatenation":
            out: list[_Part] = []
            for child in node.children:
                out.extend(self.parts(child, names, in_quotes))
            return out
        if t in ("simple_expansion", "expansion"):
            part = self.expansion(node, names)
            # "x": expanded unquoted, subject to word splitting (see words)
            return [part if in_quotes or part[1] != "q" else (part[0], "x")]
        if t == "command_substitution":
            self.substitution(node)
            return [(DYN, "dyn")]
        if t == "process_substitution":
            self.substitution(node)
            return [("/dev/fd/63", "q")]  # a pipe, never a file on disk
        if t == "string_content":
            return [(_unescape_dq(self.text(node)), "q")]
        # arithmetic, arrays, anything else: dynamic, but walk for substitutions
        for child in node.named_children:
            if child.type in _WORD_TYPES:
                self.parts(child, names, in_quotes)
            else:
                self.walk(child)
        if t == "ERROR":
            self.unparsable = True
        return [(DYN, "dyn")]

    def string_parts(self, node: Any, names: list[str]) -> list[_Part]:
        text = self.text(node)
        start = node.start_byte + (2 if text.startswith('$"') else 1)
        end = node.end_byte - 1 if text.endswith('"') and len(text) > 1 else node.end_byte
        out: list[_Part] = []
        pos = start
        for child in node.children:
            if not child.is_named:
                continue
            if child.start_byte > pos:
                out.append((_unescape_dq(self.src[pos : child.start_byte].decode("utf-8", "surrogateescape")), "q"))
            out.extend(self.parts(child, names, in_quotes=True))
            pos = max(pos, child.end_byte)
        if end > pos:
            out.append((_unescape_dq(self.src[pos:end].decode("utf-8", "surrogateescape")), "q"))
        return out

    def expansion(self, node: Any, names: list[str]) -> _Part:
        name = ""
        plain = True
        for child in node.named_children:
            if child.type in ("variable_name", "special_variable_name") and not name:
                name = self.text(child)
            else:
                plain = False
                self.parts(child, names, in_quotes=True)  # substitutions inside ${X:-$(…)}
        if node.type == "expansion":
            inner = self.text(node)[2:-1]
            if inner != name:
                plain = False
        if name:
            names.append(name)
        value = self.vars.get(name) if plain else None
        if value is None:
            return (DYN, "dyn")
        if isinstance(value, Word):
            return (value.pattern or value.value, "lit") if value.glob else (value.value, "q")
        return (value, "q")

    def substitution(self, node: Any) -> None:
        saved = self.upstream
        self.upstream = None
        for child in node.named_children:
            self.walk(child)
        self.upstream = saved

    # ---------------------------------------------------------------- commands

    def emit(
        self,
        argv: list[Word],
        assigns: list[Assignment],
        redirs: list[Redirect],
        text: str,
        wrappers: tuple[str, ...] = (),
        upstream: SimpleCommand | None = None,
    ) -> None:
        for _ in range(32):  # wrappers peeled one at a time; bounded against `nice nice nice …`
            name = _name_of(argv)
            if name is None or name not in _WRAPPERS:
                break
            peeled = _WRAPPERS[name](argv)
            if peeled is None:
                break
            inner, extra_assigns, extra_redirs, stdin_args = peeled
            if not inner:
                break
            if stdin_args:
                inner = inner + [_stdin_word(upstream)]
            argv = inner
            assigns = assigns + extra_assigns
            redirs = redirs + extra_redirs
            self.redirects.extend(extra_redirs)
            wrappers = wrappers + (name,)
        name = _name_of(argv)
        full = self.wrap_prefix + wrappers
        if name is not None and self._nested(name, argv, full, redirs):
            return
        if name == "find":
            argv = self._find(argv, assigns, wrappers, text)
        self.commands.append(
            SimpleCommand(
                argv=tuple(argv),
                redirects=tuple(redirs),
                assignments=tuple(assigns),
                wrappers=full,
                depth=self.depth,
                text=text,
            )
        )

    def _shell_c(self, name: str, code: Word, argv: list[Word], redirs: list[Redirect],
                 wrappers: tuple[str, ...]) -> None:
        """`NAME -c CODE`: parse CODE when it is literal, else the command is opaque."""
        if code.is_literal:
            self.parse_script(code.value, self.depth + 1, wrappers + (f"{name} -c",))
        else:
            self._opaque(argv, redirs, wrappers, f"{name} -c of a string only known at run time")

    def _opaque(self, argv: list[Word], redirs: list[Redirect], wrappers: tuple[str, ...], why: str) -> None:
        self.commands.append(
            SimpleCommand(tuple(argv), tuple(redirs), (), wrappers, self.depth, why, "")
        )

    def _git_aliases(self, argv: list[Word], redirs: list[Redirect], wrappers: tuple[str, ...]) -> None:
        """A git alias body is code: ``git -c alias.x='!cat .env' x`` runs it now,
        ``git config alias.x '!cat .env'`` stores it for a later ``git x``. Either way
        the body is judged here: ``!CMD`` as a shell line, anything else as ``git BODY``."""
        args = argv[1:]
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
        for body in bodies:
            where = wrappers + ("git alias",)
            if not body.is_literal:
                self._opaque(argv, redirs, wrappers, "a git alias whose body is only known at run time")
            elif body.value.startswith("!"):
                self.parse_script(body.value[1:], self.depth + 1, where)
            else:
                self.parse_script("git " + body.value, self.depth + 1, where)

    def _nested(self, name: str, argv: list[Word], wrappers: tuple[str, ...], redirs: list[Redirect]) -> bool:
        """Handle commands whose arguments are themselves shell code."""
        if name == "git":
            self._git_aliases(argv, redirs, wrappers)
            return False
        if name == "eval":
            code = argv[1:]
            if not code:
                return False
            if all(w.is_literal for w in code):
                self.parse_script(" ".join(w.value for w in code), self.depth + 1, wrappers + ("eval",))
            else:
                self._opaque(argv, redirs, wrappers, "eval of a string only known at run time")
            return True
        if name in ("script", "flock"):
            code = _shell_code(argv[1:], su=(name == "flock"))
            if code is None:
                return False
            self._shell_c(name, code, argv, redirs, wrappers)
            return True
        if name in SHELLS or name == "su":
            args = argv[1:]
            if name == "busybox":
                if not args or _name_of(args) not in SHELLS:
                    return False
                args = args[1:]
            code = _shell_code(args, su=(name == "su"))
            if code is None:
                # `bash script.sh`, `bash` reading stdin: a here-doc/here-string is code too
                for r in redirs:
                    if r.op in ("<<", "<<-", "<<<") and r.body is not None:
                        if r.body.static:
                            self.parse_script(r.body.value, self.depth + 1, wrappers + (name,))
                        else:
                            self._opaque(argv, redirs, wrappers, f"{name} reads a script only known at run time")
                        return True
                if all(a.value in ("-s", "-", "-i", "-l", "--login", "--norc", "--noprofile") for a in args):
                    # no script file: the shell runs whatever its stdin supplies
                    script = _static_output(self.upstream) if self.upstream is not None else None
                    if script is not None:
                        self.parse_script(script, self.depth + 1, wrappers + (name,))
                    else:
                        self._opaque(argv, redirs, wrappers, f"{name} runs commands read from stdin")
                    return True
                return False
            self._shell_c(name, code, argv, redirs, wrappers)
            return True
        return False

    def _find(
        self,
        argv: list[Word],
        assigns: list[Assignment],
        wrappers: tuple[str, ...],
        text: str,
    ) -> list[Word]:
        """``find … -exec CMD {} ;``: CMD runs on every match; ``{}`` stands for the
        files ``-name`` selects (a recursive pattern word), else for unknown files."""
        args = argv[1:]
        placeholders = find_results(argv)
        keep: list[Word] = [argv[0]]
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
                    for ph in placeholders:
                        sub = [ph if x.value == "{}" else x for x in inner]
                        self.emit(sub, assigns, [], text, wrappers + ("find -exec",))
                i = j + 1
                continue
            keep.append(w)
            i += 1
        return keep


_UNSET = object()

_WORD_TYPES = frozenset(
    {
        "word", "number", "string", "raw_string", "ansi_c_string", "translated_string",
        "concatenation", "simple_expansion", "expansion", "command_substitution",
        "process_substitution", "extglob_pattern", "brace_expression", "arithmetic_expansion",
    }
)


# ------------------------------------------------------------------ word helpers


def _unescape_word(text: str) -> list[_Part]:
    """Unquoted word text: ``\\x`` quotes x; a backslash-newline disappears."""
    parts: list[_Part] = []
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


def _unescape_dq(text: str) -> str:
    """Inside double quotes only ``\\$ \\` \\" \\\\`` and backslash-newline are escapes."""
    import re
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)


_ANSI = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b",
         "f": "\f", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}


def _ansi_c(body: str) -> str:
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


def _brace_expand(s: str) -> list[str]:
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
        out.extend(_brace_expand(s[:start] + item + s[end + 1 :]))
        if len(out) > 64:
            break
    return out[:64]


_Q_OPEN, _Q_CLOSE = "\x01", "\x02"  # internal markers for quoted text during assembly


def _assemble(parts: list[_Part], names: list[str], source: str, home: str | None) -> list[Word]:
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
        pattern = "".join(t if k != "q" else _escape_glob(t) for t, k in parts)
    vars_ = tuple(dict.fromkeys(names))
    if not braces:
        return [Word(value, static, glob, pattern, vars_, source)]
    # Brace expansion over the unquoted text (quoted text protected by markers).
    marked = "".join(t if k == "lit" else _Q_OPEN + t + _Q_CLOSE for t, k in parts)
    out: list[Word] = []
    for variant in _brace_expand(marked):
        v = variant.replace(_Q_OPEN, "").replace(_Q_CLOSE, "")
        pat = None
        if glob:
            import re

            pat = re.sub(
                _Q_OPEN + "(.*?)" + _Q_CLOSE, lambda m: _escape_glob(m.group(1)), variant, flags=re.S
            )
        out.append(Word(v, static, glob, pat, vars_, source))
    return out


def _escape_glob(text: str) -> str:
    return "".join(f"[{c}]" if c in _GLOB_CHARS else c for c in text)


def _join_words(ws: list[Word]) -> Word:
    if len(ws) == 1:
        return ws[0]
    return Word(
        " ".join(w.value for w in ws),
        static=all(w.static for w in ws),
        glob=any(w.glob for w in ws),
        vars=tuple(dict.fromkeys(v for w in ws for v in w.vars)),
        source=" ".join(w.source for w in ws),
    )


def _name_of(argv: list[Word]) -> str | None:
    if not argv or not argv[0].is_literal:
        return None
    return posixpath.basename(argv[0].value) or argv[0].value


def _stdin_word(upstream: SimpleCommand | None) -> Word:
    """The arguments ``xargs`` reads from its stdin. Known when the upstream stage
    is ``echo``/``printf`` with literal words; otherwise unknown."""
    if upstream is not None and upstream.name in ("echo", "printf") and upstream.args:
        words = [w for w in upstream.args if not w.value.startswith("-")]
        if words and all(w.is_literal for w in words):
            return _join_words(words) if len(words) > 1 else words[0]
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


def _static_output(cmd: SimpleCommand) -> str | None:
    """What ``echo 'literal' | bash`` feeds the shell, when it is literal."""
    if cmd.name in ("echo", "printf") and cmd.args and all(w.is_literal for w in cmd.args):
        words = [w.value for w in cmd.args if not (cmd.name == "echo" and w.value in ("-n", "-e", "-E"))]
        return " ".join(words)
    return None


def _shell_code(args: list[Word], su: bool = False) -> Word | None:
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


# ------------------------------------------------------------------ wrappers

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
    code = _join_words(rest)
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
