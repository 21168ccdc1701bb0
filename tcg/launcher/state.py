"""The repository-state key: changes whenever a repo scan's result could change.

Material (docs/agents.md "Cache"):
- every ref and its object id (``git for-each-ref``: branches, tags, remotes,
  ``refs/stash``, ``refs/notes/*``, ``refs/replace/*``) and HEAD;
- the index, as its differences from HEAD (``git status --porcelain=v2`` lists
  each staged entry with its index object id);
- the working tree: every modified tracked and untracked-not-ignored path, with
  the bytes of each such file hashed — content, not mtime, so an edit that adds
  a secret changes the key even within the same clock tick;
- the scanner itself (tcg version and the rule files), since new rules can
  find what old ones did not.
The git commands run concurrently and read-only (``--no-optional-locks``: the
gate never rewrites the index). The digest is keyed (HMAC, per-install key):
it covers file contents, so it must not be a plain hash of them.

A cache-hit launch usually runs none of this: tcg.launcher.witness remembers
the stat data of everything the key depends on and reuses the key while all of
it is unchanged. ``repo_state`` also returns what the witness needs (the
tracked files, the ignored directories, the git dir).
"""

from __future__ import annotations

import os

from tcg.errors import TcgError
from tcg.launcher.fastpath import scanner_id

TYPE_CHECKING = False  # typing costs ~3 ms of import on the cache-hit path
if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["HASH_LIMIT", "RepoState", "StateError", "find_repo", "git_env", "repo_state", "scanner_id",
           "split_ignored", "state_material"]

# Files larger than this are keyed by (size, mtime_ns) instead of content: the
# scanner skips them anyway (scan.max-blob-bytes), so their bytes cannot
# change its result.
HASH_LIMIT = 10 * 1024 * 1024
_CHUNK = 1 << 20


class StateError(TcgError):
    """The repository state cannot be read (git failed)."""


def git_env() -> dict[str, str]:
    """Read-only, program-free git, as the scanner runs it (tcg.scan.gitobjects.git_env):
    no inherited repo overrides, no fsmonitor hook (a repository's config could name
    a program), C locale, no prompt — plus no optional locks (never rewrite the index).
    Kept here without importing the scanner: the cache-hit path must stay light."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY")
           and not k.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))}
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["LC_ALL"] = "C"
    env.setdefault("GIT_CONFIG_NOSYSTEM", "1")
    env["GIT_CONFIG_COUNT"] = "1"
    env["GIT_CONFIG_KEY_0"] = "core.fsmonitor"
    env["GIT_CONFIG_VALUE_0"] = "false"
    env["GIT_OPTIONAL_LOCKS"] = "0"
    return env


def _dot_git_above(cwd: str) -> str | None:
    """The first directory at or above ``cwd`` holding a ``.git`` entry."""
    d = os.path.abspath(cwd)
    while True:
        if os.path.lexists(os.path.join(d, ".git")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


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
        if _dot_git_above(os.fspath(cwd)) is not None:
            raise StateError("git is not installed; the repository cannot be scanned", hint="install git") from None
        return None
    if proc.returncode != 0:
        return None
    top = proc.stdout.decode("utf-8", "surrogateescape").strip()
    return top or None


def _hash_file(h, path: str) -> None:  # noqa: ANN001 - a sha256 object
    from tcg.digest import sha256

    try:
        st = os.lstat(path)
    except OSError:
        h.update(b"missing\0")
        return
    import stat as _stat

    if _stat.S_ISLNK(st.st_mode):
        h.update(b"link\0" + os.fsencode(os.readlink(path)) + b"\0")
        return
    if not _stat.S_ISREG(st.st_mode):
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


def _records(out: bytes) -> Iterable[tuple[bytes, list[bytes]]]:
    """(record, extra records) from ``status --porcelain=v2 -z`` (a rename's origin is an extra record)."""
    records = out.split(b"\0")
    i = 0
    while i < len(records):
        rec = records[i]
        i += 1
        if rec[:1] == b"2":
            yield rec, records[i:i + 1]
            i += 1
        elif rec:
            yield rec, []


def _status_paths(out: bytes) -> list[bytes]:
    """Work-tree paths whose bytes the key must cover, from ``status --porcelain=v2 -z``."""
    paths = []
    for rec, _ in _records(out):
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
        elif kind == b"u":
            fields = rec.split(b" ", 10)
            if len(fields) == 11:
                paths.append(fields[10])
    return paths


def split_ignored(out: bytes) -> tuple[bytes, list[bytes], list[bytes]]:
    """(status without ``!`` records, untracked paths, ignored paths) of ``status --ignored=matching``.

    Ignored files never count for the key (the scanner does not read them), so
    the key is computed from the output without them, byte for byte what plain
    ``git status`` prints.
    """
    kept: list[bytes] = []
    untracked: list[bytes] = []
    ignored: list[bytes] = []
    for rec, extra in _records(out):
        if rec[:2] == b"! ":
            ignored.append(rec[2:])
            continue
        if rec[:2] == b"? ":
            untracked.append(rec[2:])
        kept.append(rec)
        kept.extend(extra)
    return b"".join(r + b"\0" for r in kept), untracked, ignored


_REFS = ("for-each-ref", "--format=%(objectname) %(refname)")
_STATUS = ("--no-optional-locks", "status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all",
           "--no-renames", "--ignore-submodules=none")
_TOP = ("rev-parse", "--show-toplevel", "--absolute-git-dir")
_LS_FILES = ("ls-files", "-z", "--stage")
_EXCLUDES = ("config", "-z", "--path", "--get", "core.excludesFile")


def _digest(root: str, refs_out: bytes, status_out: bytes) -> bytes:
    from tcg.digest import sha256

    h = sha256()
    h.update(b"refs\0" + refs_out + b"\0status\0" + status_out + b"\0files\0")
    for rel in sorted(_status_paths(status_out)):
        h.update(rel + b"\0")
        _hash_file(h, os.path.join(root, os.fsdecode(rel)))
    return h.digest()


def _run_all(where: str, commands: list[tuple[str, ...]], env: dict[str, str]) -> list[tuple[int, bytes]]:
    """Run git commands concurrently: [(exit status, stdout)], stdin/stderr on /dev/null.

    posix_spawn and raw pipes instead of subprocess: subprocess (with selectors,
    threading, signal) costs more to import than the git commands cost to run.
    Reading the pipes one after the other cannot deadlock: the commands do not
    depend on each other, so each one finishes.
    """
    if not hasattr(os, "posix_spawnp"):  # pragma: no cover - Windows
        import subprocess

        procs = [subprocess.Popen(["git", "-C", where, *c], stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=env) for c in commands]
        return [(p.returncode, out) for p in procs for out, _ in [p.communicate()]]
    running = []
    try:
        for args in commands:
            r, w = os.pipe()
            actions = [
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_DUP2, w, 1),
                (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
                (os.POSIX_SPAWN_CLOSE, r),
                (os.POSIX_SPAWN_CLOSE, w),
            ]
            try:
                pid = os.posix_spawnp("git", ["git", "-C", where, *args], env, file_actions=actions)
            except BaseException:
                os.close(r)
                os.close(w)
                raise
            os.close(w)
            running.append((pid, r))
    except FileNotFoundError:
        for pid, r in running:
            os.close(r)
            os.waitpid(pid, 0)
        raise
    results = []
    for pid, r in running:
        chunks = []
        try:
            while chunk := os.read(r, 1 << 16):
                chunks.append(chunk)
        finally:
            os.close(r)
        _, status = os.waitpid(pid, 0)
        results.append((os.waitstatus_to_exitcode(status), b"".join(chunks)))
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
    """What one pass of git said about a repository: the key material and what a witness needs."""

    __slots__ = ("excludes_file", "git_dir", "ignored", "material", "root", "started_ns", "tracked", "untracked")

    def __init__(self, root: str, material: bytes, *, git_dir: str, started_ns: int, tracked: bytes,
                 untracked: list[bytes], ignored: list[bytes], excludes_file: str | None):
        self.root = root
        self.material = material
        self.git_dir = git_dir
        self.started_ns = started_ns  # wall clock before git ran: later changes count as racy
        self.tracked = tracked  # `ls-files -z --stage` output
        self.untracked = untracked
        self.ignored = ignored
        self.excludes_file = excludes_file


def repo_state(cwd: str | os.PathLike[str]) -> RepoState | None:
    """The state of the repository holding ``cwd``, or None outside one.

    The git commands run concurrently (porcelain paths are relative to the
    root, so the root is only needed for hashing, after all of them finish).
    """
    import time

    cwd = os.fspath(cwd)
    started = time.time_ns()
    status_cmd = (*_STATUS, "--ignored=matching")
    try:
        results = _run_all(cwd, [_TOP, _REFS, status_cmd, _LS_FILES, _EXCLUDES], git_env())
    except FileNotFoundError:
        find_repo(cwd)  # no git: raises StateError when a repository is there after all
        return None
    (rc0, top_out), (rc1, refs_out), (rc2, status_out), (rc3, ls_out), (_, excludes_out) = results
    if rc0 != 0:
        # Not a repository — or one git cannot read (broken HEAD, dubious ownership):
        # that must not pass as "nothing to scan" (fail closed).
        d = _dot_git_above(os.path.realpath(cwd))
        if d is not None:
            raise StateError(f"git cannot read the repository at {d}", hint=f"check it with `git -C {d} status`")
        return None
    lines = top_out.rstrip(b"\n").split(b"\n")
    root = os.fsdecode(lines[0])
    if rc1 != 0 or rc2 != 0 or rc3 != 0 or not root or len(lines) != 2:
        raise StateError(f"git cannot read the repository state of {root}",
                         hint=f"check it with `git -C {root} status`")
    status_out, untracked, ignored = split_ignored(status_out)
    excludes = os.fsdecode(excludes_out.rstrip(b"\0\n")) or None
    return RepoState(root, _digest(root, refs_out, status_out), git_dir=os.fsdecode(lines[1]),
                     started_ns=started, tracked=ls_out, untracked=untracked, ignored=ignored,
                     excludes_file=excludes)
