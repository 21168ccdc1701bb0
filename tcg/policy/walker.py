"""The tree walk behind tcg.policy.cmdline.parse_line: a bash syntax tree (or a plain
line's words) flattened into every simple command that would run.

Statements, pipelines, loops, redirections, declarations and substitutions are
walked here; the word-level evaluation lives in tcg.policy.words, the wrappers
(``sudo``, ``env``, ``xargs``…) in tcg.policy.wrappers, the parser binding in
tcg.policy.tsbinding and the plain-line shortcut in tcg.policy.plainline.
"""

from __future__ import annotations

from tcg.policy import plainline, tsbinding
from tcg.policy.words import (
    DYN,
    MAX_DEPTH,
    MAX_FOR_VALUES,
    SHELLS,
    Assignment,
    Part,
    Redirect,
    SimpleCommand,
    Word,
    ansi_c,
    assemble,
    find_results,
    join_words,
    name_of,
    shell_code,
    static_output,
    stdin_word,
    unescape_dq,
    unescape_word,
)
from tcg.policy.wrappers import _WRAPPERS, find_exec_split, git_alias_bodies

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any



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
            words = plainline.plain_words(text)
            if words is not None:  # no quoting, expansion or operator: no parser needed
                argv = [w for word in words for w in assemble(unescape_word(word), [], word, self.home)]
                self.emit(argv, [], [], text.strip(plainline.BLANKS), upstream=self.upstream)
                return
            tree = tsbinding._parser().parse(self.src)
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
            value = ws[0] if len(ws) == 1 else join_words(ws)
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
            body = join_words(ws) if ws else Word("")
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
            target = join_words(words) if words else None
            red = Redirect(op, target, fd, None)
        out.insert(0, red)
        self.redirects.extend(out)
        return out

    def heredoc_body(self, node: Any, quoted: bool) -> Word:
        if quoted:
            return Word(self.text(node), source=self.text(node))
        parts: list[Part] = []
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
        return assemble(parts, names, self.text(node), None)[0]

    # ------------------------------------------------------------------ words

    def words(self, node: Any, *, split: bool = False) -> list[Word]:
        """Evaluate a word-like node (brace expansion may yield several words).

        ``split``: a command's words undergo word splitting — an unquoted expansion
        is cut into several words at the characters of ``IFS``
        (``IFS=_; x=cat_.env; $x`` runs ``cat .env``)."""
        names: list[str] = []
        parts = self.parts(node, names, in_quotes=False)
        if not any(k == "x" for _, k in parts):
            return assemble(parts, names, self.text(node), self.home)
        if not split:
            return assemble([(t, "q" if k == "x" else k) for t, k in parts], names, self.text(node), self.home)
        out: list[Word] = []
        for field in self._split_fields(parts):
            out.extend(assemble(field, names, self.text(node), self.home))
        return out

    def _split_fields(self, parts: list[Part]) -> list[list[Part]]:
        """Word splitting of the unquoted expansions ("x" parts) on the current IFS."""
        ifs = self.vars.get("IFS", _UNSET)
        if ifs is _UNSET:
            ifs = " \t\n"
        if not isinstance(ifs, str):  # IFS set from something only known at run time
            return [[(DYN, "dyn") if k == "x" else (t, k) for t, k in parts]]
        if ifs == "":
            return [[(t, "q" if k == "x" else k) for t, k in parts]]
        fields: list[list[Part]] = [[]]
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

    def parts(self, node: Any, names: list[str], in_quotes: bool) -> list[Part]:
        t = node.type
        if t == "word" or t == "number":
            return unescape_word(self.text(node)) if not in_quotes else [(self.text(node), "q")]
        if t in ("extglob_pattern", "brace_expression", "regex", "test_operator", "variable_name"):
            return [(self.text(node), "lit")]
        if t == "raw_string":
            return [(self.text(node)[1:-1], "q")]
        if t == "ansi_c_string":
            return [(ansi_c(self.text(node)[2:-1]), "q")]
        if t in ("string", "translated_string"):
            return self.string_parts(node, names)
        if t == "concatenation":
            out: list[Part] = []
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
            return [(unescape_dq(self.text(node)), "q")]
        # arithmetic, arrays, anything else: dynamic, but walk for substitutions
        for child in node.named_children:
            if child.type in _WORD_TYPES:
                self.parts(child, names, in_quotes)
            else:
                self.walk(child)
        if t == "ERROR":
            self.unparsable = True
        return [(DYN, "dyn")]

    def string_parts(self, node: Any, names: list[str]) -> list[Part]:
        text = self.text(node)
        start = node.start_byte + (2 if text.startswith('$"') else 1)
        end = node.end_byte - 1 if text.endswith('"') and len(text) > 1 else node.end_byte
        out: list[Part] = []
        pos = start
        for child in node.children:
            if not child.is_named:
                continue
            if child.start_byte > pos:
                out.append((unescape_dq(self.src[pos : child.start_byte].decode("utf-8", "surrogateescape")), "q"))
            out.extend(self.parts(child, names, in_quotes=True))
            pos = max(pos, child.end_byte)
        if end > pos:
            out.append((unescape_dq(self.src[pos:end].decode("utf-8", "surrogateescape")), "q"))
        return out

    def expansion(self, node: Any, names: list[str]) -> Part:
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
            name = name_of(argv)
            if name is None or name not in _WRAPPERS:
                break
            peeled = _WRAPPERS[name](argv)
            if peeled is None:
                break
            inner, extra_assigns, extra_redirs, stdin_args = peeled
            if not inner:
                break
            if stdin_args:
                inner = inner + [stdin_word(upstream)]
            argv = inner
            assigns = assigns + extra_assigns
            redirs = redirs + extra_redirs
            self.redirects.extend(extra_redirs)
            wrappers = wrappers + (name,)
        name = name_of(argv)
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
        """A git alias body is code, judged here: ``!CMD`` as a shell line, anything
        else as ``git BODY`` (tcg.policy.wrappers.git_alias_bodies finds them)."""
        for body in git_alias_bodies(argv[1:]):
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
            script_word = shell_code(argv[1:], su=(name == "flock"))
            if script_word is None:
                return False
            self._shell_c(name, script_word, argv, redirs, wrappers)
            return True
        if name in SHELLS or name == "su":
            args = argv[1:]
            if name == "busybox":
                if not args or name_of(args) not in SHELLS:
                    return False
                args = args[1:]
            script_word = shell_code(args, su=(name == "su"))
            if script_word is None:
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
                    script = static_output(self.upstream) if self.upstream is not None else None
                    if script is not None:
                        self.parse_script(script, self.depth + 1, wrappers + (name,))
                    else:
                        self._opaque(argv, redirs, wrappers, f"{name} runs commands read from stdin")
                    return True
                return False
            self._shell_c(name, script_word, argv, redirs, wrappers)
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
        keep, inners = find_exec_split(argv)
        placeholders = find_results(argv) if inners else []
        for inner in inners:
            for ph in placeholders:
                sub = [ph if x.value == "{}" else x for x in inner]
                self.emit(sub, assigns, [], text, wrappers + ("find -exec",))
        return keep


_UNSET = object()

_WORD_TYPES = frozenset(
    {
        "word", "number", "string", "raw_string", "ansi_c_string", "translated_string",
        "concatenation", "simple_expansion", "expansion", "command_substitution",
        "process_substitution", "extglob_pattern", "brace_expression", "arithmetic_expansion",
    }
)
