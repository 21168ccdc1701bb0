"""``find`` as the delete-guard reads it: the command as written (the parser strips
``-exec … ;``), its start directories, and the same find turned into a listing of
exactly what it would delete — ``-delete`` and ``-exec rm {} ;`` become
``-print0`` in place, so the expression's logic is untouched — or the reason
that cannot be done (other actions, following symlinks).
"""

from __future__ import annotations

import posixpath

from tcg.policy.cmdline import Word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tcg.policy.cmdline import SimpleCommand

DELETERS = frozenset({"rm", "unlink", "rmdir"})
FIND_SAFE = frozenset({
    "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-lname",
    "-ilname", "-type", "-xtype", "-size", "-empty", "-mtime", "-mmin", "-atime", "-amin", "-ctime",
    "-cmin", "-newer", "-anewer", "-cnewer", "-perm", "-user", "-group", "-uid", "-gid", "-nouser",
    "-nogroup", "-links", "-inum", "-samefile", "-readable", "-writable", "-executable", "-true",
    "-false", "-maxdepth", "-mindepth", "-depth", "-d", "-xdev", "-mount", "-ignore_readdir_race",
    "-noignore_readdir_race", "-noleaf", "-follow", "-daystart", "-prune", "-quit", "-regextype",
    "(", ")", "!", "-not", "-a", "-and", "-o", "-or", ",", "-used", "-fstype", "-context", "-warn",
    "-nowarn",
})
FIND_VALUE = frozenset({
    "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-lname",
    "-ilname", "-type", "-xtype", "-size", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin",
    "-newer", "-anewer", "-cnewer", "-perm", "-user", "-group", "-uid", "-gid", "-links", "-inum",
    "-samefile", "-maxdepth", "-mindepth", "-regextype", "-used", "-fstype", "-context",
})


def full_argv(cmd: SimpleCommand) -> list[str] | None:
    """The find command's words as written (the parser strips ``-exec … ;``)."""
    from tcg.policy.cmdline import parse_line

    if not cmd.text:
        return [w.value for w in cmd.argv]
    parsed = parse_line(": " + cmd.text)
    for c in parsed.commands:
        if c.name == ":" and len(c.argv) > 1:
            words = [w.value for w in c.argv[1:]]
            if words and posixpath.basename(words[0]) == "find":
                return words
    return None


def find_roots(cmd: SimpleCommand) -> list[Word]:
    roots = []
    for w in cmd.args:
        if w.is_literal and w.value in ("-H", "-L", "-P"):
            continue
        if w.is_literal and (w.value.startswith(("-", "(", "!")) or w.value in (")", ",")):
            break
        roots.append(w)
    return roots or [Word(".")]


def enumeration(full: list[str], exec_rm: bool, xargs_rm: bool) -> tuple[list[str], str | None]:
    """The find that lists, NUL-separated, what ``full`` would delete — or why
    that cannot be told. ``-delete`` and ``-exec rm … ;`` become ``-print0`` in
    place; ``-print`` becomes ``-true``; for ``| xargs rm`` the list is what find prints."""
    out = [full[0]]
    i = 1
    if "-L" in full or "-follow" in full:
        return out, "following symlinks, it may delete outside the directories it names"
    while i < len(full) and full[i] in ("-H", "-P"):
        out.append(full[i])
        i += 1
    while i < len(full) and not full[i].startswith(("-", "(", "!")) and full[i] not in (")", ","):
        out.append(full[i])
        i += 1
    out.append("-depth")
    acted = False
    while i < len(full):
        a = full[i]
        if a == "-delete":
            out.append("-print0")
            acted = True
        elif a in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(full) and full[j] not in (";", "+"):
                j += 1
            inner = full[i + 1:j]
            if not (exec_rm and inner and posixpath.basename(inner[0]) in DELETERS and "{}" in inner):
                return out, f"{a} {' '.join(inner[:3])} runs a command tcg cannot follow"
            out.append("-print0")
            acted = True
            i = j
        elif a in ("-print", "-print0"):
            out.append("-print0" if xargs_rm else "-true")
            acted = acted or xargs_rm
        elif a in FIND_SAFE:
            out.append(a)
            if a in FIND_VALUE and i + 1 < len(full):
                out.append(full[i + 1])
                i += 1
        elif a.startswith("-newer") and len(a) == 8 and i + 1 < len(full):
            out += [a, full[i + 1]]
            i += 1
        else:
            return out, f"{a} is not something tcg can evaluate ahead of time"
        i += 1
    if xargs_rm and not acted:
        out.append("-print0")
    return out, None
