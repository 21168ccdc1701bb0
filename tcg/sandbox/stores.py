"""Find the secret stores an agent's command could open, cheaply, before every command.

A bind mount hides one concrete file, so the policy's patterns (``[secret_stores]``:
basenames, directory segments, path globs) must be turned into paths. The places
looked at (docs/policy.md, "The sandbox view"):

- the project: the git work tree holding the working directory (or the working
  directory itself), walked in full except ``sandbox.skip_dirs``;
- the home directory: its top level, every protected directory segment directly
  under it (``~/.ssh``, ``~/.aws`` …) in full, ``~/.config`` three levels deep, and
  the directories named by ``secret_stores.paths``;
- ``sandbox.roots``: further trees, walked in full;
- tcg's own install key.

A walk is remembered per root (signed with the install key, in the cache dir): the
next command stats every directory it walked and rescans only those whose
modification time changed — a directory's mtime moves whenever an entry is created,
removed or renamed in it, and stores are recognised by name alone. A file created
*during* a command is therefore not hidden from that command (it wrote it), and is
hidden from the next one.
"""

from __future__ import annotations

import marshal
import os
import stat

from tcg.osutil import dot_git_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    from tcg.policy.compiled import SandboxSettings

WALK_VERSION = 2
UNLIMITED = -1
CONFIG_DEPTH = 3  # ~/.config/<tool>/<dir>/<file>
SHALLOW_DEPTH = 2  # a "project" that is the home directory or /


class Walk:
    """One root's remembered walk: ``dirs`` maps a directory to
    (ctime_ns, inode, matched files, subdirectories). The change time, not the
    modification time: ``os.utime`` sets the latter back, so a store created after the
    walk would stay unhidden; the kernel sets ctime on every change, utime included."""

    __slots__ = ("dirs", "partial", "changed")

    def __init__(self, dirs: dict[str, tuple[int, int, tuple[str, ...], tuple[str, ...]]] | None = None):
        self.dirs = dirs or {}
        self.partial = False
        self.changed = False


def _scan(path: str, match: Callable[[str], bool], skip: frozenset[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(matching regular files, subdirectories to descend) of one directory."""
    files: list[str] = []
    subdirs: list[str] = []
    try:
        with os.scandir(path) as it:
            for entry in it:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name.lower() not in skip:
                            subdirs.append(entry.path)
                    elif entry.is_file(follow_symlinks=True) and match(entry.path):
                        files.append(entry.path)
                except OSError:
                    continue
    except OSError:
        pass
    return tuple(files), tuple(subdirs)


def refresh(walk: Walk, root: str, depth: int, match: Callable[[str], bool], skip: frozenset[str],
            max_dirs: int) -> list[str]:
    """Bring ``walk`` up to date for ``root`` (to ``depth`` levels; -1 = all) and
    return the matching files. Unchanged directories cost one stat each."""
    old = walk.dirs
    new: dict[str, tuple[int, int, tuple[str, ...], tuple[str, ...]]] = {}
    found: list[str] = []
    stack: list[tuple[str, int]] = [(root, depth)]
    while stack:
        path, left = stack.pop()
        if len(new) >= max_dirs:
            walk.partial = True
            break
        try:
            st = os.stat(path, follow_symlinks=path == root)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode):
            continue
        cached = old.get(path)
        if cached is not None and cached[0] == st.st_ctime_ns and cached[1] == st.st_ino:
            files, subdirs = cached[2], cached[3]
        else:
            files, subdirs = _scan(path, match, skip)
            walk.changed = True
        new[path] = (st.st_ctime_ns, st.st_ino, files, subdirs)
        found.extend(files)
        if left != 0:
            stack.extend((d, left - 1) for d in subdirs)
    if len(new) != len(old):
        walk.changed = True
    walk.dirs = new
    return found


class WalkCache:
    """Walks remembered across commands in ``<cache>/sandbox/``, each file signed with
    the install key (the cache dir is writable by the agent's commands; a forged walk
    must not un-hide a store — it reads as absent and the tree is walked again)."""

    TAG = f"sandbox-walk/v{WALK_VERSION}/marshal-{marshal.version}"

    def __init__(self, cache_dir: str | None, key: bytes | None, salt: str):
        self.dir = os.path.join(cache_dir, "sandbox") if cache_dir else None
        self.key = key
        self.salt = salt

    def _file(self, root: str, depth: int) -> str | None:
        if self.dir is None or self.key is None:
            return None
        from tcg.digest import hmac_sha256

        name = hmac_sha256(self.key, f"{self.salt}\0{root}\0{depth}".encode("utf-8", "surrogateescape"))[:24]
        return os.path.join(self.dir, f"walk-{name}.bin")

    def load(self, root: str, depth: int) -> Walk:
        path = self._file(root, depth)
        if path is None or self.key is None:
            return Walk()
        from tcg.cachestore import read_cache

        body = read_cache(path, self.key, self.TAG)
        if body is None:
            return Walk()
        try:
            data = marshal.loads(body)
        except (ValueError, EOFError, TypeError):
            return Walk()
        if type(data) is not dict or data.get("root") != root:
            return Walk()
        dirs = data.get("dirs")
        return Walk(dirs) if type(dirs) is dict else Walk()

    def save(self, root: str, depth: int, walk: Walk) -> None:
        path = self._file(root, depth)
        if path is None or self.key is None or not walk.changed:
            return
        from tcg.cachestore import write_cache

        write_cache(path, self.key, self.TAG, marshal.dumps({"root": root, "dirs": walk.dirs}))


def project_root(cwd: str) -> str:
    """The nearest directory at or above ``cwd`` holding ``.git``, else ``cwd``."""
    return dot_git_dir(cwd) or cwd


def literal_prefix(pattern: str) -> str:
    """The directory part of a path glob before its first wildcard."""
    parts = pattern.split("/")
    out: list[str] = []
    for p in parts:
        if any(c in p for c in "*?["):
            break
        out.append(p)
    return "/".join(out) or "/"


def roots_for(cwd: str, home: str | None, segments: Iterable[str], path_globs: Iterable[str],
              extra_roots: Iterable[str]) -> list[tuple[str, int]]:
    """Every (directory, depth) to walk for a command started in ``cwd``."""
    out: list[tuple[str, int]] = []
    project = project_root(cwd)
    broad = project == "/" or (home is not None and (project == home or home.startswith(project.rstrip("/") + "/")))
    out.append((project, SHALLOW_DEPTH if broad else UNLIMITED))
    if home:
        out.append((home, 0))
        for seg in segments:
            out.append((os.path.join(home, seg), UNLIMITED))
        out.append((os.path.join(home, ".config"), CONFIG_DEPTH))
    for pattern in path_globs:
        if any(c in pattern for c in "*?["):
            out.append((literal_prefix(pattern), UNLIMITED))
        else:
            out.append((os.path.dirname(pattern) or "/", 0))
    for root in extra_roots:
        out.append((root, UNLIMITED))
    seen: set[tuple[str, int]] = set()
    unique = []
    for r in out:
        key = (os.path.normpath(r[0]), r[1])
        if key not in seen:
            seen.add(key)
            unique.append(key)
    return unique


def find_stores(roots: list[tuple[str, int]], match: Callable[[str], bool], skip: frozenset[str],
                cache: WalkCache, max_dirs: int) -> tuple[list[str], bool]:
    """(sorted unique store paths, partial) over all roots."""
    found: set[str] = set()
    partial = False
    for root, depth in roots:
        if not os.path.isdir(root):
            continue
        walk = cache.load(root, depth)
        found.update(refresh(walk, root, depth, match, skip, max_dirs))
        partial = partial or walk.partial
        cache.save(root, depth, walk)
    return sorted(found), partial


def expand_home(path: str, home: str | None) -> str:
    if home and (path == "~" or path.startswith("~/")):
        return home + path[1:]
    return path


def matcher_for(patterns: Iterable[str], home: str | None) -> Callable[[str], bool]:
    """Basename globs (no ``/``) and path globs (``~`` = home); case-insensitive basenames."""
    from tcg.policy.glob import fnmatchcase

    names = tuple(p.lower() for p in patterns if "/" not in p)
    paths = tuple(expand_home(p, home) for p in patterns if "/" in p)

    def match(path: str) -> bool:
        base = os.path.basename(path).lower()
        return any(fnmatchcase(base, n) for n in names) or any(fnmatchcase(path, p) for p in paths)

    return match


def settings(policy: Any) -> SandboxSettings:
    """The policy's ``[sandbox]`` table (tcg.policy.compiled); nothing set without a policy."""
    if policy is None:
        from tcg.policy.compiled import SandboxSettings

        return SandboxSettings(None, None, None, (), (), (), (), None)
    return policy.model.sandbox
