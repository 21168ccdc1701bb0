"""The stat witness: reuse a repository's state key without running git.

Computing the state key runs git (refs, status) and hashes modified files:
several milliseconds, most of a cache-hit launch. So when git has computed a
key, the gate also records the stat data — (mode, dev, inode, size, mtime_ns,
ctime_ns) — of everything that key depends on:

- in ``.git``: HEAD, packed-refs, index, config, config.worktree, shallow,
  info/exclude, info/attributes, info/sparse-checkout, info/grafts,
  objects/info/alternates, logs/refs/stash, and every directory under
  ``refs`` (git updates a loose ref by creating a lock file in its directory and
  renaming it, which changes the directory's mtime);
- outside the repository: the global and system git config files and the
  global excludes and attributes files (core.excludesFile and the XDG
  defaults), and the git-related environment (GIT_*, HOME, XDG_CONFIG_HOME);
- in the work tree: every tracked file (``git ls-files``), every untracked
  file that is not ignored, every ``.gitignore``/``.gitattributes``, and every
  directory that is not wholly ignored — a new file changes its directory's
  mtime, wherever it appears (top level, a new nested directory, a directory
  holding only ignored files, an empty directory).

The next launch (tcg.launcher.fastpath.witness_check) stats the same names
(directories first, in chunks, so a stale witness fails early); names that did
not exist must still not exist. When every tuple is identical, the stored key
is the key git would compute, and no git runs. Anything else — a missing or
unreadable witness, one difference — takes the git path, which records a
fresh witness.

Racy timestamps (as git's own index handles them): a file changed in the
same clock tick as the witness could change again without changing its stat.
So a witness is recorded only when every entry's mtime and ctime are more than
RACY_NS older than the moment git started; otherwise the next launch runs git
again (by then the files are old enough). ctime cannot be set by a user, so an
edit after the witness always changes it, even when size and mtime are kept.

Not recorded (git path every time): linked worktrees and ``.git`` files,
submodules (gitlinks in the index, or ``.git/modules``), unmerged index
entries, reftable repositories, ``core.worktree`` elsewhere, a cwd inside
``.git``, GIT_DIR, GIT_WORK_TREE, GIT_COMMON_DIR, GIT_CEILING_DIRECTORIES or
GIT_DISCOVERY_ACROSS_FILESYSTEM set, a bare-repository-shaped directory
between cwd and the work tree.

The file (``<scan cache>/<keyed repo hash>.witness``, 0600, marshal) holds the
keyed state key, the stat tuples and the names — relative paths, encrypted
under the install key (a keystream from SHA-256 in counter mode, SHAKE-256 for
long lists, seeded by an HMAC of a fresh nonce), so the cache holds no
readable path or file name.
"""

from __future__ import annotations

import os

from tcg.launcher.fastpath import (
    WITNESS_VERSION,
    discover,
    env_record,
    keystream,
    stat_tuple,
    witness_check,
    witness_path,
    xor,
)

TYPE_CHECKING = False  # typing costs ~3 ms of import on the cache-hit path
if TYPE_CHECKING:
    from tcg.keyhash import KeyedHasher
    from tcg.launcher.state import RepoState

__all__ = ["RACY_NS", "check", "discover", "store", "witness_names", "witness_path"]

RACY_NS = 2_000_000_000  # generous: covers coarse (1-2 s) filesystem timestamps and clock ticks

GIT_FILES = (
    "HEAD", "packed-refs", "index", "config", "config.worktree", "shallow", "info/exclude",
    "info/attributes", "info/sparse-checkout", "info/grafts", "objects/info/alternates", "logs/refs/stash",
)
# Present in repositories the witness does not model: always ask git.
UNSUPPORTED_GIT_ENTRIES = ("commondir", "reftable", "modules")

check = witness_check


def _global_files(excludes_file: str | None) -> list[str]:
    """Files outside the repository that change what git status says."""
    env = os.environ
    home = env.get("HOME") or os.path.expanduser("~")
    xdg = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    out = [os.path.join(home, ".gitconfig"), os.path.join(xdg, "git", "config"),
           os.path.join(xdg, "git", "ignore"), os.path.join(xdg, "git", "attributes"), "/etc/gitconfig"]
    for var in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"):
        if env.get(var):
            out.append(env[var])
    if excludes_file:
        out.append(os.path.abspath(os.path.expanduser(excludes_file)))
    return out


def _ref_dirs(git_dir: str) -> list[str]:
    out = []
    stack = ["refs"]
    while stack:
        rel = stack.pop()
        out.append(".git/" + rel)
        try:
            with os.scandir(os.path.join(git_dir, rel)) as it:
                for e in it:
                    if e.is_dir(follow_symlinks=False):
                        stack.append(rel + "/" + e.name)
        except OSError:
            pass
    return out


def _work_tree(root: str, ignored_dirs: set[str]) -> tuple[list[str], list[str]]:
    """(every directory that is not wholly ignored, every .gitignore/.gitattributes), relative.

    Nested repositories are recorded (their directory) but not entered: git
    lists them as one untracked entry and does not look inside either.
    """
    dirs: list[str] = []
    files: list[str] = []
    stack = [""]
    while stack:
        rel = stack.pop()
        dirs.append(rel or ".")
        try:
            it = os.scandir(os.path.join(root, rel) if rel else root)
        except OSError:
            continue
        with it:
            for e in it:
                name = e.name
                r = f"{rel}/{name}" if rel else name
                if e.is_dir(follow_symlinks=False):
                    if name == ".git" or r in ignored_dirs:
                        continue
                    if os.path.lexists(os.path.join(e.path, ".git")):
                        dirs.append(r)
                        continue
                    stack.append(r)
                elif name in (".gitignore", ".gitattributes"):
                    files.append(r)
    return dirs, files


def witness_names(found: RepoState) -> list[str] | None:
    """Everything whose stat the key depends on (relative to the root, or absolute); None: unsupported."""
    root, git_dir = found.root, found.git_dir
    if os.path.normpath(git_dir) != os.path.join(root, ".git") or not os.path.isdir(git_dir) \
            or os.path.islink(git_dir):
        return None
    if any(os.path.lexists(os.path.join(git_dir, e)) for e in UNSUPPORTED_GIT_ENTRIES):
        return None
    names = [".git/" + f for f in GIT_FILES]
    names += _global_files(found.excludes_file)
    names += _ref_dirs(git_dir)
    tracked = []
    for rec in found.tracked.split(b"\0"):
        if not rec:
            continue
        meta, _, path = rec.partition(b"\t")
        mode, _, rest = meta.partition(b" ")
        if mode == b"160000" or not rest.endswith(b" 0"):
            return None  # a submodule, or an unmerged entry
        tracked.append(os.fsdecode(path))
    ignored_dirs = {os.fsdecode(p[:-1]) for p in found.ignored if p.endswith(b"/")}
    dirs, extra = _work_tree(root, ignored_dirs)
    # Directories first: they change most often (any new file), so a stale witness fails early.
    names += dirs
    names += extra
    names += [os.fsdecode(p) for p in found.untracked]
    names += tracked
    return names


# ------------------------------------------------------------ store


def store(scan_cache: str, repo_hash: str, found: RepoState, state_key: str, hasher: KeyedHasher) -> bool:
    """Record the witness of ``found`` (whose key is ``state_key``); False when not recorded.

    Racy: any entry changed less than RACY_NS before git started (or after)
    might change again unseen, so no witness is recorded (and a stale one is
    removed); the next launch asks git again.
    """
    from tcg.launcher.cache import write_private

    path = witness_path(scan_cache, repo_hash)
    names = witness_names(found)
    stats: list[tuple[int, ...]] | None = None
    if names is not None:
        join, root = os.path.join, found.root
        present, absent, stats = [], [], []
        for name in dict.fromkeys(names):  # once each, in order
            st = stat_tuple(join(root, name))
            if st is None:
                absent.append(name)
            else:
                present.append(name)
                stats.append(st)
        names = present + absent
        limit = found.started_ns - RACY_NS
        if any(s[4] >= limit or s[5] >= limit for s in stats):
            stats = None
    if stats is None or names is None:
        try:
            os.unlink(path)
        except OSError:
            pass
        return False
    import marshal

    plain = env_record() + b"\0\0" + "\0".join(names).encode("utf-8", "surrogateescape")
    nonce = os.urandom(16)
    entry = {"v": WITNESS_VERSION, "state": state_key, "nonce": nonce,
             "names": xor(plain, keystream(hasher, nonce, len(plain))), "stats": stats}
    write_private(path, marshal.dumps(entry), hasher.key)
    return True
