"""Reads the command-line model does not see in a command's file arguments.

- ``curl file:///…/.env``: a URL that is a file;
- ``sqlite3 :memory: "select readfile('.env')"``: SQL that opens a file;
- ``git cat-file -p <id>`` / ``git show <id>``: an object id that may name the blob
  of a secret store (looked up in the index and HEAD with git);
- recursive readers (``grep -r``, ``tar c``, ``zip -r``, ``rsync -a``, ``cp -r``,
  ``scp -r``, ``rg --hidden``): a directory argument reads every file below it, so a
  directory holding a secret store counts as a read of that store.

Each helper only looks; tcg.decide.line decides. Lookups that touch the disk or
run git happen only when the command is one of these.
"""

from __future__ import annotations

import os
import posixpath

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from tcg.policy.cmdline import Word

SQLITE = frozenset({"sqlite3", "sqlite"})
RECURSIVE = frozenset({"grep", "egrep", "fgrep", "rgrep", "tar", "bsdtar", "zip", "rsync", "cp", "scp", "rg"})
STORE_SEARCH_CAP = 20000  # directories looked at below one argument
OBJECT_ID_MIN = 4


def file_urls(args: Iterable[Word]) -> list[tuple[Word, str]]:
    """(word, path) for each ``file:`` URL among curl's arguments."""
    out = []
    for w in args:
        if not w.value[:5].lower() == "file:":
            continue
        rest = w.value[5:]
        if rest.startswith("//"):
            _host, slash, path = rest[2:].partition("/")
            rest = slash + path
        if "%" in rest:
            from urllib.parse import unquote

            rest = unquote(rest)
        out.append((w, rest))
    return out


def sqlite_paths(args: Iterable[Word]) -> list[str | None]:
    """Files SQL or dot-commands open: ``readfile('p')`` → p; a ``readfile(`` whose
    argument is not one string literal → None (only known at run time)."""
    import re

    out: list[str | None] = []
    for w in args:
        for m in re.finditer(r"readfile\s*\(\s*([^)]*)\)", w.value, re.I):
            arg = m.group(1).strip()
            lit = re.fullmatch(r"'((?:[^']|'')*)'", arg)
            out.append(lit.group(1).replace("''", "'") if lit else None)
        for line in w.value.splitlines():
            parts = line.split()
            if len(parts) >= 2 and parts[0] in (".read", ".import"):
                out.append(parts[1].strip("'\""))
    return out


def _flags(args: list[str]) -> set[str]:
    """Short flags (bundled ``-rn`` → r, n) and long options (``--recursive``)."""
    out: set[str] = set()
    for a in args:
        if a.startswith("--"):
            out.add(a.split("=", 1)[0])
        elif a.startswith("-") and len(a) > 1:
            out.update(a[1:])
    return out


def recursive_sources(name: str, values: list[str]) -> tuple[list[str], list[str]] | None:
    """(directories read recursively, exclude globs) when this invocation recurses, else None."""
    positional = [v for v in values if v == "-" or not v.startswith("-")]  # "-": stdin/stdout
    flags = _flags(values)
    excludes = [v.split("=", 1)[1] for v in values if v.startswith(("--exclude=", "--exclude-dir="))]
    if name in ("grep", "egrep", "fgrep", "rgrep"):
        if name != "rgrep" and not ({"r", "R", "--recursive", "--dereference-recursive"} & flags
                                    or "--directories=recurse" in values):
            return None
        pattern_given = {"e", "f", "--regexp", "--file"} & flags
        paths = positional if pattern_given else positional[1:]
        return (paths or ["."]), excludes
    if name == "rg":
        if not ({"--hidden", "--no-ignore", "-uu", "-uuu"} & (flags | set(values)) or "." in flags):
            return None  # rg skips hidden and ignored files (.env, ~/.ssh) by default
        return (positional[1:] or ["."]), excludes
    if name in ("tar", "bsdtar"):
        first = values[0] if values else ""
        create = "--create" in flags or "c" in flags or (first and not first.startswith("-") and "c" in first)
        if not create:
            return None
        paths = positional[1:] if first and not first.startswith("-") else positional  # old style: `tar cf …`
        if ("f" in flags or (first and not first.startswith("-") and "f" in first)) and \
                not any(v.startswith("--file=") for v in values):
            paths = paths[1:]  # the archive itself
        return paths, excludes
    if name == "zip":
        if not ({"r", "R", "--recurse-paths"} & flags):
            return None
        return positional[1:], excludes
    if name in ("rsync", "cp", "scp"):
        rec = {"r", "R", "a", "--recursive", "--archive"} & flags
        if not rec:
            return None
        return positional[:-1], excludes
    return None


def store_inside(root: str, is_store: Callable[[str], bool], excludes: Iterable[str],
                 cap: int = STORE_SEARCH_CAP) -> str | None:
    """The first secret store found below directory ``root`` (``.git`` and excluded
    names skipped), or None. Stops after ``cap`` directories."""
    from tcg.policy.glob import fnmatchcase

    ex = tuple(excludes)
    stack = [root]
    seen = 0
    while stack and seen < cap:
        d = stack.pop()
        seen += 1
        try:
            with os.scandir(d) as it:
                entries = list(it)
        except OSError:
            continue
        for e in entries:
            if any(fnmatchcase(e.name, x) for x in ex):
                continue
            try:
                if e.is_dir(follow_symlinks=False):
                    if e.name != ".git":
                        stack.append(e.path)
                elif is_store(e.path):
                    return e.path
            except OSError:
                continue
    return None


def object_ids(sub: str, values: list[str]) -> list[str]:
    """Bare object ids ``git cat-file``/``git show`` would print (no ``rev:path``)."""
    import re

    out = []
    for v in values:
        if v.startswith("-") or ":" in v:
            continue
        if re.fullmatch(rf"[0-9a-fA-F]{{{OBJECT_ID_MIN},64}}", v):
            out.append(v.lower())
    return out


def blob_path(cwd: str, oid: str) -> tuple[str, str | None]:
    """(object type, path of that blob in the index or HEAD) — type "" when git does
    not know the object (or git is missing), path None when the blob is not there."""
    import subprocess

    def git(*args: str) -> str | None:
        try:
            r = subprocess.run(["git", "-C", cwd, *args], capture_output=True, timeout=10, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError):
            return None
        return r.stdout.decode("utf-8", "surrogateescape") if r.returncode == 0 else None

    kind = (git("cat-file", "-t", oid) or "").strip()
    if kind != "blob":
        return kind, None
    full = (git("rev-parse", oid) or "").strip()
    for listing in (git("ls-files", "-s"), git("ls-tree", "-r", "--full-tree", "HEAD")):
        for line in (listing or "").splitlines():
            meta, _, path = line.partition("\t")
            if full and full in meta.split():
                top = (git("rev-parse", "--show-toplevel") or cwd).strip()
                return kind, posixpath.join(top, path)
    return kind, None
