"""The repository-state key: changes whenever a repo scan's result could change.

Material (docs/agents.md "Cache"):
- every ref and its object id (``git for-each-ref``: branches, tags, remotes,
  ``refs/stash``, ``refs/notes/*``, ``refs/replace/*``) and HEAD;
- the index, as its differences from HEAD (``git status --porcelain=v2`` lists
  each staged entry with its index object id);
- the working tree: every modified tracked and untracked-not-ignored path, with
  the bytes of each such file hashed — content, not mtime, so an edit that adds
  a secret changes the key even within the same clock tick.
The scanner's own identity is part of the cache key, not of this material
(tcg.launcher.cache.scanner_id, the code fingerprint). The git commands run concurrently and
read-only (``--no-optional-locks``: the gate never rewrites the index). The
digest is keyed by the caller (HMAC, per-install key): it covers file
contents, so it must not be stored as a plain hash of them.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator

from tcg.digest import sha256
from tcg.errors import TcgError
from tcg.gitenv import DEVNULL, popen_git
from tcg.gitenv import git_env as scanner_git_env
from tcg.osutil import dot_git_dir

__all__ = ["HASH_LIMIT", "RepoState", "StateError", "find_repo", "git_env", "repo_state", "state_material"]

# Files larger than this are keyed by (size, mtime_ns) instead of content: the
# scanner skips them anyway (scan.max-blob-bytes), so their bytes cannot
# change its result.
HASH_LIMIT = 10 * 1024 * 1024
_CHUNK = 1 << 20


class StateError(TcgError):
    """The repository state cannot be read (git failed)."""


def git_env() -> dict[str, str]:
    """The scanner's read-only, program-free git environment (tcg.gitenv), plus no
    optional locks: the gate never rewrites the index."""
    env = scanner_git_env()
    env["GIT_OPTIONAL_LOCKS"] = "0"
    return env


def find_repo(cwd: str | os.PathLike[str]) -> str | None:
    """The work-tree root of the git repository containing ``cwd``; None outside one."""
    import subprocess

    try:
        proc = subprocess.run(
            ["git", "-C", os.fspath(cwd), "rev-parse", "--show-toplevel"],
            capture_output=True,
            env=git_env(),
            check=False,
        )
    except FileNotFoundError:
        # No git: a repository we cannot scan is an error, not "no repository".
        if dot_git_dir(os.path.abspath(os.fspath(cwd))) is not None:
            raise StateError("git is not installed; the repository cannot be scanned", hint="install git") from None
        return None
    if proc.returncode != 0:
        return None
    top = proc.stdout.decode("utf-8", "surrogateescape").strip()
    return top or None


def _hash_file(h, path: str) -> None:  # noqa: ANN001 - a sha256 object
    try:
        st = os.lstat(path)
    except OSError:
        h.update(b"missing\0")
        return
    if stat.S_ISLNK(st.st_mode):
        h.update(b"link\0" + os.fsencode(os.readlink(path)) + b"\0")
        return
    if not stat.S_ISREG(st.st_mode):
        h.update(b"other\0")
        return
    if st.st_size > HASH_LIMIT:
        h.update(f"large {st.st_size} {st.st_mtime_ns}\0".encode())
        return
    fh = sha256()
    try:
        with open(path, "rb") as f:
            while chunk := f.read(_CHUNK):
                fh.update(chunk)
    except OSError:
        h.update(b"unreadable\0")
        return
    h.update(b"file\0" + fh.digest())


def _status_paths(out: bytes) -> list[bytes]:
    """Work-tree paths whose bytes the key must cover, from ``status --porcelain=v2 -z``.

    A rename's origin is an extra NUL-separated record after a ``2`` record (not
    produced with ``--no-renames``, skipped all the same).
    """
    paths = []
    records: Iterator[bytes] = iter(out.split(b"\0"))
    for rec in records:
        kind = rec[:1]
        if kind == b"?":
            paths.append(rec[2:])
        elif kind == b"1":
            # 1 XY sub mH mI mW hH hI path
            fields = rec.split(b" ", 8)
            if len(fields) == 9 and fields[1][1:2] != b".":
                paths.append(fields[8])
        elif kind == b"2":
            fields = rec.split(b" ", 9)
            if len(fields) == 10 and fields[1][1:2] != b".":
                paths.append(fields[9])
            next(records, None)
        elif kind == b"u":
            fields = rec.split(b" ", 10)
            if len(fields) == 11:
                paths.append(fields[10])
    return paths


_REFS = ("for-each-ref", "--format=%(objectname) %(refname)")
_STATUS = ("--no-optional-locks", "status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all",
           "--no-renames", "--ignore-submodules=none")
_TOP = ("rev-parse", "--show-toplevel")


def _digest(root: str, refs_out: bytes, status_out: bytes) -> bytes:
    h = sha256()
    h.update(b"refs\0" + refs_out + b"\0status\0" + status_out + b"\0files\0")
    for rel in sorted(_status_paths(status_out)):
        h.update(rel + b"\0")
        _hash_file(h, os.path.join(root, os.fsdecode(rel)))
    return h.digest()


def _run_all(where: str, commands: list[tuple[str, ...]], env: dict[str, str]) -> list[tuple[int, bytes]]:
    """Run git commands concurrently: [(exit status, stdout)], stdin/stderr on /dev/null.

    Started with tcg.gitenv.popen_git (os.posix_spawnp where the platform has it:
    subprocess costs more to import than the git commands take to run). Reading the
    pipes one after the other cannot deadlock: the commands do not depend on each
    other, so each one finishes.
    """
    running = []
    try:
        for args in commands:
            running.append(popen_git(["git", "-C", where, *args], env=env, stdin=DEVNULL, stderr=DEVNULL))
    except FileNotFoundError:
        for proc in running:
            proc.communicate()
        raise
    results = []
    for proc in running:
        out, _ = proc.communicate()
        results.append((int(proc.returncode), out))
    return results


def state_material(root: str | os.PathLike[str]) -> bytes:
    """Everything the key covers, as a digest (key it; never store the material)."""
    root = os.fspath(root)
    (rc1, refs_out), (rc2, status_out) = _run_all(root, [_REFS, _STATUS], git_env())
    if rc1 != 0 or rc2 != 0:
        raise StateError(f"git cannot read the repository state of {root}",
                         hint=f"check it with `git -C {root} status`")
    return _digest(root, refs_out, status_out)


class RepoState:
    """What git said about a repository: its work-tree root and the key material."""

    __slots__ = ("material", "root")

    def __init__(self, root: str, material: bytes):
        self.root = root
        self.material = material


def repo_state(cwd: str | os.PathLike[str]) -> RepoState | None:
    """The state of the repository holding ``cwd``, or None outside one.

    The three git commands run concurrently (porcelain paths are relative to
    the root, so the root is only needed for hashing, after all of them finish).
    A repository git cannot read (broken HEAD, dubious ownership) raises
    StateError: it must not pass as "nothing to scan" (fail closed).
    """
    cwd = os.fspath(cwd)
    try:
        results = _run_all(cwd, [_TOP, _REFS, _STATUS], git_env())
    except FileNotFoundError:
        find_repo(cwd)  # no git: raises StateError when a repository is there after all
        return None
    (rc0, top_out), (rc1, refs_out), (rc2, status_out) = results
    if rc0 != 0:
        d = dot_git_dir(os.path.realpath(cwd))
        if d is not None:
            raise StateError(f"git cannot read the repository at {d}", hint=f"check it with `git -C {d} status`")
        return None
    root = os.fsdecode(top_out.rstrip(b"\n"))
    if rc1 != 0 or rc2 != 0 or not root or "\n" in root:
        raise StateError(f"git cannot read the repository state of {root}",
                         hint=f"check it with `git -C {root} status`")
    return RepoState(root, _digest(root, refs_out, status_out))
