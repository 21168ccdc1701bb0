"""The delete-guard's view of a command line: which commands destroy data, and
what must be saved before the line runs.

Called by the line engine once a line is parsed (tcg.decide.line), with
the same parse, working directory and per-actor decisions. It adds reasons:

- ``delete-relocate`` (RELOCATE): ``rm``/``rmdir``/``unlink``, ``find -delete``
  and ``-exec rm``, ``xargs rm`` after ``find``, ``git clean -f``, an
  interpreter one-liner deleting literal paths, ``mv`` over an existing file —
  the targets move into the trash first, a placeholder takes their place;
- ``overwrite-snapshot`` (SNAPSHOT): ``> file``, ``: > file``, ``truncate``,
  ``shred``, ``dd of=``, ``cp``/``tee``/``sed -i``/``curl -o`` over an existing
  file — a copy is kept first (tcg.guard.copies);
- refusals where that cannot be done safely: ``delete-dynamic-target``,
  ``delete-glob``, ``delete-protected-target``, ``delete-opaque``,
  ``overwrite-device`` (BLOCK), ``delete-compound``, ``snapshot-too-large``,
  ``unsaved-secret`` (ASK: tcg keeps no copy of a secret), ``trash-cross-device`` (BLOCK);
- git forms (tcg.guard.gitrules) and tcg's own commands an agent may not run
  (``self-approval``).

Why a line with other commands before a delete is ASK: the targets are moved
before the line starts, so an earlier ``cat f``, ``cp f g``, ``make`` or
``git add`` would meet the placeholder instead of the data. Run the delete on
a line of its own and it is simply relocated.
"""

from __future__ import annotations

import os
import posixpath

from tcg.guard.findexpr import DELETERS, enumeration, find_roots, full_argv
from tcg.guard.plan import FindDelete, Move
from tcg.guard.wording import from_vars, show
from tcg.policy.cmdline import DYN, Word
from tcg.policy.model import Reason

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from tcg.policy.cmdline import ParsedLine, SimpleCommand

# Commands that change nothing and read no file contents: they may run before a
# delete on the same line (test sees the placeholder exactly as it would the original).
PURE = frozenset({
    "echo", "printf", "print", "true", "false", ":", "pwd", "test", "[", "[[", "ls", "which", "type",
    "sleep", "date", "whoami", "id", "hostname", "uname", "exit", "return", "set",
    "export", "unset", "declare", "typeset", "local", "readonly", "alias", "shopt",
})
GIT_PURE = frozenset({"status", "log", "diff", "show", "rev-parse", "ls-files", "branch-list", "remote",
                      "config-get", "describe"})
TOP_LEVEL = frozenset({"bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32", "media",
                       "mnt", "opt", "proc", "root", "run", "sbin", "srv", "sys", "tmp", "usr", "var",
                       "Users", "Applications", "Library", "System", "Volumes", "private"})
# Interpreter calls that delete their (first) argument.
_DELETE_CALLS = (
    r"shutil\.rmtree|os\.(?:remove|unlink|rmdir|removedirs)|Path\([^()]*\)\.(?:unlink|rmdir)"
    r"|fs(?:\.promises)?\.(?:rmSync|rm|unlinkSync|unlink|rmdirSync|rmdir)|FileUtils\.(?:rm_rf|rm_r|rm|remove_dir|"
    r"remove_entry|rmtree)|File\.(?:delete|unlink)|Dir\.(?:delete|rmdir|unlink)|\bunlink|\brmtree|\brmdir"
    r"|Deno\.remove(?:Sync)?"
)
_INTERPRETER_CODE = {
    "python": ("-c",), "python3": ("-c",), "python2": ("-c",), "pypy": ("-c",), "pypy3": ("-c",),
    "node": ("-e", "--eval", "-p", "--print"), "bun": ("-e", "--eval"), "deno": ("eval",),
    "ruby": ("-e",), "php": ("-r",), "perl": ("-e", "-E"),
}


def review(ev: Any, parsed: ParsedLine, line: str) -> None:
    """Add the guard's reasons for ``parsed`` to the engine's evaluator ``ev``."""
    _Review(ev, line).run(parsed)


class _Review:
    def __init__(self, ev: Any, line: str) -> None:
        self.ev = ev
        self.policy = ev.policy
        self.actor = ev.actor
        self.home = ev.home
        self.start = ev.start_cwd
        self.cwd = ev.start_cwd
        self.line = line
        self.earlier: str | None = None  # the first command before a delete that is not PURE
        self.background = _backgrounds(line)
        self.pending_find: SimpleCommand | None = None  # the rm a following find -exec feeds
        self.prev: SimpleCommand | None = None  # the command before this one
        self._trash_dev: int | None | bool = False
        self._seen: set[tuple[str, str]] = set()

    # ------------------------------------------------------------- reasons

    def add(self, code: str, detail: str, rule: str | None = None, action: tuple[Any, ...] | None = None) -> None:
        from tcg.policy.access import _clip

        detail = _clip(detail)
        if (code, detail) in self._seen:
            return
        self._seen.add((code, detail))
        self.ev.reasons.append(Reason(code, self.policy.decision_for(self.actor, code), detail, rule, action))

    def add_channel(self, channel: str, detail: str, rule: str | None) -> None:
        """A secret bound for an outbound channel: decided by the channel, not the actor."""
        from tcg.guard.channels import channel_decision
        from tcg.policy.access import _clip
        from tcg.policy.model import Decision

        detail = _clip(detail)
        if ("outbound-secret", detail) in self._seen:
            return
        self._seen.add(("outbound-secret", detail))
        decision = channel_decision(channel, self.policy) or Decision.BLOCK
        self.ev.reasons.append(Reason("outbound-secret", decision, detail, rule))

    # ------------------------------------------------------------- walking

    def run(self, parsed: ParsedLine) -> None:
        attached: set[int] = set()
        try:
            for cmd in parsed.commands:
                attached.update(id(r) for r in cmd.redirects)
                self.command(cmd)
            for red in parsed.redirects:
                if id(red) not in attached:
                    from tcg.guard.copies import redirect

                    redirect(self, red, None)
        finally:
            self.ev.cwd = self.start

    def command(self, cmd: SimpleCommand) -> None:
        name = cmd.name
        effect = "impure"
        if cmd.opaque or (cmd.argv and name is None):
            self.dynamic(cmd)
        elif name is None:
            effect = "pure"  # assignments only
        elif "find -exec" in cmd.wrappers and name in DELETERS:
            self.pending_find = cmd
            effect = "delete"
        elif name in DELETERS:
            effect = self.rm(cmd, name)
        elif name == "find":
            effect = self.find(cmd)
        elif name == "git":
            from tcg.guard.gitrules import review_git

            effect = review_git(self, cmd)
        elif name in ("tcg", "tcg_shell"):
            self.tcg(cmd)
        elif name == "mv":
            effect = self.mv(cmd)
        elif name in _INTERPRETER_CODE:
            effect = self.interpreter(cmd, name)
        elif name == "rsync":
            self.rsync(cmd)
        if name in ("shred", "truncate", "dd", "cp", "install", "ln", "tee", "sed", "perl", "curl", "wget"):
            from tcg.guard.copies import overwrites

            overwrites(self, cmd, name)
        if cmd.redirects:
            from tcg.guard.copies import redirect

            for red in cmd.redirects:
                if redirect(self, red, cmd):
                    effect = "impure"
        self.prev = cmd
        if name == "cd":
            self.ev.cwd = self.cwd
            self.ev.track_cd(cmd)
            self.cwd = self.ev.cwd
        if effect == "impure" and (name is None or name not in PURE) and self.earlier is None and cmd.argv:
            self.earlier = name or "a command known only at run time"

    # ------------------------------------------------------------- paths

    def resolve(self, value: str) -> str | None:
        """Absolute, normalised; None when the working directory is unknown here."""
        from tcg.policy.access import _norm

        if posixpath.isabs(value):
            return _norm(value)
        if self.cwd is None:
            # no working directory at all (the engine judges text only): keep it relative
            return _norm(value) if self.start is None else None
        return _norm(posixpath.join(self.cwd, value))

    def protected(self, path: str) -> str | None:
        """Why deleting ``path`` is never allowed, or None."""
        if path == "/":
            return "the filesystem root"
        if path == "." or path == ".." or (path.startswith("../") and set(path.split("/")) == {".."}):
            return "the working directory or one above it"
        if self.home and path == _strip(self.home):
            return "your home directory"
        cwd = self.cwd  # after a cd on the line, the directory it changed to (delete-compound says the rest)
        if cwd is not None and (cwd == path or cwd.startswith(path.rstrip("/") + "/")):
            return "the working directory or one above it"
        parts = path.strip("/").split("/")
        if len(parts) == 1 and parts[0] in TOP_LEVEL:
            return "a top-level system directory"
        if self.start is not None and os.path.ismount(path):
            return "a mount point"
        return None

    def trash_dev(self) -> int | None:
        if self._trash_dev is False:
            from tcg.guard.trash import Trash, trash_root

            self._trash_dev = Trash(trash_root(self.ev.rules.env), b"").device()
        return self._trash_dev  # type: ignore[return-value]

    def too_far(self, path: str) -> str | None:
        """A delete target on another filesystem than the trash, larger than the
        copy budget: it could not be kept (decided here, so `tcg check` says so)."""
        try:
            dev = os.lstat(path).st_dev
        except OSError:
            return None
        tdev = self.trash_dev()
        if tdev is None or dev == tdev:
            return None
        from tcg.guard import fsops
        from tcg.guard.trash import copy_budget

        budget = copy_budget(self.policy)
        size = fsops.tree_bytes(path, budget)
        if size > budget:
            return f"{show(path)} is on another filesystem and over the copy budget"
        from tcg.guard.copies import refuse_copying_secrets

        refuse_copying_secrets(self, f"rm {show(path)}", [path])
        return None

    # ------------------------------------------------------------- deletes

    def rm(self, cmd: SimpleCommand, name: str) -> str:
        recursive = False
        dirs = name == "rmdir"
        targets: list[Word] = []
        options_done = False
        for w in cmd.args:
            v = w.value
            if not options_done and w.is_literal and v == "--":
                options_done = True
                continue
            if not options_done and w.is_literal and v.startswith("-") and len(v) > 1 and name != "unlink":
                if v.startswith("--"):
                    recursive = recursive or v == "--recursive"
                    dirs = dirs or v == "--dir"
                else:
                    recursive = recursive or "r" in v or "R" in v
                    dirs = dirs or "d" in v
                continue
            targets.append(w)
        where = f"{name} {' '.join(show(w.value) for w in cmd.args)}".strip()
        moves: list[Any] = []
        fed_by_find = False
        for w in targets:
            if w.source in ("{}", "<stdin>"):
                upstream = self.prev
                if (w.source == "{}" and "xargs" in cmd.wrappers and upstream is not None
                        and upstream.name == "find"):
                    fed_by_find = True
                else:
                    self.add("delete-dynamic-target", f"{where}: the files come from another command's output",
                             "delete-stdin")
                continue
            path = self.check_target(where, w)
            if path is None:
                continue
            if w.value.endswith(("/", "/.")) and os.path.islink(path):
                # `rm -rf link/` follows the link and empties the directory it points to
                self.add("delete-opaque", f"{where}: {show(w.value)} follows a symlink into another directory",
                         "delete-through-symlink")
                continue
            move = self.existing(where, path, recursive=recursive, dirs_only_empty=dirs and not recursive,
                                 name=name)
            if move is not None:
                moves.append(move)
        if fed_by_find and self.prev is not None:
            self.find(self.prev, from_xargs=True)
        if moves:
            self.relocate(where, moves)
        return "delete"

    def check_target(self, where: str, w: Word) -> str | None:
        """The resolved path of one delete target, or None after adding the refusal."""
        if not w.static:
            self.add("delete-dynamic-target", f"{where}: {show(w.value)} is only known at run time{from_vars(w)}",
                     "delete-dynamic")
            return None
        if w.glob:
            self.add("delete-glob", f"{where}: the pattern {show(w.value)} is expanded only when it runs",
                     "delete-glob")
            return None
        path = self.resolve(w.value)
        if path is None:
            self.add("delete-compound", f"{where}: runs after a cd to a directory known only at run time",
                     "delete-after-cd")
            return None
        why = self.protected(path)
        if why is not None:
            self.add("delete-protected-target", f"{where}: {show(w.value)} is {why}", "delete-protected")
            return None
        return path

    def existing(self, where: str, path: str, *, recursive: bool, dirs_only_empty: bool, name: str) -> Move | None:
        """The Move for ``path`` if the command would delete something there."""
        if self.start is None:
            return Move(path)  # no filesystem view: decide on the text alone
        try:
            st = os.lstat(path)
        except OSError:
            if self.earlier is not None:
                self.add("delete-compound", f"{where}: {show(path)} does not exist yet; an earlier command "
                         f"on the line ({self.earlier}) may create it", "delete-created")
            return None
        import stat as st_mod

        if st_mod.S_ISDIR(st.st_mode):
            if name == "unlink":
                return None
            if not recursive:
                if not dirs_only_empty:
                    return None  # rm without -r refuses a directory
                try:
                    if os.listdir(path):
                        return None  # rmdir refuses a non-empty one
                except OSError:
                    return None
        self.compound_check(where)
        far = self.too_far(path)
        if far is not None:
            self.add("trash-cross-device", f"{where}: {far}", "trash-copy-budget")
            return None
        return Move(path)

    def compound_check(self, where: str) -> None:
        if self.cwd != self.start:
            self.add("delete-compound", f"{where}: runs after a cd on the same line", "delete-after-cd")
        elif self.earlier is not None:
            self.add("delete-compound", f"{where}: runs after {self.earlier} on the same line", "delete-after-command")
        if self.background:
            self.add("delete-compound", f"{where}: the line runs something in the background", "delete-background")

    def relocate(self, where: str, actions: list[Any]) -> None:
        self.add("delete-relocate", f"{where}: moved to the trash first", "delete-relocate", tuple(actions))

    # ------------------------------------------------------------- find

    def find(self, cmd: SimpleCommand, from_xargs: bool = False) -> str:
        """``find … -delete`` / ``-exec rm {} ;`` / ``find … | xargs rm``."""
        deleting_rm = self.pending_find
        full = full_argv(cmd)
        if full is None:
            self.add("delete-opaque", "find: the command could not be read back", "find-opaque")
            return "impure"
        has_delete = "-delete" in full
        if not has_delete and deleting_rm is None and not from_xargs:
            return "pure" if not any(a in ("-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fls", "-fprint0",
                                           "-fprintf") for a in full) else "impure"
        self.pending_find = None
        where = "find " + " ".join(show(a) for a in full[1:])
        argv, problem = enumeration(full, deleting_rm is not None, from_xargs)
        if problem is not None:
            self.add("delete-opaque", f"{where}: {problem}", "find-opaque")
            return "delete"
        roots = find_roots(cmd)
        for w in roots:
            if not w.static or w.glob:
                self.add("delete-dynamic-target", f"{where}: the start directory {show(w.value)} is only known "
                         "at run time", "delete-dynamic")
                return "delete"
            path = self.resolve(w.value)
            if path is None:
                self.add("delete-compound", f"{where}: runs after a cd to a directory known only at run time",
                         "delete-after-cd")
                return "delete"
            if path == "/" or (self.home and path == _strip(self.home)) or (
                    self.start is not None and path != self.start and self.start.startswith(path.rstrip("/") + "/")):
                self.add("delete-protected-target", f"{where}: deletes under {show(path)}", "delete-protected")
                return "delete"
        if self.cwd is None:
            return "delete"
        self.compound_check(where)
        self.relocate(where, [FindDelete(tuple(argv), self.cwd)])
        return "delete"

    # ------------------------------------------------------------- other destroyers

    def mv(self, cmd: SimpleCommand) -> str:
        from tcg.policy.commands import WRITE, classify

        vals = [w.value for w in cmd.args if w.is_literal]
        if any(v in ("-n", "--no-clobber", "-i", "--interactive") or (v.startswith("-") and not v.startswith("--")
               and "n" in v[1:]) for v in vals):
            return "impure"
        words = classify(cmd, "mv")
        dest = [w for w, access in words if access == WRITE]
        srcs = [w for w, access in words if access != WRITE]
        if not dest:
            return "impure"
        d = dest[-1]
        if not d.static:
            return "impure"
        path = self.resolve(d.value)
        if path is None:
            return "impure"
        where = "mv " + " ".join(show(w.value) for w in cmd.args)
        if path.startswith("/dev/") and not path.startswith("/dev/shm/"):
            self.add("overwrite-device", f"{where}: moves data onto the device {show(path)}", "mv-device")
            return "impure"
        if self.start is None:
            return "impure"
        targets = []
        if os.path.isdir(path) and not os.path.islink(path):
            for s in srcs:
                if s.static and not s.glob:
                    targets.append(posixpath.join(path, posixpath.basename(s.value.rstrip("/"))))
        else:
            targets.append(path)
        moves = []
        for t in targets:
            if os.path.lexists(t) and not os.path.isdir(t):
                self.compound_check(where)
                moves.append(Move(t))
        if moves:
            self.relocate(where, moves)
            return "delete"
        return "impure"

    def interpreter(self, cmd: SimpleCommand, name: str) -> str:
        """``python -c 'shutil.rmtree("build")'``: literal paths are relocated;
        anything computed is refused."""
        import re

        opts = _INTERPRETER_CODE[name]
        codes = [cmd.args[i + 1] for i, w in enumerate(cmd.args[:-1]) if w.value in opts]
        codes += [Word(w.value[2:], w.static) for w in cmd.args
                  if w.value[:2] in opts and len(w.value) > 2 and w.value.startswith("-")]
        for r in cmd.redirects:
            if r.op in ("<<", "<<-", "<<<") and r.body is not None:
                codes.append(r.body)
        effect = "impure"
        for code in codes:
            text = code.value
            for m in re.finditer(rf"(?:{_DELETE_CALLS})\s*\(", text):
                where = f"{name}: {show(text[m.start():m.end() + 40])}"
                arg = re.match(r"\s*(?:r|b|u|rb|br)?(['\"])([^'\"\\]*)\1\s*[,)]", text[m.end():])
                before = text[max(0, m.start() - 40):m.start()]
                path_call = re.search(r"Path\(\s*(['\"])([^'\"\\]*)\1\s*\)\.\w*$", text[m.start():m.end() - 1])
                literal = path_call.group(2) if path_call else (arg.group(2) if arg else None)
                if literal is None or not code.static or DYN in literal:
                    del before
                    self.add("delete-opaque", f"{where}: deletes a path computed at run time", "interpreter-delete")
                    continue
                path = self.check_target(where, Word(os.path.expanduser(literal) if literal.startswith("~")
                                                     and self.home else literal))
                if path is None:
                    continue
                move = self.existing(where, path, recursive=True, dirs_only_empty=False, name="rm")
                if move is not None:
                    self.relocate(where, [move])
                effect = "delete"
        return effect

    def rsync(self, cmd: SimpleCommand) -> None:
        vals = [w.value for w in cmd.args]
        if any(v.startswith(("--delete", "--del", "--remove-source-files")) for v in vals):
            where = "rsync " + " ".join(show(v) for v in vals)
            self.add("delete-opaque", f"{where}: what it deletes is decided while it runs", "rsync-delete")

    def dynamic(self, cmd: SimpleCommand) -> None:
        """A command tcg cannot see (``$(echo rm) -rf /``, ``eval "$X"``): when its
        arguments aim at what a delete must never reach, refuse it for everyone."""
        for w in cmd.args if cmd.argv and not cmd.opaque else cmd.argv[1:]:
            if not w.static or w.glob:
                continue
            path = self.resolve(w.value)
            if path is not None and (path == "/" or (self.home and path == _strip(self.home))):
                what = cmd.opaque or "a command whose name is known only at run time"
                self.add("delete-opaque", f"{what}, aimed at {show(w.value)}", "opaque-destroyer")
                return

    def tcg(self, cmd: SimpleCommand) -> None:
        """The agent must not approve its own requests or empty the trash."""
        args = [w.value for w in cmd.args]
        if cmd.name == "tcg_shell" or not args:
            return
        sub = args[0]
        if sub == "approve" or (sub == "gc" and "--apply" in args) or (sub == "trash" and "--purge" in args):
            self.add("self-approval", f"tcg {sub}: only a person at their own terminal may do this",
                     f"tcg-{sub}")


# ------------------------------------------------------------------ helpers


def _backgrounds(line: str) -> bool:
    """Whether the line may start something in the background (a lone ``&``).
    Conservative: an ``&`` inside quotes counts too."""
    i = 0
    n = len(line)
    while i < n:
        if line[i] == "&":
            prev = line[i - 1] if i else ""
            nxt = line[i + 1] if i + 1 < n else ""
            if nxt in ("&", ">") or prev in ("&", ">", "<", "|"):
                i += 2 if nxt == "&" else 1
                continue
            return True
        i += 1
    return False


def _strip(path: str) -> str:
    return path.rstrip("/") or "/"
