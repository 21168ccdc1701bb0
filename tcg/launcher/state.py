"""The repository-state key: changes whenever a repo scan's result could change.

Material (research: docs/agents.md "gate cache"):
- every ref and its object id (``git for-each-ref``: branches, tags, remotes,
  ``refs/stash``, ``refs/notes/*``, ``refs/replace/*``) and HEAD;
- the index, as its differences from HEAD (``git status --porcelain=v2`` lists
  each staged entry with its index object id);
- the working tree: every modified tracked and untracked-not-ignored path, with
  the bytes of each such file hashed — content, not mtime, so an edit that adds
  a secret changes the key even within the same clock tick;
- the scanner itself (tcg version and the rule files), since new rules can
  find what old ones did not.
Both git commands run concurrently and read-only (``--no-optional-locks``: the
gate never rewrites the index). The digest is keyed (HMAC, per-install key):
it covers file contents, so it must not be a plain hash of them.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from tcg.errors import TcgError

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


def find_repo(cwd: Path) -> Path | None:
    """The work-tree root of the git repository containing ``cwd``; None outside one."""
    import subprocess

    try:
        proc = subprocess.run(
            ["git", "-C", str(cwd), "rev-parse", "--show-toplevel"],
            capture_output=True,
            env=git_env(),
            check=False,
        )
    except FileNotFoundError:
        # No git: a repository we cannot scan is an error, not "no repository".
        for d in (cwd, *cwd.parents):
            if (d / ".git").exists():
                raise StateError("git is not installed; the repository cannot be scanned",
                                 hint="install git") from None
        return None
    if proc.returncode != 0:
        return None
    top = proc.stdout.decode("utf-8", "surrogateescape").strip()
    return Path(top) if top else None


def _hash_file(h: hashlib._Hash, path: Path) -> None:
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
    fh = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            while chunk := f.read(_CHUNK):
                fh.update(chunk)
    except OSError:
        h.update(b"unreadable\0")
        return
    h.update(b"file\0" + fh.digest())


def _status_paths(out: bytes) -> list[bytes]:
    """Work-tree paths whose bytes the key must cover, from ``status --porcelain=v2 -z``."""
    paths = []
    records = out.split(b"\0")
    i = 0
    while i < len(records):
        rec = records[i]
        i += 1
        if not rec or rec.startswith(b"#"):
            continue
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
            i += 1  # the original path follows as its own record
        elif kind == b"u":
            fields = rec.split(b" ", 10)
            if len(fields) == 11:
                paths.append(fields[10])
    return paths


_REFS = ("for-each-ref", "--format=%(objectname) %(refname)")
_STATUS = ("--no-optional-locks", "status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all",
           "--no-renames", "--ignore-submodules=none")


def _digest(root: Path, refs_out: bytes, status_out: bytes) -> bytes:
    h = hashlib.sha256()
    h.update(b"refs\0" + refs_out + b"\0status\0" + status_out + b"\0files\0")
    for rel in sorted(_status_paths(status_out)):
        h.update(rel + b"\0")
        _hash_file(h, root / os.fsdecode(rel))
    return h.digest()


def _run_all(where: Path, commands: list[tuple[str, ...]], env: dict[str, str]) -> list[tuple[int, bytes]]:
    """Run git commands concurrently: [(exit status, stdout)], stdin/stderr on /dev/null.

    posix_spawn and raw pipes instead of subprocess: this is the cache-hit path,
    and subprocess (with selectors, threading, signal) costs more to import than
    the git commands cost to run. Reading the pipes one after the other cannot
    deadlock: the commands do not depend on each other, so each one finishes.
    """
    if not hasattr(os, "posix_spawnp"):  # pragma: no cover - Windows
        import subprocess

        procs = [subprocess.Popen(["git", "-C", str(where), *c], stdout=subprocess.PIPE,
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
                pid = os.posix_spawnp("git", ["git", "-C", str(where), *args], env, file_actions=actions)
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


def state_material(root: Path) -> bytes:
    """Everything the key covers, as a digest (key it; never store the material)."""
    (rc1, refs_out), (rc2, status_out) = _run_all(root, [_REFS, _STATUS], git_env())
    if rc1 != 0 or rc2 != 0:
        raise StateError(f"git cannot read the repository state of {root}",
                         hint=f"check it with `git -C {root} status`")
    return _digest(root, refs_out, status_out)


def repo_state(cwd: Path) -> tuple[Path, bytes] | None:
    """(work-tree root, state digest) of the repository holding ``cwd``, or None outside one.

    The three git commands run concurrently (porcelain paths are relative to the
    root, so the root is only needed for hashing, after all three finish).
    """
    try:
        (rc0, top_out), (rc1, refs_out), (rc2, status_out) = _run_all(
            cwd, [("rev-parse", "--show-toplevel"), _REFS, _STATUS], git_env())
    except FileNotFoundError:
        find_repo(cwd)  # no git: raises StateError when a repository is there after all
        return None
    if rc0 != 0:
        # Not a repository — or one git cannot read (broken HEAD, dubious ownership):
        # that must not pass as "nothing to scan" (fail closed).
        for d in (cwd, *cwd.resolve().parents):
            if (d / ".git").exists():
                raise StateError(f"git cannot read the repository at {d}",
                                 hint=f"check it with `git -C {d} status`")
        return None
    root = Path(os.fsdecode(top_out.rstrip(b"\n")))
    if rc1 != 0 or rc2 != 0 or not top_out.strip():
        raise StateError(f"git cannot read the repository state of {root}",
                         hint=f"check it with `git -C {root} status`")
    return root, _digest(root, refs_out, status_out)


def scanner_id() -> str:
    """tcg's version and its rule files: a new rule set must not reuse an old 'clean'."""
    import tcg

    parts = [tcg.__version__]
    rules = Path(__file__).resolve().parent.parent / "detect" / "rules"
    try:
        for entry in sorted(os.scandir(rules), key=lambda e: e.name):
            st = entry.stat()
            parts.append(f"{entry.name}:{st.st_size}:{st.st_mtime_ns}")
    except OSError:
        parts.append("rules-unreadable")
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]
