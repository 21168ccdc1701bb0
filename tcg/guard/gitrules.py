"""Git commands through the delete-guard's eyes (see tcg.guard.rules).

- SNAPSHOT (``git-snapshot``) first: ``reset --hard|--merge``, ``checkout -- …``
  / ``checkout -f`` / ``checkout .``, ``restore`` (of the working tree),
  ``switch -f|--discard-changes``, ``rm`` (not ``--cached``), ``stash
  drop|clear``, ``branch -D``, ``tag -d``. On a clean tree a working-tree
  snapshot has nothing to keep: ALLOW ``nothing-to-snapshot``.
- RELOCATE: ``clean -f`` — exactly what ``git ls-files`` enumerates (``-z``:
  names with newlines are fine).
- BLOCK ``git-push-rewrite``: ``push --force|-f|--mirror|--delete|-d|--prune``,
  ``+ref``, ``:ref``; ASK ``git-push-lease`` for ``--force-with-lease``.
- BLOCK ``git-history-destroy``: ``reflog expire|delete``, ``gc --prune=now|all``,
  ``prune``, ``update-ref -d|--stdin``, ``filter-branch``, ``filter-repo``,
  ``worktree remove --force``.
- outbound: ``commit -m|-F`` messages and ``push`` payloads are scanned
  (tcg.guard.channels): a secret there is decided by its channel (BLOCK).
"""

from __future__ import annotations

import os

from tcg.guard.plan import GitClean, GitSnap

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from tcg.guard.rules import _Review
    from tcg.policy.cmdline import SimpleCommand, Word

# git's own options that take a value as the next word
_GLOBAL_VALUE = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path",
                           "--config-env", "--super-prefix", "--list-cmds"})
_REPO_VARS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR",
              "GIT_NAMESPACE")
READ_ONLY = frozenset({"status", "log", "diff", "show", "rev-parse", "ls-files", "ls-tree", "cat-file",
                       "describe", "blame", "grep", "shortlog", "reflog-show", "rev-list", "help", "version"})


class _Git:
    """One git command split into repository context, subcommand and its words."""

    def __init__(self, rv: _Review, cmd: SimpleCommand) -> None:
        self.rv = rv
        self.cmd = cmd
        self.options: list[str] = []
        self.env: list[tuple[str, str]] = []
        self.dynamic: str | None = None
        self.sub = ""
        self.args: list[Word] = []
        for a in cmd.assignments:
            if a.name in _REPO_VARS:
                if a.value is None or not a.value.is_literal:
                    self.dynamic = f"{a.name} is only known at run time"
                else:
                    self.env.append((a.name, a.value.value))
        words = list(cmd.args)
        i = 0
        while i < len(words) and words[i].value.startswith("-"):
            w = words[i]
            opt = w.value.split("=", 1)[0]
            takes = opt in _GLOBAL_VALUE and "=" not in w.value
            value = words[i + 1] if takes and i + 1 < len(words) else None
            if opt in ("-C", "--git-dir", "--work-tree", "--namespace"):
                if not w.is_literal or (value is not None and not value.is_literal):
                    self.dynamic = f"{opt} is only known at run time"
                else:
                    self.options.append(w.value)
                    if value is not None:
                        self.options.append(value.value)
            i += 2 if takes else 1
        if i < len(words):
            self.sub = words[i].value
            self.args = words[i + 1 :]
        self.vals = [w.value for w in self.args]

    @property
    def cwd(self) -> str | None:
        return self.rv.cwd

    def has(self, *flags: str) -> bool:
        for v in self.vals:
            if v == "--":
                return False
            if v in flags or any(f.startswith("--") and v.startswith(f + "=") for f in flags):
                return True
            if v.startswith("-") and not v.startswith("--"):
                if any(len(f) == 2 and f[0] == "-" and f[1] in v[1:] for f in flags if not f.startswith("--")):
                    return True
        return False

    def positionals(self, value_options: frozenset[str] = frozenset()) -> list[Word]:
        out = []
        i = 0
        after = False
        while i < len(self.args):
            w = self.args[i]
            if not after and w.value == "--":
                after = True
            elif not after and w.value.startswith("-") and len(w.value) > 1:
                if w.value in value_options:
                    i += 1
            else:
                out.append(w)
            i += 1
        return out

    def after_dashdash(self) -> list[Word]:
        for i, w in enumerate(self.args):
            if w.value == "--":
                return self.args[i + 1 :]
        return []

    def snap(self, kind: str, names: tuple[str, ...] | None = ()) -> GitSnap | None:
        if self.cwd is None:
            return None
        return GitSnap(tuple(self.options), tuple(self.env), self.cwd, kind, names)

    def where(self) -> str:
        from tcg.guard.wording import show

        return "git " + " ".join(show(w.value) for w in self.cmd.args)


def review_git(rv: _Review, cmd: SimpleCommand) -> str:
    g = _Git(rv, cmd)
    sub = g.sub
    if sub in READ_ONLY or (sub == "branch" and not g.has("-D", "-d", "--delete", "-M", "-m", "-C", "-c", "-f")):
        return "pure"
    if sub in ("stash",) and (not g.vals or g.vals[0] in ("list", "show")):
        return "impure" if not g.vals else "pure"
    if sub == "push":
        _push(rv, g)
        return "impure"
    if sub == "commit":
        _commit_message(rv, g)
        return "impure"
    destroy = _history_destroyer(g)
    if destroy is not None:
        rv.add("git-history-destroy", f"{g.where()}: {destroy}", "git-unrecoverable")
        return "impure"
    snapshot = _snapshot_kind(g)
    if snapshot is None and not (sub == "clean" and _clean_forced(g)):
        return "impure"
    if g.dynamic is not None:
        rv.add("delete-dynamic-target", f"{g.where()}: {g.dynamic}", "git-dynamic-repo")
        return "delete"
    if sub == "clean":
        _clean(rv, g)
        return "delete"
    kind, names = snapshot  # type: ignore[misc]
    rv.compound_check(g.where())
    action = g.snap(kind, names)
    if kind == "worktree" and rv.start is not None and action is not None:
        from tcg.guard.gitsnap import GitContext, worktree_changes

        changed = worktree_changes(GitContext(action.cwd, action.options, dict(action.env)))
        if changed is False:
            rv.add("nothing-to-snapshot", f"{g.where()}: the index and working tree match HEAD", "git-clean-tree")
            return "delete"
    rv.add("git-snapshot", f"{g.where()}: saved under refs/tcg/ first", f"git-{sub}",
           (action,) if action is not None else None)
    return "delete"


def _snapshot_kind(g: _Git) -> tuple[str, tuple[str, ...] | None] | None:
    sub = g.sub
    if sub == "reset" and g.has("--hard", "--merge"):
        return ("worktree", ())
    if sub == "checkout":
        if g.has("-b", "-B", "--orphan"):
            return None
        if g.has("-f", "--force", "--ours", "--theirs", "--merge", "-m", "-p", "--patch") or g.after_dashdash():
            return ("worktree", ())
        pos = g.positionals(frozenset({"--conflict", "--pathspec-from-file"}))
        if any(w.value == "." for w in pos) or (len(pos) > 1):
            return ("worktree", ())
        if len(pos) == 1 and g.cwd is not None and g.rv.start is not None and pos[0].static \
                and os.path.lexists(os.path.join(g.cwd, pos[0].value)):
            return ("worktree", ())  # `git checkout file`: a path, not a branch
        return None
    if sub == "restore":
        staged_only = g.has("--staged", "-S") and not g.has("--worktree", "-W")
        return None if staged_only else ("worktree", ())
    if sub == "switch" and g.has("-f", "--force", "--discard-changes"):
        return ("worktree", ())
    if sub == "rm" and not g.has("--cached"):
        return ("worktree", ())
    if sub == "stash" and g.vals and g.vals[0] == "drop":
        rest = [v for v in g.vals[1:] if not v.startswith("-")]
        return ("stash", tuple(rest or ["stash@{0}"]))
    if sub == "stash" and g.vals and g.vals[0] == "clear":
        return ("stash", None)
    if sub == "branch" and (g.has("-D") or (g.has("-d", "--delete") and g.has("-f", "--force"))):
        return ("branch", tuple(w.value for w in g.positionals() if w.static))
    if sub == "tag" and g.has("-d", "--delete"):
        return ("tag", tuple(w.value for w in g.positionals() if w.static))
    return None


def _history_destroyer(g: _Git) -> str | None:
    sub, vals = g.sub, g.vals
    if sub == "reflog" and vals and vals[0] in ("expire", "delete"):
        return f"reflog {vals[0]} removes the record git recovers lost commits from"
    if sub == "gc" and any(v in ("--prune=now", "--prune=all") for v in vals):
        return "prunes unreachable commits now, with no grace period"
    if sub == "prune":
        return "deletes unreachable objects"
    if sub == "update-ref" and any(v in ("-d", "--stdin") for v in vals):
        return "deletes a ref outside git's safety nets"
    if sub in ("filter-branch", "filter-repo"):
        return "rewrites history; the old commits survive only until the next gc"
    if sub == "worktree" and vals and vals[0] == "remove" and g.has("-f", "--force"):
        return "discards the worktree's uncommitted changes"
    return None


def _clean_forced(g: _Git) -> bool:
    if g.has("-n", "--dry-run"):
        return False
    return g.has("-f", "--force", "-i", "--interactive")


def _clean(rv: _Review, g: _Git) -> None:
    if g.cwd is None:
        return
    flags = []
    if g.has("-d"):
        flags.append("-d")
    if g.has("-x"):
        flags.append("-x")
    if g.has("-X"):
        flags.append("-X")
    if sum(v.count("f") for v in g.vals if v.startswith("-") and not v.startswith("--")) + \
            g.vals.count("--force") >= 2:
        flags.append("-ff")
    excludes: list[str] = []
    for i, v in enumerate(g.vals):
        if v in ("-e", "--exclude") and i + 1 < len(g.vals):
            excludes.append(g.vals[i + 1])
        elif v.startswith("--exclude="):
            excludes.append(v.split("=", 1)[1])
        elif v.startswith("-e") and len(v) > 2 and not v.startswith("--"):
            excludes.append(v[2:])
    flags += [f"--exclude={e}" for e in excludes]
    paths = g.positionals(frozenset({"-e", "--exclude"}))
    for w in paths:
        if not w.static:
            rv.add("delete-dynamic-target", f"{g.where()}: {w.value!r} is only known at run time", "git-dynamic")
            return
    rv.compound_check(g.where())
    rv.relocate(g.where(), [GitClean(tuple(g.options), tuple(g.env), g.cwd, tuple(flags),
                                      tuple(w.value for w in paths))])


def _push(rv: _Review, g: _Git) -> None:
    where = g.where()
    pos = g.positionals(frozenset({"--repo", "-o", "--push-option", "--receive-pack", "--exec"}))
    refspecs = [w.value for w in pos[1:]]
    if g.has("--force", "-f", "--mirror", "--delete", "-d", "--prune") \
            or any(r.startswith("+") or r.startswith(":") for r in refspecs):
        rv.add("git-push-rewrite", f"{where}: rewrites or deletes history on the remote", "git-push-force")
        return
    if g.has("--force-with-lease", "--force-if-includes"):
        rv.add("git-push-lease", f"{where}: overwrites the remote branch if it is where you last saw it",
               "git-push-lease")
    if g.dynamic is not None or g.cwd is None or rv.start is None:
        return
    if any(not w.static for w in pos):
        return
    from tcg.guard.outbound import push_findings

    remote = pos[0].value if pos else None
    found, problem = push_findings(g.cwd, g.options, dict(g.env), remote, refspecs, g.has("--all", "--branches"),
                                   g.has("--tags"), rv.policy)
    if problem is not None:
        rv.add("push-unscannable", f"{where}: {problem}", "git-push-scan")
    for detail, rule in found:
        rv.add_channel("git-push-payload", f"{where}: {detail}", rule)


def _commit_message(rv: _Review, g: _Git) -> None:
    parts: list[str] = []
    i = 0
    vals = g.vals
    while i < len(vals):
        v = vals[i]
        w = g.args[i]
        if v in ("-m", "--message", "-F", "--file") and i + 1 < len(vals):
            nxt = g.args[i + 1]
            if v in ("-m", "--message"):
                parts.append(nxt.value)
            else:
                parts.append(_read_message(rv, nxt.value))
            i += 2
            continue
        if v.startswith("--message="):
            parts.append(v.split("=", 1)[1])
        elif v.startswith("--file="):
            parts.append(_read_message(rv, v.split("=", 1)[1]))
        elif v.startswith("-m") and len(v) > 2 and not v.startswith("--"):
            parts.append(v[2:])
        elif v.startswith("-F") and len(v) > 2 and not v.startswith("--"):
            parts.append(_read_message(rv, v[2:]))
        del w
        i += 1
    message = "\n\n".join(p for p in parts if p)
    if not message:
        return
    from tcg.guard.channels import decide

    verdict = decide("git-commit-message", message, rv.policy)
    for span in verdict.spans:
        rv.add_channel("git-commit-message", f"{g.where()[:40]}…: the commit message holds a secret "
                       f"({span.rule})", span.rule)


def _read_message(rv: _Review, name: str) -> str:
    if name == "-" or rv.start is None:
        return ""
    path = rv.resolve(name)
    if path is None:
        return ""
    try:
        with open(path, "rb") as fh:
            return fh.read(1 << 20).decode("utf-8", "replace")
    except OSError:
        return ""


def describe_git(entry: dict[str, Any]) -> str:
    kind = entry.get("kind")
    return f"{kind} {entry.get('name') or ''}".strip()
