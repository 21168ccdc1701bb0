"""Evaluate a command line against the policy for an actor, the guard's rules included.

The line is parsed into every command it would run (tcg.policy.cmdline), then
each command is classified — which of its words are files it reads, writes,
merely lists or only uses as a credential — and checked for:

- ``secret-store-read`` / ``secret-store-write``: a protected secret store
  (``[secret_stores]``) read, or its contents written;
- ``credential-dump``: a command that prints credentials (``env``, ``printenv``,
  ``/proc/*/environ``, ``[[credential_dumps]]`` rules, ``echo $API_TOKEN``);
- ``self-protection``: writes into tcg's own config/state/cache, the policy
  file, or any access to the install key;
- ``guard-tamper``: changes to how tcg is wired in (shell rc files, agent
  settings, ``TCG_*`` variables);
- ``unresolved-path`` / ``unresolved-command`` / ``unparsable-line``: what
  cannot be known before running, where it matters.

Every reason's decision comes from ``policy.decision_for(actor, code)``. Any
exception while deciding becomes BLOCK ``internal-error`` (fail closed). The
model of which commands read is documented in docs/parser.md.
"""

from __future__ import annotations

import os
import posixpath

from tcg.errors import PolicyError
from tcg.guard import wanted as guard_wanted
from tcg.policy.access import (
    NONE,
    READ,
    RW,
    WRITE,
    PathChecks,
    _clip,
    _expand_home,
    _is_under,
    _norm,
    _proc_environ,
    _Rules,
    _rx,
    _show,
)
from tcg.policy.cmdline import DYN, ParsedLine, Redirect, SimpleCommand, Word, parse_line
from tcg.policy.commands import FILE_READERS, HIDDEN_READERS, INTERPRETERS, PRINTING, classify
from tcg.policy.dumprules import dump_matches
from tcg.policy.model import Decision, Reason, Verdict

TYPE_CHECKING = False  # typing and dataclasses cost import time on every mediated command
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

# ------------------------------------------------------------------ evaluation


def evaluate_line(
    policy: Any,
    line: str,
    actor: str,
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    on_error: Callable[[BaseException], None] | None = None,
) -> Verdict:
    """Decide ``line`` for ``actor`` ("human" or "agent"). Never raises.

    ``cwd`` resolves relative paths and expands globs against the real directory
    (None: no filesystem access; globs are judged by what they could match).
    ``env`` defaults to ``os.environ`` and is used only for ``HOME`` and other
    path variables (never to read a secret). Any internal failure is BLOCK
    ``internal-error``; ``on_error`` receives the exception (to log it).
    """
    try:
        where = os.fspath(cwd) if cwd is not None else None
        return _evaluate(policy, line, actor, cwd=where, env=os.environ if env is None else env)
    except PolicyError as exc:
        if on_error is not None:
            on_error(exc)
        return Verdict.combine([Reason("policy-invalid", Decision.BLOCK, _clip(exc.message))])
    except Exception as exc:  # noqa: BLE001 - fail closed: an error must never become ALLOW
        if on_error is not None:
            on_error(exc)
        return Verdict.combine(
            [Reason("internal-error", Decision.BLOCK, f"tcg failed while deciding ({type(exc).__name__})")]
        )


evaluate_line_safe = evaluate_line  # the name other surfaces were told to expect

# The environment _Rules reads (tcg's own directories, the policy file).
_RULES_ENV = ("TCG_HOME", "TCG_POLICY", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")
_rules_memo: list[tuple[Any, _Rules]] = []


def _rules_for(policy: Any, env: Mapping[str, str], home: str | None) -> _Rules:
    """_Rules for ``policy``, kept for the next call with the same policy and
    environment: a terminal session decides every line with one policy, and
    building _Rules is most of a short line's decision (~1 ms)."""
    fingerprint = getattr(policy, "fingerprint", None)
    if fingerprint is None:
        return _Rules(policy, env, home)
    key = (fingerprint, home, tuple(env.get(v) for v in _RULES_ENV))
    if _rules_memo and _rules_memo[0][0] == key:
        return _rules_memo[0][1]
    rules = _Rules(policy, env, home)
    _rules_memo[:] = [(key, rules)]
    return rules


def _evaluate(policy: Any, line: str, actor: str, *, cwd: str | None, env: Mapping[str, str]) -> Verdict:
    home = env.get("HOME") or None
    rules = _rules_for(policy, env, home)
    parsed = parse_line(line, home=home, env=env)
    ev = _Evaluator(policy, actor, rules, cwd, home)
    ev.run(parsed)
    if guard_wanted(parsed):  # deletes, overwrites, git, outbound: docs/guard.md
        from tcg.guard.rules import review

        review(ev, parsed, line)
    return Verdict.combine(ev.reasons)


class _Evaluator(PathChecks):
    """The checks of a parsed command line; the path checks themselves are PathChecks'."""

    def run(self, parsed: ParsedLine) -> None:
        if parsed.unparsable:
            why = parsed.problems[0] if parsed.problems else "syntax error"
            self.add("unparsable-line", f"the line cannot be parsed ({why})", "parse")
        attached: set[int] = set()
        for cmd in parsed.commands:
            attached.update(id(r) for r in cmd.redirects)
            self.command(cmd)
        self.cwd = self.start_cwd
        for red in parsed.redirects:
            if id(red) not in attached:  # redirections of lists, loops, groups
                self.redirect(red, None)

    # ---------------------------------------------------------------- commands

    def command(self, cmd: SimpleCommand) -> None:
        for a in cmd.assignments:
            if self.rules.guarded_env(a.name):
                self.add("guard-tamper", f"sets {a.name}, a variable tcg relies on", "guard-env")
        for red in cmd.redirects:
            self.redirect(red, cmd)
        if not cmd.argv:
            return
        if cmd.opaque:
            self.add("unresolved-command", f"{cmd.opaque}", "opaque-code")
            return
        name = cmd.name
        if name is None:
            self.add("unresolved-command", "the command name is only known at run time", "dynamic-command")
            return
        if name == "cd":
            self.track_cd(cmd)
        if name == "unset":
            for w in cmd.args:
                if self.rules.guarded_env(w.value):
                    self.add("guard-tamper", f"unsets {w.value}, a variable tcg relies on", "guard-env")
        self.dumps(cmd, name)
        for word, access in classify(cmd, name):
            self.file_access(cmd, name, word, access)
        if name in INTERPRETERS:
            self.interpreter_code(cmd, name)
        if name in HIDDEN_READERS:
            self.hidden_reads(cmd, name)

    def hidden_reads(self, cmd: SimpleCommand, name: str) -> None:
        """Reads not visible as file arguments (tcg.policy.readers): file:// URLs, SQL
        readfile(), git object ids, directories read recursively."""
        from tcg.policy import readers

        args = list(cmd.args)
        values = [w.value for w in args]
        if name == "curl":
            for w, path in readers.file_urls(args):
                self.check_path(name, Word(path, w.static, False, None, w.vars, w.source), READ, reader=True,
                                via="file://")
        elif name in readers.SQLITE:
            for db_path in readers.sqlite_paths(args):
                word = Word(db_path) if db_path is not None else Word(DYN + "readfile", static=False)
                self.check_path(name, word, READ, reader=True, via="readfile ")
        elif name == "git":
            self.git_objects(values)
        if name in readers.RECURSIVE and self.cwd is not None:
            found = readers.recursive_sources(name, values)
            if found is None:
                return
            paths, excludes = found
            for p in paths:
                if not p or DYN in p:
                    continue
                root = self.resolve(_expand_home(p, self.home))
                if not os.path.isdir(root):
                    continue
                store = readers.store_inside(root, lambda f: self.rules.store_match(f) is not None, excludes)
                if store is not None:
                    shown = posixpath.relpath(store, root) if _is_under(store, root) else store
                    self.add("secret-store-read",
                             f"{name} reads {_show(p)} recursively, which holds {_show(shown)} "
                             f"(protected {self.rules.store_match(store)})", "recursive-read")

    def git_objects(self, values: list[str]) -> None:
        """``git cat-file``/``git show`` of a bare object id: the blob of a secret store?"""
        from tcg.policy import readers

        i = 0
        while i < len(values) and values[i].startswith("-"):
            i += 2 if values[i] in ("-C", "-c", "--git-dir", "--work-tree", "--namespace") else 1
        if i >= len(values) or values[i] not in ("cat-file", "show"):
            return
        sub, rest = values[i], values[i + 1:]
        if sub == "cat-file" and any(v.startswith(("--batch", "--batch-command")) for v in rest):
            self.add("unresolved-path", "git cat-file --batch prints the objects named on its stdin", "git-object")
            return
        if sub == "cat-file" and not any(v in ("-p", "blob", "--textconv", "--filters") for v in rest):
            return  # -t, -s, -e print type, size, existence
        for oid in readers.object_ids(sub, rest):
            if self.cwd is None:
                self.add("unresolved-path", f"git {sub} {oid}: which file this object holds is unknown",
                         "git-object")
                continue
            kind, path = readers.blob_path(self.cwd, oid)
            if kind != "blob":
                continue  # a commit, tree or tag (shows history, masked), or no such object
            if path is None:
                self.add("unresolved-path", f"git {sub} {oid} prints a blob that is in neither the index nor HEAD",
                         "git-object")
            elif self.rules.store_match(path) is not None:
                self.add("secret-store-read", f"git {sub} {oid} prints the blob of {_show(path)} "
                         f"(protected {self.rules.store_match(path)})", "git-object")

    def track_cd(self, cmd: SimpleCommand) -> None:
        args = [w for w in cmd.args if not (w.is_literal and w.value.startswith("-") and w.value != "-")]
        if not args:
            self.cwd = self.home
            return
        w = args[0]
        if not w.is_literal or w.value == "-":
            self.cwd = None
            return
        if posixpath.isabs(w.value):
            self.cwd = _norm(w.value)
        elif self.cwd is not None:
            self.cwd = _norm(posixpath.join(self.cwd, w.value))

    def redirect(self, red: Redirect, cmd: SimpleCommand | None) -> None:
        for body in (red.body,):
            if body is not None:
                for var in body.vars:
                    if self.rules.secret_var(var):
                        self.add("credential-dump", f"expands ${var} into a here-document or here-string",
                                 "secret-var-expansion")
        if red.target is None or red.is_fd_dup:
            return
        who = cmd.name if cmd is not None and cmd.name else "a redirection"
        if red.reads and red.writes:
            access = RW
        elif red.reads:
            access = READ
        elif red.writes:
            access = WRITE
        else:
            return
        self.check_path(who, red.target, access, reader=red.reads, via=f"{red.op} ")

    # ------------------------------------------------------------------ files

    def file_access(self, cmd: SimpleCommand, name: str, word: Word, access: str) -> None:
        if access == NONE:
            return
        self.check_path(name, word, access, reader=name in FILE_READERS)

    # ---------------------------------------------------------------- dumps

    def dumps(self, cmd: SimpleCommand, name: str) -> None:
        args = cmd.args
        vals = [w.value for w in args]
        if name == "env":  # only reached when env runs nothing (see tcg.policy.wrappers._peel_env)
            if not any(v in ("--help", "--version") for v in vals):
                self.add("credential-dump", "env with no command prints the whole environment", "env-dump")
        elif name == "printenv":
            named = [w for w in args if not w.value.startswith("-")]
            if not named:
                self.add("credential-dump", "printenv prints the whole environment", "env-dump")
            for w in named:
                if not w.static or self.rules.secret_var(w.value):
                    self.add("credential-dump", f"printenv prints {_show(w.value)}", "secret-var-expansion")
        elif name == "set" and not args:
            self.add("credential-dump", "set with no arguments prints every variable", "env-dump")
        elif name in ("export", "declare", "typeset", "readonly"):
            flags = "".join(v[1:] for v in vals if v.startswith("-"))
            names = [v for v in vals if not v.startswith(("-", "+"))]
            if not cmd.assignments and not names and ("f" not in flags and "F" not in flags):
                if name != "readonly" or "p" in flags:
                    self.add("credential-dump", f"{name} {' '.join(vals)}".strip() + " prints exported variables",
                             "env-dump")
            if "p" in flags:
                for n in names:
                    if self.rules.secret_var(n):
                        self.add("credential-dump", f"{name} -p prints {n}", "secret-var-expansion")
        if name in PRINTING:
            for w in args:
                for var in w.vars:
                    if self.rules.secret_var(var):
                        self.add("credential-dump", f"{name} prints ${var}", "secret-var-expansion")
        if name in self.rules.dump_commands:
            for rule in self.rules.dumps:
                if name in rule.commands and dump_matches(rule, args):
                    what = rule.description or "prints credentials"
                    shown = " ".join([name, *rule.args]) if rule.args else name
                    self.add("credential-dump", f"{shown}: {what}", rule.id)

    def interpreter_code(self, cmd: SimpleCommand, name: str) -> None:
        import re
        opts = INTERPRETERS[name]
        codes: list[Word] = []
        args = cmd.args
        for i, w in enumerate(args):
            if w.value in opts and i + 1 < len(args):
                codes.append(args[i + 1])
            elif any(w.value.startswith(o) and len(w.value) > len(o) and o.startswith("-") and len(o) == 2
                     for o in opts):
                codes.append(Word(w.value[2:], static=w.static))
        for r in cmd.redirects:
            if r.op in ("<<", "<<-", "<<<") and r.body is not None:
                codes.append(r.body)
        for code in codes:
            text = code.value
            for token in _rx("pathish").findall(text):
                if ("/" in token or token.startswith((".", "~"))) and token not in (".", ".."):
                    tok = _expand_home(token, self.home)
                    store = self.rules.store_match(self.resolve(tok))
                    if store is not None:
                        self.add("secret-store-read", f"{name} code opens {_show(token)} (protected {store})",
                                 "secret-store")
                    elif _proc_environ(tok):
                        self.add("credential-dump", f"{name} code reads {_show(tok)}", "proc-environ")
            for ident in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text):
                if self.rules.secret_var(ident) and ident.isupper():
                    self.add("credential-dump", f"{name} code reads ${ident}", "secret-var-expansion")
                    break
            if _rx("whole-env").search(text):
                self.add("credential-dump", f"{name} code prints the whole environment", "env-dump")
            for var in code.vars:
                if self.rules.secret_var(var):
                    self.add("credential-dump", f"{name} code expands ${var}", "secret-var-expansion")
