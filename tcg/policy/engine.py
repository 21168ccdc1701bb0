"""Evaluate a command line against the policy for an actor.

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
from tcg.policy.cmdline import DYN, ParsedLine, Redirect, SimpleCommand, Word, parse_line
from tcg.policy.commands import (
    FILE_READERS,
    HIDDEN_READERS,
    INTERPRETERS,
    LIST,
    MODIFY,
    NONE,
    PRINTING,
    READ,
    RW,
    USE,
    WRITE,
    classify,
)
from tcg.policy.dumprules import DumpRule, compile_dump_rules, dump_matches
from tcg.policy.glob import fnmatchcase
from tcg.policy.model import Decision, Reason, Verdict

TYPE_CHECKING = False  # typing and dataclasses cost import time on every mediated command
if TYPE_CHECKING:
    import re
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any

SHELL_RC = (
    "~/.bashrc", "~/.bash_profile", "~/.bash_login", "~/.profile", "~/.zshrc", "~/.zshenv",
    "~/.zprofile", "~/.zlogin", "~/.config/fish/config.fish", "~/.inputrc",
    "~/.config/powershell/Microsoft.PowerShell_profile.ps1", "~/.config/powershell/profile.ps1",
)
# Compiled on first use (~0.7 ms at import otherwise, paid by every mediated command).
_RX = {
    "proc-environ": r"^/proc/[^/]+/(?:task/[^/]+/)?environ$",
    "whole-env": (r"os\.environ(?!\s*(?:\[|\.get\b|\.setdefault\b|\.pop\b|\.__getitem__))"
                  r"|process\.env(?!\s*(?:\.\w|\[))|\benviron\(\)|%ENV\b|\bENV\.(?:to_h|each|inspect|keys)"),
    "pathish": r"[A-Za-z0-9_.~/@+%-][A-Za-z0-9_.~/@+%:-]*",
}


def _rx(name: str) -> re.Pattern[str]:
    import re

    return re.compile(_RX[name])  # re caches compiled patterns


def _proc_environ(path: str) -> bool:
    """``/proc/PID/environ`` (or a task's): the plain tests first, as every path word
    is asked and ``re`` itself costs ~6 ms of imports per command."""
    return path.startswith("/proc/") and "/environ" in path and bool(_rx("proc-environ").match(path))


_MAX_DETAIL = 120


# ------------------------------------------------------------ compiled policy


def _lower(items: Any) -> tuple[str, ...]:
    return tuple(str(i).lower() for i in (items or []))


class _Rules:
    """The policy's protection lists in the shape the checks need."""

    def __init__(self, policy: Any, env: Mapping[str, str], home: str | None) -> None:
        get = policy.get
        # literal names first, so `.env` is reported as `.env`, not as `*.env`
        self.basenames = tuple(
            sorted(_lower(get("secret_stores.basenames", [])), key=lambda p: any(c in p for c in "*?["))
        )
        self.segments = _lower(get("secret_stores.segments", []))
        self.allow_basenames = _lower(get("secret_stores.allow_basenames", []))
        self.paths = tuple(_expand_home(str(p), home) for p in get("secret_stores.paths", []) or [])
        self.listing_is_read = bool(get("secret_stores.listing_is_read", False))
        self._policy = policy
        self._dumps: tuple[DumpRule, ...] | None = None
        self.secret_vars = tuple(str(v).upper() for v in get("secret_vars.names", []) or [])
        self.secret_vars_allow = tuple(str(v).upper() for v in get("secret_vars.allow_names", []) or [])
        self.guard_env = tuple(str(v).upper() for v in get("guard.env", []) or [])
        self.guard_env_allow = tuple(str(v).upper() for v in get("guard.allow_env", []) or [])
        files = list(get("guard.files", []) or []) or list(SHELL_RC)
        self.guard_files = tuple(posixpath.normpath(_expand_home(f, home)) for f in files)
        self.env = env
        self._tcg: tuple[tuple[str, ...], str, tuple[str, ...]] | None = None
        self.representatives = tuple(_representative(p) for p in self.basenames) + self.segments

    @property
    def dumps(self) -> tuple[DumpRule, ...]:
        """``[[credential_dumps]]``, compiled on first use (the sandbox view never needs them)."""
        if self._dumps is None:
            self._dumps = compile_dump_rules(self._policy.get("credential_dumps", []) or [])
            self._dump_commands = frozenset(c for r in self._dumps for c in r.commands)
        return self._dumps

    @property
    def dump_commands(self) -> frozenset[str]:
        self.dumps  # noqa: B018 - compiles them
        return self._dump_commands

    def tcg_files(self) -> tuple[tuple[str, ...], str, tuple[str, ...]]:
        """(tcg roots, key file, policy files) — computed on first need (platformdirs is slow)."""
        if self._tcg is None:
            from tcg.paths import get_paths

            p = get_paths(dict(self.env))
            roots = tuple(_norm(r) for r in (p.config_dir, p.state_dir, p.cache_dir))
            policies = [_norm(p.policy_path)]
            if self.env.get("TCG_POLICY"):
                policies.append(_norm(os.path.expanduser(self.env["TCG_POLICY"])))
            self._tcg = (roots, _norm(p.key_path), tuple(policies))
        return self._tcg

    # ------------------------------------------------------------- matching

    def store_match(self, path: str) -> str | None:
        """The protection ``path`` falls under (basename or whole segment), or None."""
        parts = [p for p in path.split("/") if p not in ("", ".")]
        if not parts:
            return None
        base = parts[-1].lower()
        if any(c.isspace() for c in base):
            return None  # prose ("update .env"), not a file name
        if any(fnmatchcase(base, p) for p in self.allow_basenames):
            return None
        for pat in self.basenames:
            if fnmatchcase(base, pat):
                return f"basename {pat}"
        for seg in parts:
            if seg.lower() in self.segments:
                return f"directory {seg}"
        for pat in self.paths:
            if fnmatchcase(path, pat):
                return f"path {pat}"
        return None

    def glob_may_match(self, pattern: str) -> str | None:
        """Could this glob expand to a protected file? (used when cwd is unknown)."""
        parts = [p for p in pattern.split("/") if p not in ("", ".")]
        for comp in parts:
            if not any(c in comp for c in "*?["):
                continue
            for rep in self.representatives:
                if rep.startswith(".") and not comp.startswith((".", "[.]")):
                    continue  # a leading * does not match dotfiles
                if fnmatchcase(rep, comp.lower()) and not any(
                    fnmatchcase(rep, a) for a in self.allow_basenames
                ):
                    return rep
        return None

    def secret_var(self, name: str) -> bool:
        up = name.upper()
        if any(fnmatchcase(up, p) for p in self.secret_vars_allow):
            return False
        return any(fnmatchcase(up, p) for p in self.secret_vars)

    def guarded_env(self, name: str) -> bool:
        up = name.upper()
        if any(fnmatchcase(up, p) for p in self.guard_env_allow):
            return False
        return any(fnmatchcase(up, p) for p in self.guard_env)


def secret_store_rules(policy: Any, env: Mapping[str, str]) -> _Rules:
    """The policy's secret stores and secret variable names, compiled for matching
    outside a command line (the sandbox view, environment scrubbing):
    ``store_match(path)``, ``secret_var(name)``, ``segments``."""
    return _Rules(policy, env, env.get("HOME") or None)


def _representative(pattern: str) -> str:
    """A concrete file name a basename glob matches (``.env.*`` → ``.env.x``)."""
    out = pattern
    if "[" in pattern:  # re only when needed: it costs ~6 ms of imports per command
        import re

        out = re.sub(r"\[([^\]]+)\]", lambda m: m.group(1)[0], pattern)
    return out.replace("*", "x").replace("?", "x")


def _expand_home(path: str, home: str | None) -> str:
    if home and (path == "~" or path.startswith("~/")):
        return home + path[1:]
    return path


def _norm(path: str) -> str:
    return posixpath.normpath(path.replace("\\", "/"))


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

# File accesses a caller can name directly (an agent's own file tools: Read is READ, Write is WRITE, …).
ACCESSES = (READ, WRITE, RW, MODIFY, LIST)


def evaluate_access(
    policy: Any,
    accesses: Iterable[tuple[str, str, str]],
    actor: str,
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> Verdict:
    """Decide file accesses made without a command line: ``(who, path, access)``
    triples, ``access`` one of ACCESSES; a path with glob characters is a
    pattern that may match at any depth (a search tool's file filter), judged
    by what it could match. The same checks as a command's file arguments
    (secret stores, tcg's own files, guard files). Never raises: an internal
    failure is BLOCK ``internal-error``."""
    try:
        environ = os.environ if env is None else env
        home = environ.get("HOME") or None
        where = os.fspath(cwd) if cwd is not None else None
        ev = _Evaluator(policy, actor, _Rules(policy, environ, home), where, home)
        for who, path, access in accesses:
            if access not in ACCESSES:
                raise ValueError(f"unknown access {access!r}")
            word = Word(_expand_home(path, home), static=True)
            if any(c in path for c in "*?["):
                word = Word(word.value, static=True, glob=True, pattern=word.value, recursive=True)
            ev.check_path(who, word, access, reader=access in (READ, RW))
        return Verdict.combine(ev.reasons)
    except PolicyError as exc:
        return Verdict.combine([Reason("policy-invalid", Decision.BLOCK, _clip(exc.message))])
    except Exception as exc:  # noqa: BLE001 - fail closed: an error must never become ALLOW
        return Verdict.combine(
            [Reason("internal-error", Decision.BLOCK, f"tcg failed while deciding ({type(exc).__name__})")]
        )


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


class _Evaluator:
    def __init__(self, policy: Any, actor: str, rules: _Rules, cwd: str | None, home: str | None) -> None:
        self.policy = policy
        self.actor = actor
        self.rules = rules
        self.cwd = cwd
        self.start_cwd = cwd
        self.home = home
        self.reasons: list[Reason] = []
        self._seen: set[tuple[str, str]] = set()

    def add(self, code: str, detail: str, rule: str | None = None) -> None:
        detail = _clip(detail)
        if (code, detail) in self._seen:
            return
        self._seen.add((code, detail))
        self.reasons.append(Reason(code, self.policy.decision_for(self.actor, code), detail, rule))

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

    def check_path(self, who: str, word: Word, access: str, reader: bool, via: str = "") -> None:
        if word.glob and not word.recursive and self.cwd is not None and word.static:
            matches = _expand_glob(word.pattern or word.value, self.cwd)
            for m in matches:
                self.check_literal(who, m, access, via)
            return
        if word.glob:
            self.check_literal(who, word.value, access, via, dynamic=not word.static)
            if access in (READ, RW) or (access == LIST and self.rules.listing_is_read):
                rep = self.rules.glob_may_match(word.pattern or word.value)
                if rep is not None:
                    self.add(
                        "unresolved-path",
                        f"{who} {via}{_show(word.value)}: the pattern may match a protected file ({rep})",
                        "glob",
                    )
            return
        if word.static:
            self.check_literal(who, word.value, access, via)
            return
        # Partly known: a protected name is still recognisable ("$DIR/.env").
        if self.check_literal(who, word.value, access, via, dynamic=True):
            return
        if _proc_environ(word.value.replace(DYN, "x")):
            return
        if access in (READ, RW) and reader:
            self.add(
                "unresolved-path",
                f"{who} {via}reads {_show(word.value)}{_from(word)}, a path only known at run time",
                "dynamic-path",
            )

    def check_literal(self, who: str, value: str, access: str, via: str, dynamic: bool = False) -> bool:
        """Check one concrete (or partly concrete) path; True when something matched."""
        path = self.resolve(value)
        hit = False
        if _proc_environ(path.replace(DYN, "x")) and access not in (LIST, USE, MODIFY, NONE):
            self.add("credential-dump", f"{who} {via}reads {_show(path)} (a process environment)",
                     "proc-environ")
            hit = True
        if not dynamic:
            hit = self.check_tcg(who, path, access, via) or hit
        store = self.rules.store_match(path)
        if store is not None:
            if access in (READ, RW) or (access == LIST and self.rules.listing_is_read):
                self.add("secret-store-read", f"{who} {via}reads {_show(value)} (protected {store})",
                         "secret-store")
                hit = True
            if access in (WRITE, RW):
                self.add("secret-store-write", f"{who} {via}writes {_show(value)} (protected {store})",
                         "secret-store")
                hit = True
        return hit

    def check_tcg(self, who: str, path: str, access: str, via: str) -> bool:
        writes = access in (WRITE, RW, MODIFY)
        if writes and (_is_claude_settings(path) or any(
            path == rc or _is_under(path, rc) for rc in self.rules.guard_files
        )):
            self.add("guard-tamper", f"{who} {via}changes {_show(path)}, where tcg is wired in", "guard-file")
            return True
        # tcg's own files: only compute their locations when the path could be one
        # (platformdirs costs ~20 ms; without TCG_HOME every tcg dir contains "tcg").
        env = self.rules.env
        if not posixpath.isabs(path) or not (
            "tcg" in path.lower() or env.get("TCG_HOME") or env.get("TCG_POLICY")
        ):
            return False
        roots, key, policies = self.rules.tcg_files()
        if access not in (NONE, LIST) and path == key:
            self.add("self-protection", f"{who} {via}touches tcg's install key {_show(path)}", "tcg-key")
            return True
        if writes and (
            path in policies or any(path == r or _is_under(path, r) or _is_under(r, path) for r in roots)
        ):
            self.add("self-protection", f"{who} {via}writes tcg's own files ({_show(path)})", "tcg-files")
            return True
        return False

    def resolve(self, value: str) -> str:
        path = value
        if not posixpath.isabs(path) and self.cwd is not None and not path.startswith(DYN):
            path = posixpath.join(self.cwd, path)
        return _norm(path) if path else path

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


def _expand_glob(pattern: str, cwd: str) -> list[str]:
    import glob

    try:
        found = glob.glob(pattern, root_dir=cwd)[:1000]
    except (OSError, ValueError):
        return []
    return found


def _is_under(path: str, root: str) -> bool:
    return path.startswith(root.rstrip("/") + "/")


def _is_claude_settings(path: str) -> bool:
    parts = path.split("/")
    return len(parts) >= 2 and parts[-2] == ".claude" and parts[-1] in ("settings.json", "settings.local.json")


def _from(word: Word) -> str:
    """Which variables made a word dynamic (names only, never values)."""
    if word.vars:
        return " (from " + ", ".join("$" + v for v in word.vars[:3]) + ")"
    if word.source == "<stdin>":
        return " (from stdin)"
    return ""


def _show(value: str) -> str:
    text = value.replace(DYN, "…")
    text = "".join(c if c.isprintable() else "?" for c in text)
    return text if len(text) <= 80 else text[:77] + "..."


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_DETAIL else text[: _MAX_DETAIL - 3] + "..."
