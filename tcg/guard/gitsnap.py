"""Git snapshots: what a destructive git command would lose, pinned under
``refs/tcg/…`` before it runs, and put back by `tcg restore`.

- working tree and index (``reset --hard``, ``checkout -- …``, ``restore``,
  ``rm``): ``git stash create`` makes a commit of both — including files that
  were staged but never committed, which ``reset --hard`` deletes — without
  touching anything; ``refs/tcg/snapshots/<txid>`` keeps it from gc. On a clean
  tree it prints nothing: there is nothing to snapshot and no ref is written.
- a branch (``branch -D``): its reflog is deleted with it, so the old tip goes
  to ``refs/tcg/branches/<txid>/<name>``.
- stash entries (``stash drop``, ``stash clear``): ``refs/tcg/stash/<txid>/<n>``.
- tags (``tag -d``): ``refs/tcg/tags/<txid>/<name>``.

Every git invocation gets the same ``-C``/``--git-dir``/``--work-tree`` options
and ``GIT_*`` variables as the command being guarded, so the snapshot is of the
repository that command acts on.
"""

from __future__ import annotations

import os
import subprocess

from tcg.guard.trash import TrashError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

TIMEOUT_S = 60


class GitContext:
    """How to reach the repository a guarded git command acts on."""

    def __init__(self, cwd: str, options: tuple[str, ...] = (), env: dict[str, str] | None = None) -> None:
        self.cwd = cwd
        self.options = tuple(options)
        self.env = dict(env or {})

    @classmethod
    def of(cls, entry: dict[str, Any]) -> GitContext:
        return cls(str(entry["cwd"]), tuple(entry.get("git", ())), dict(entry.get("env", {})))

    def as_entry(self) -> dict[str, Any]:
        return {"cwd": self.cwd, "git": list(self.options), "env": dict(self.env)}

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        env = dict(os.environ)
        env.update(self.env)
        env.update({"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0"})
        env.pop("GIT_EDITOR", None)
        try:
            proc = subprocess.run(["git", *self.options, *args], cwd=self.cwd, env=env, capture_output=True,
                                  stdin=subprocess.DEVNULL, timeout=TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise TrashError(f"git could not be run for the snapshot ({type(exc).__name__})",
                             hint="check that git is installed and the repository is reachable") from None
        if check and proc.returncode != 0:
            msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            raise TrashError(f"git {args[0]} failed: {msg[-1] if msg else proc.returncode}",
                             hint="the command was not run; fix the repository state and try again")
        return proc

    def out(self, *args: str) -> str:
        return self.run(*args).stdout.decode("utf-8", "surrogateescape").strip()


def git_dir(ctx: GitContext) -> str | None:
    proc = ctx.run("rev-parse", "--absolute-git-dir", check=False)
    return proc.stdout.decode("utf-8", "surrogateescape").strip() or None if proc.returncode == 0 else None


def worktree_changes(ctx: GitContext) -> bool | None:
    """True when the index or tracked files differ from HEAD (what ``stash create``
    would capture); None when that cannot be told (not a repository, no HEAD)."""
    proc = ctx.run("status", "--porcelain=v1", "--untracked-files=no", "--ignore-submodules=all", "-z",
                   check=False)
    if proc.returncode != 0:
        return None
    return bool(proc.stdout.strip(b"\0"))


def snapshot_worktree(ctx: GitContext, txid: str) -> dict[str, Any] | None:
    """A stash commit of the index and tracked changes, or None on a clean tree."""
    sha = ctx.out("stash", "create", f"tcg snapshot {txid}")
    if not sha:
        return None
    return {**ctx.as_entry(), "kind": "worktree", "sha": sha, "ref": f"refs/tcg/snapshots/{txid}",
            "name": None, "repo": git_dir(ctx)}


def snapshot_branches(ctx: GitContext, txid: str, names: list[str]) -> list[dict[str, Any]]:
    return _snapshot_refs(ctx, txid, names, "branch", "refs/heads/{}^{{commit}}", "refs/tcg/branches")


def snapshot_tags(ctx: GitContext, txid: str, names: list[str]) -> list[dict[str, Any]]:
    return _snapshot_refs(ctx, txid, names, "tag", "refs/tags/{}", "refs/tcg/tags")


def _snapshot_refs(ctx: GitContext, txid: str, names: list[str], kind: str, spec: str,
                   into: str) -> list[dict[str, Any]]:
    """Where each existing ref of ``names`` points (missing ones: nothing to keep)."""
    out = []
    for name in names:
        proc = ctx.run("rev-parse", "--verify", "--quiet", spec.format(name), check=False)
        sha = proc.stdout.decode().strip()
        if proc.returncode == 0 and sha:
            out.append({**ctx.as_entry(), "kind": kind, "sha": sha, "name": name, "ref": f"{into}/{txid}/{name}",
                        "repo": git_dir(ctx)})
    return out


def snapshot_stash(ctx: GitContext, txid: str, which: list[str] | None) -> list[dict[str, Any]]:
    """Stash entries ``which`` (``stash@{n}`` forms; None = all of them)."""
    proc = ctx.run("stash", "list", "--format=%H%x00%gs", check=False)
    listed = [line.split("\0", 1) for line in proc.stdout.decode("utf-8", "replace").splitlines() if "\0" in line]
    chosen: list[tuple[int, str, str]] = []
    if which is None:
        chosen = [(i, sha, msg) for i, (sha, msg) in enumerate(listed)]
    else:
        for spec in which or ["stash@{0}"]:
            index = _stash_index(spec)
            if index is not None and index < len(listed):
                chosen.append((index, *listed[index]))  # type: ignore[arg-type]
    return [{**ctx.as_entry(), "kind": "stash", "sha": sha, "name": msg, "ref": f"refs/tcg/stash/{txid}/{i}",
             "repo": git_dir(ctx)} for i, sha, msg in chosen]


def _stash_index(spec: str) -> int | None:
    if spec.isdigit():
        return int(spec)
    if spec.startswith("stash@{") and spec.endswith("}") and spec[7:-1].isdigit():
        return int(spec[7:-1])
    return None


def write_ref(entry: dict[str, Any]) -> None:
    ctx = GitContext.of(entry)
    ctx.run("update-ref", "-m", "tcg snapshot", entry["ref"], entry["sha"], "")


def delete_ref(entry: dict[str, Any]) -> None:
    GitContext.of(entry).run("update-ref", "-d", entry["ref"], check=False)


def restore(entry: dict[str, Any]) -> str:
    """Put one snapshot back. Returns what was done; raises TrashError when git
    refuses (nothing is forced over the current state)."""
    ctx = GitContext.of(entry)
    kind, sha, name = entry["kind"], entry["sha"], entry.get("name")
    if kind == "worktree":
        proc = ctx.run("stash", "apply", "--index", sha, check=False)
        if proc.returncode != 0:
            ctx.run("stash", "apply", sha)  # the index could not be rebuilt: the changes at least
        return f"working tree and index from {sha[:12]}"
    if kind in ("branch", "tag"):
        ref = f"refs/heads/{name}" if kind == "branch" else f"refs/tags/{name}"
        current = ctx.run("rev-parse", "--verify", "--quiet", ref, check=False)
        if current.returncode == 0:
            if current.stdout.decode().strip() == sha:
                return f"{kind} {name} already at {sha[:12]}"
            raise TrashError(f"{kind} {name} exists again and points elsewhere",
                             hint=f"keep the old one under another name: git update-ref {ref}-old {sha}")
        ctx.run("update-ref", ref, sha, "")
        return f"{kind} {name} at {sha[:12]}"
    if kind == "stash":
        listed = ctx.run("stash", "list", "--format=%H", check=False).stdout.decode().split()
        if sha in listed:
            return f"stash entry {sha[:12]} already present"
        ctx.run("stash", "store", "-m", str(name or "restored by tcg"), sha)
        return f"stash entry {sha[:12]}"
    raise TrashError(f"unknown snapshot kind {kind!r} in the manifest", hint="the transaction cannot be restored")
