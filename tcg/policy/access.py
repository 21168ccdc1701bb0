"""File-access checks: what a path a command or an agent's tool touches may be.

The line engine (tcg.decide.line) runs these on every file argument and
redirection of a parsed command line; an agent's own file tools (Read, Write,
Grep …) name their paths directly and come here through evaluate_access, so a
Read of an ordinary file decides without importing the command-line parser,
the command tables or the credential-dump rules (an agent hook pays its
imports on every tool call). The checks:

- ``secret-store-read`` / ``secret-store-write``: a protected secret store
  (``[secret_stores]``) read, or its contents written;
- ``credential-dump``: ``/proc/*/environ`` read;
- ``self-protection``: writes into tcg's own config/state/cache, the policy
  file, or any access to the install key;
- ``guard-tamper``: changes to where tcg is wired in (shell rc files, agent
  settings).

Every reason's decision comes from ``policy.decision_for(actor, code)``.
"""

from __future__ import annotations

import os
import posixpath

from tcg.errors import PolicyError
from tcg.policy.glob import fnmatchcase
from tcg.policy.model import Decision, Reason, Verdict
from tcg.policy.realpath import real_path
from tcg.policy.words import DYN, Word

TYPE_CHECKING = False  # typing and dataclasses cost import time on every mediated command
if TYPE_CHECKING:
    import re
    from collections.abc import Iterable, Mapping
    from typing import Any

    from tcg.policy.dumprules import DumpRule

# How a command or tool touches a file (tcg.policy.commands classifies words with these).
READ = "read"  # contents reach the command (and maybe its output)
WRITE = "write"  # contents are replaced or appended
RW = "read-write"  # both (sed -i, mv source, ln source)
MODIFY = "modify"  # metadata or removal, contents untouched (rm, chmod, touch)
USE = "use"  # a credential handed to a tool that does not print it (ssh -i)
LIST = "list"  # names only (ls, find)
NONE = "none"  # the word is not a file (echo's text, a remote path)

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


class _Rules:
    """The policy's protection lists (its compiled model) in the shape the checks
    need: home expanded, the shell rc files as the default guard files."""

    def __init__(self, policy: Any, env: Mapping[str, str], home: str | None) -> None:
        model = policy.model
        self.stores = model.secret_stores.for_home(home)
        self.basenames = self.stores.basenames
        self.segments = self.stores.segments
        self.allow_basenames = self.stores.allow_basenames
        self.paths = self.stores.paths
        self.listing_is_read = self.stores.listing_is_read
        self.store_match = self.stores.match
        self._policy = policy
        self._dumps: tuple[DumpRule, ...] | None = None
        self.secret_vars = model.secret_vars.names
        self.secret_vars_allow = model.secret_vars.allow_names
        self.guard_env = model.guard.env
        self.guard_env_allow = model.guard.allow_env
        files = model.guard.files or SHELL_RC
        self.guard_files = tuple(posixpath.normpath(_expand_home(f, home)) for f in files)
        self.env = env
        self._tcg: tuple[tuple[str, ...], str, tuple[str, ...]] | None = None
        self.representatives = tuple(_representative(p) for p in self.basenames) + self.segments

    @property
    def dumps(self) -> tuple[DumpRule, ...]:
        """``[[credential_dumps]]``, compiled on first use (the sandbox view never needs them)."""
        if self._dumps is None:
            from tcg.policy.dumprules import compile_dump_rules

            self._dumps = compile_dump_rules(
                dict(entry) for entry in self._policy.model.identity.credential_dumps)
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
        ev = PathChecks(policy, actor, _Rules(policy, environ, home), where, home)
        real_home = real_path(home) if home else None
        for who, path, access in accesses:
            if access not in ACCESSES:
                raise ValueError(f"unknown access {access!r}")
            if "\x00" in path:
                ev.add("unresolved-path", f"{who} names {_show(path)}: a path holding NUL names no file", "nul-path")
                continue
            given = _expand_home(path, home)
            pattern = any(c in path for c in "*?[")
            # judged as written and where it leads: a store, guard file or tcg's own
            # file on either side refuses, with the reason the direct path gets. Where
            # it leads is asked twice: of the path cleaned up as text, and of the path
            # as the kernel walks it (``link/..`` is the parent of the link's target,
            # not the directory holding the link)
            walked = given if posixpath.isabs(given) or where is None else posixpath.join(where, given)
            leads = sorted({t for t in (_leads_to(ev.resolve(given), pattern, home, real_home),
                                        _leads_to(walked, pattern, home, real_home)) if t is not None})
            for value, via in ((given, ""), *((t, f"through {_show(given)} ") for t in leads)):
                if value is not None:
                    word = Word(value, static=True, glob=pattern, pattern=value if pattern else None,
                                recursive=pattern)
                    ev.check_path(who, word, access, reader=access in (READ, RW), via=via)
        return Verdict.combine(ev.reasons)
    except PolicyError as exc:
        return Verdict.combine([Reason("policy-invalid", Decision.BLOCK, _clip(exc.message))])
    except Exception as exc:  # noqa: BLE001 - fail closed: an error must never become ALLOW
        return Verdict.combine(
            [Reason("internal-error", Decision.BLOCK, f"tcg failed while deciding ({type(exc).__name__})")]
        )


def _leads_to(path: str, pattern: bool, home: str | None, real_home: str | None) -> str | None:
    """Where an absolute ``path`` leads when that differs from ``path`` (a symlink on
    the way: the file, a parent directory, a chain, a dangling link's target); for a
    pattern, where its literal directories lead. A path under the real home is
    written under ``home`` again, so ``~/…`` stores and guard files still match
    when the home directory itself is reached through a link."""
    if not posixpath.isabs(path):
        return None
    parts = path.split("/")
    cut = next((i for i, p in enumerate(parts) if any(c in p for c in "*?[")), len(parts)) if pattern else len(parts)
    real = real_path("/".join(parts[:cut]) or "/")
    if real is None:
        return None
    real = posixpath.join(real, *parts[cut:])
    if home and real_home and real_home != home and (real == real_home or real.startswith(real_home + "/")):
        real = home + real[len(real_home):]
    return None if real == path else real


class PathChecks:
    """The checks one path gets (a command's file argument, a redirection's target, a
    tool's file): tcg's own files and guard files, a process environment, secret
    stores. Reasons collect in ``reasons``, one per (code, detail)."""

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


def _show(value: str) -> str:
    text = value.replace(DYN, "…")
    text = "".join(c if c.isprintable() else "?" for c in text)
    return text if len(text) <= 80 else text[:77] + "..."


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_DETAIL else text[: _MAX_DETAIL - 3] + "..."


def _from(word: Word) -> str:
    """Which variables made a word dynamic (names only, never values)."""
    if word.vars:
        return " (from " + ", ".join("$" + v for v in word.vars[:3]) + ")"
    if word.source == "<stdin>":
        return " (from stdin)"
    return ""
