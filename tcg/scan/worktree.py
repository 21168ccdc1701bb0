"""Working-tree file lists: what a checkout (or a plain directory) holds on disk.

A repository's list comes from git itself, so `.gitignore` is honoured exactly
(tracked + untracked-not-ignored). When the history is scanned too, only files
whose content may differ from a committed blob are read from disk (modified and
untracked); unmodified tracked files are already covered by their blob.
"""

from __future__ import annotations

import os
import stat

from tcg.scan.gitobjects import git

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

SKIP_DIRS = frozenset({".git", ".hg", ".svn"})


def _split_z(out: bytes) -> list[str]:
    seen: dict[str, None] = {}
    for raw in out.split(b"\0"):
        if raw:
            seen.setdefault(raw.decode("utf-8", "surrogateescape"), None)
    return list(seen)


def repo_files(repo: str | Path, *, changed_only: bool) -> list[str]:
    """Paths (relative to the work tree) of files to read from disk.

    ``changed_only``: modified tracked files plus untracked-not-ignored ones;
    otherwise every tracked file plus untracked-not-ignored ones.
    """
    mode = "-m" if changed_only else "-c"
    out = git(repo, "ls-files", "-z", mode, "-o", "--exclude-standard")
    return _split_z(out)


def dir_files(root: str | Path) -> list[str]:
    """Every regular file under a plain directory (no symlinks followed, VCS dirs skipped)."""
    result: list[str] = []
    root_s = str(root)
    for dirpath, dirnames, filenames in os.walk(root_s):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
        rel_dir = os.path.relpath(dirpath, root_s)
        for name in filenames:
            rel = name if rel_dir == "." else os.path.join(rel_dir, name)
            result.append(rel)
    return result


def read_regular(path: str, limit: int) -> tuple[str, bytes | None, int]:
    """Read a regular file: ("ok", data, size), ("large", None, size) or ("skip", None, 0).

    Symlinks, devices, FIFOs, directories and vanished files are skipped: a scan
    must never block on a pipe or follow a link out of the tree.
    """
    try:
        st = os.lstat(path)
    except OSError:
        return "skip", None, 0
    if not stat.S_ISREG(st.st_mode):
        return "skip", None, 0
    if st.st_size > limit:
        return "large", None, st.st_size
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return "skip", None, 0
    try:
        chunks = []
        remaining = limit + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    except OSError:
        return "skip", None, 0
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        return "large", None, len(data)
    return "ok", data, len(data)
