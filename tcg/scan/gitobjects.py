"""Git object access for the scanner: enumerate reachable blobs, stream them.

Why plain git and not a library: one `git rev-list --objects --all` piped into
`git cat-file --batch-check` lists every blob reachable from every ref
(branches, tags, remotes, stash, notes) exactly once, with a path, its size and
the commit that reached it first; `git cat-file --batch` then streams contents
without checking anything out. Both are C loops over the pack files; Python
only parses one short line per object. (pygit2 was measured against this in
bench/; see docs/scan.md.)

Commit attribution: rev-list runs with ``--reverse --in-commit-order``, so
commits come oldest first and every tree/blob is listed right after the first
commit whose tree reaches it. The commit reported for a blob is therefore the
earliest commit in rev-list's (date/topological) order that contains it — the
one that introduced it on a linear history.
"""

from __future__ import annotations

import os

from tcg.errors import TcgError
from tcg.gitenv import DEVNULL, GIT_ENV_DROP, PIPE, git_env, popen_git  # noqa: F401 - re-exported: the scanner's git environment
from tcg.osutil import grow_pipe
from tcg.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


class GitError(TcgError):
    """A git command failed on a repository being scanned."""


class BlobRef(Record, fields="oid size path commit"):
    """One unique blob of a repository and where it was first seen: its ``oid``, ``size``
    (-1: absent from a partial clone, not fetched, not scanned), ``path`` and ``commit``
    (None: only in the index, staged and never committed)."""

    __slots__ = ()

    oid: str
    size: int
    path: str
    commit: str | None


def git(repo: Path | str, *args: str, check: bool = True) -> bytes:
    """Run a read-only git command in ``repo`` and return stdout."""
    proc = popen_git(["git", "-C", str(repo), *args], env=git_env())
    stdout, stderr = proc.communicate()
    if check and proc.returncode != 0:
        err = stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(
            f"git {args[0]} failed in {repo}: {err[-1] if err else proc.returncode}",
            hint="is it a readable git repository? (`git -C PATH status`)",
        )
    return stdout  # type: ignore[no-any-return]


def repo_root(path: str) -> tuple[str, bool] | None:
    """(work tree root or, for a bare repository, its git dir; bare?) for ``path``, else None."""
    proc = popen_git(["git", "-C", str(path), "rev-parse", "--is-bare-repository", "--absolute-git-dir",
                      "--show-cdup"], env=git_env())
    stdout, _ = proc.communicate()
    if proc.returncode != 0:
        return None
    lines = stdout.decode("utf-8", "surrogateescape").splitlines()
    if len(lines) < 2:
        return None
    if lines[0] == "true" or len(lines) < 3:
        # A bare repository, or the .git directory of a checkout itself (no
        # --show-cdup there): only the object database can be scanned.
        return lines[1], True
    return os.path.realpath(os.path.join(path, lines[2])), False


def iter_reachable_blobs(repo: str | Path) -> Iterator[BlobRef]:
    """Yield every blob reachable from any ref, once, oldest introducing commit first."""
    env = git_env()
    rev = popen_git(
        [
            "git", "-C", str(repo), "rev-list", "--objects", "--all", "--reverse", "--in-commit-order",
            "--missing=print",  # partial clone: list absent objects as "?oid", never fetch them
        ],
        env=env,
    )
    check = popen_git(
        [
            "git", "-C", str(repo), "cat-file",
            "--batch-check=%(objecttype) %(objectname) %(objectsize) %(rest)", "--buffer",
        ],
        stdin=rev.stdout,
        env=env,
    )
    assert rev.stdout is not None and check.stdout is not None
    rev.stdout.close()  # the pipe now belongs to cat-file
    commit: str | None = None
    try:
        for raw in check.stdout:
            kind, _, rest = raw.partition(b" ")
            if kind == b"blob":
                oid, _, rest = rest.partition(b" ")
                size, _, path = rest.partition(b" ")
                yield BlobRef(
                    oid.decode("ascii"),
                    int(size),
                    path.rstrip(b"\n").decode("utf-8", "surrogateescape"),
                    commit,
                )
            elif kind == b"commit":
                commit = rest.partition(b" ")[0].decode("ascii")
            elif kind.startswith(b"?"):  # "?oid missing": not in this (partial) clone
                yield BlobRef(kind[1:].decode("ascii", "replace"), -1, "", commit)
    finally:
        check.stdout.close()
        check.wait()
        rev.wait()
        rev_err = rev.stderr.read() if rev.stderr else b""
        check_err = check.stderr.read() if check.stderr else b""
        for p in (rev, check):
            if p.stderr:
                p.stderr.close()
    if rev.returncode != 0 or check.returncode != 0:
        lines = (rev_err or check_err).decode("utf-8", "replace").strip().splitlines()
        if rev.returncode != 0 and _empty_repo(repo):
            return
        raise GitError(
            f"cannot list the history of {repo}: {lines[-1] if lines else 'git failed'}",
            hint="is the repository complete (not a shallow or damaged clone)? `git fsck` tells",
        )


def _empty_repo(repo: str | Path) -> bool:
    """A fresh repository without commits makes rev-list fail; that is not an error."""
    return git(repo, "rev-parse", "--verify", "-q", "HEAD", check=False) == b"" and not git(
        repo, "for-each-ref", "--count=1", check=False
    ).strip()


def index_blobs(repo: str | Path) -> list[tuple[str, str]]:
    """(oid, path) of every regular file staged in the index (stage entries included)."""
    out = git(repo, "ls-files", "--stage", "-z", check=False)
    result = []
    for entry in out.split(b"\0"):
        if not entry:
            continue
        meta, _, path = entry.partition(b"\t")
        mode, oid, _stage = meta.split(b" ")
        if mode.startswith(b"160"):  # gitlink (submodule)
            continue
        result.append((oid.decode("ascii"), path.decode("utf-8", "surrogateescape")))
    return result


def staged_blobs(repo: str | Path) -> list[tuple[str, str]]:
    """(oid, path) of every blob the next commit adds or changes: the index against HEAD,
    or against the empty tree on a branch without commits. Deletions and submodules
    carry no content and are left out."""
    head = git(repo, "rev-parse", "--verify", "-q", "HEAD^{tree}", check=False).strip()
    if not head:  # the empty tree in this repository's object format (SHA-1 or SHA-256)
        head = git(repo, "hash-object", "-t", "tree", os.devnull).strip()
    out = git(repo, "diff-index", "--cached", "-z", "--no-renames", "--diff-filter=ACMTU",
              "--ignore-submodules=all", head.decode("ascii"))
    fields = out.split(b"\0")
    result = []
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        if not meta.startswith(b":"):
            continue
        _old_mode, new_mode, _old, new, _status = meta[1:].split(b" ")
        if new_mode.startswith(b"160") or set(new) == {ord("0")}:  # gitlink, or no blob yet
            continue
        result.append((new.decode("ascii"), path.decode("utf-8", "surrogateescape")))
    return result


def blob_sizes(repo: str | Path, oids: list[str]) -> dict[str, int]:
    """Size of each blob, from one ``git cat-file --batch-check`` (missing ones left out)."""
    proc = popen_git(["git", "-C", str(repo), "cat-file", "--batch-check=%(objectname) %(objectsize)"],
                     stdin=PIPE, env=git_env())
    stdout, _ = proc.communicate("".join(f"{o}\n" for o in oids).encode("ascii"))
    sizes = {}
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            sizes[parts[0].decode("ascii")] = int(parts[1])
    return sizes


# Seconds a `git cat-file --batch` may take to exit once its pipes are closed.
KILL_GRACE_S = 5


class BlobReader:
    """A persistent ``git cat-file --batch`` for one repository.

    Requests go in chunks small enough to fit the pipe (see read_many), so neither
    side can block on a full pipe.
    """

    CHUNK = 256  # oids per write: 256 * 41 bytes < even a default 64 KiB pipe buffer

    def __init__(self, repo: Path | str):
        self.repo = str(repo)
        self._proc = popen_git(
            ["git", "-C", self.repo, "cat-file", "--batch"],
            stdin=PIPE,
            stdout=PIPE,
            stderr=DEVNULL,
            env=git_env(),
            bufsize=1 << 20,
        )
        for stream in (self._proc.stdout, self._proc.stdin):  # git runs ahead of the scanner
            if stream is not None:
                grow_pipe(stream.fileno())

    def read_many(self, oids: list[str]) -> Iterator[tuple[str, bytes | None]]:
        """Yield (oid, content) in request order; content None when the object is missing.

        Double-buffered: the next chunk of ids is queued before the current chunk's
        answers are read, so git never waits for the scanner to ask for more. At
        most two chunks (< 21 KB) are ever queued, which fits any pipe buffer.
        """
        stdin, stdout = self._proc.stdin, self._proc.stdout
        assert stdin is not None and stdout is not None
        chunks = [oids[i : i + self.CHUNK] for i in range(0, len(oids), self.CHUNK)]

        def send(k: int) -> None:
            if k < len(chunks):
                stdin.write(("\n".join(chunks[k]) + "\n").encode("ascii"))
                stdin.flush()

        send(0)
        for k, chunk in enumerate(chunks):
            send(k + 1)
            for oid in chunk:
                header = stdout.readline()
                if not header:
                    raise GitError(f"git cat-file ended early in {self.repo}")
                parts = header.split()
                if len(parts) < 3 or parts[1] == b"missing":
                    yield oid, None
                    continue
                size = int(parts[2])
                data = stdout.read(size)  # exactly size bytes (no slice copy of big blobs)
                stdout.read(1)  # the newline after the contents
                if len(data) != size:
                    raise GitError(f"git cat-file ended early in {self.repo}")
                yield oid, data

    def close(self) -> None:
        proc = self._proc
        for stream in (proc.stdin, proc.stdout):  # closing stdout too: git cannot block on it
            try:
                if stream:
                    stream.close()
            except OSError:
                pass
        # A blocking wait with a kill timer, not wait(timeout=…): that one polls with
        # growing sleeps and cost a one-blob scan several milliseconds of wall time.
        # The timer is a bare thread waiting on a lock (tcg._lean.threads): the
        # threading module's import is a visible share of a one-commit scan.
        from tcg._lean.threads import allocate_lock, start_new_thread

        waited = allocate_lock()
        waited.acquire()

        def kill_after_grace() -> None:
            if not waited.acquire(timeout=KILL_GRACE_S):
                proc.kill()

        start_new_thread(kill_after_grace, ())
        try:
            proc.wait()
        finally:
            waited.release()
