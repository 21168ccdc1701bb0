"""Carry out a verdict's RELOCATE and SNAPSHOT actions just before the command
runs, and settle them after it.

The policy engine only decides; this is the step with effects. The station
calls :func:`prepare` once the line is allowed to run (after a human said yes
to an ASK, too) and :meth:`Prepared.settle` once the command exited. If the
trash cannot take what the line would destroy, the line does not run at all:
the verdict comes back as BLOCK with ``trash-full`` / ``trash-failed`` /
``trash-cross-device`` — never a permanent delete.
"""

from __future__ import annotations

import os
import sys

from tcg.guard.plan import Copy, FindDelete, GitClean, GitSnap, Move
from tcg.guard.trash import Transaction, Trash, TrashError
from tcg.policy.model import Decision, Reason, Verdict

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

ENUM_TIMEOUT_S = 120
ENUM_MAX_BYTES = 64 << 20


class Prepared:
    """A transaction filled for one line, waiting for the command to finish."""

    def __init__(self, tx: Transaction, emit: Callable[..., None]) -> None:
        self.tx = tx
        self.txid = tx.txid
        self._emit = emit
        self.settled: dict[str, list[int]] | None = None

    def settle(self) -> dict[str, list[int]]:
        """Reconcile after the command: untouched placeholders go back to being the
        originals. Records ``guard_settle`` and warns about entries the command
        changed instead of deleting."""
        if self.settled is not None:
            return self.settled
        result = self.tx.settle(exact=True)
        self.settled = result
        self._emit("guard_settle", txid=self.txid, returned=len(result["returned"]), kept=len(result["kept"]),
                   changed=len(result["changed"]))
        if result["changed"]:
            sys.stderr.write(
                f"tcg: {len(result['changed'])} entr{'y' if len(result['changed']) == 1 else 'ies'} moved to the "
                "trash were changed by the command instead of deleted; the originals stay in the trash\n"
                f"hint: compare with `tcg restore {self.txid} --to DIR`\n")
        return result

    def detach(self) -> None:
        """The command runs after this process exits (the shell's own line): a later
        line of the same shell, or any start after the shell is gone, settles it."""
        self.tx.detach()


def prepare(verdict: Verdict, *, actor: str, cwd: str, command_hash: str, policy: Any,
            emit: Callable[..., None], env: Mapping[str, str] | None = None,
            deferred_owner: int | None = None) -> tuple[Verdict, Prepared | None]:
    """Execute ``verdict.actions``. Returns the verdict to act on (BLOCK when the
    trash could not take everything; nothing was changed then) and the prepared
    transaction (None when there was nothing to keep)."""
    actions = verdict.actions
    if not actions:
        return verdict, None
    from tcg.guard.trash import copy_budget

    try:
        trash = Trash.for_install(env)
        trash.recover(owner=deferred_owner)
        max_entries = policy.model.trash.max_entries if policy is not None else None
        max_entries = 10_000 if max_entries is None else max_entries
        tx = trash.begin(cwd=cwd, actor=actor, command_hash=command_hash, deferred_owner=deferred_owner,
                         copy_budget=copy_budget(policy), max_entries=int(max_entries))
        moved, copied = _plan(tx, actions, cwd)
        if not tx:
            if any(isinstance(a, GitSnap) for a in actions):
                emit("guard_snapshot", decision="allow", reason="nothing-to-snapshot", txid=None, files=0,
                     bytes=0, refs=0)
            return verdict, None
        tx.execute()
    except TrashError as exc:
        detail = exc.message + (f" ({exc.hint})" if exc.hint else "")
        refusal = Verdict(Decision.BLOCK, (Reason(exc.code, Decision.BLOCK, " ".join(detail.split())),)
                          + tuple(verdict.reasons))
        return refusal, None
    except OSError as exc:
        what = exc.strerror or type(exc).__name__
        refusal = Verdict(Decision.BLOCK, (Reason("trash-failed", Decision.BLOCK,
                                                  f"preparing the trash failed ({what}); nothing was deleted"),)
                          + tuple(verdict.reasons))
        return refusal, None
    _record(tx, emit)
    del moved, copied
    return verdict, Prepared(tx, emit)


def settle_deferred(owner: int, env: Mapping[str, str] | None = None) -> list[str]:
    """Settle the transactions whose lines ``owner`` (a shell) ran itself, now that
    they have finished: a session calls this when the shell is back at its prompt.
    Also finishes what dead owners left. Returns the txids settled."""
    return Trash.for_install(env).recover(owner=owner)


def _record(tx: Transaction, emit: Callable[..., None]) -> None:
    from tcg.digest import sha256_hex

    try:
        with open(os.path.join(tx.dir, "manifest.json"), "rb") as fh:
            manifest_hash = sha256_hex(fh.read())
    except OSError:
        manifest_hash = None
    moves = [e for e in tx.entries if e["kind"] == "move"]
    copies = [e for e in tx.entries if e["kind"] == "copy"]
    if moves:
        emit("guard_relocate", decision="relocate", reason="delete-relocate", txid=tx.txid, entries=len(moves),
             dirs=sum(1 for e in moves if e["type"] == "dir"),
             bytes=sum(int(e["size"] or 0) for e in moves),
             renamed=sum(1 for e in moves if e["method"] == "rename"),
             copied=sum(1 for e in moves if e["method"] == "copy"), manifest_hash=manifest_hash)
    if copies or tx.git:
        emit("guard_snapshot", decision="snapshot", reason="git-snapshot" if tx.git else "overwrite-snapshot",
             txid=tx.txid, files=len(copies), bytes=sum(int(e["size"] or 0) for e in copies), refs=len(tx.git),
             manifest_hash=manifest_hash)
    if sys.stderr.isatty():
        what = []
        if moves:
            what.append(f"{len(moves)} moved to the trash")
        if copies:
            what.append(f"{len(copies)} copied")
        if tx.git:
            what.append(f"{len(tx.git)} git snapshot{'s' if len(tx.git) > 1 else ''}")
        sys.stderr.write(f"tcg: {', '.join(what)} (tcg restore {tx.txid})\n")


def _plan(tx: Transaction, actions: tuple[Any, ...], cwd: str) -> tuple[int, int]:
    from tcg.guard import gitsnap

    moved = copied = 0
    for a in actions:
        if isinstance(a, Move):
            moved += tx.add(_abs(a.path, cwd), kind="move")
        elif isinstance(a, Copy):
            copied += tx.add(_abs(a.path, cwd), kind="copy", role="overwrite", placeholder=False)
        elif isinstance(a, FindDelete):
            for path in _reduce(_find_paths(a)):
                moved += tx.add(path, kind="move")
        elif isinstance(a, GitClean):
            if gitsnap.git_dir(gitsnap.GitContext(a.cwd, a.options, dict(a.env))) is None:
                continue  # not a repository: git clean refuses by itself
            for path in _git_clean_paths(a):
                moved += tx.add(path, kind="move")
        elif isinstance(a, GitSnap):
            ctx = gitsnap.GitContext(a.cwd, a.options, dict(a.env))
            if gitsnap.git_dir(ctx) is None:
                continue  # not a repository: git refuses the command by itself, nothing to keep
            if a.kind == "worktree":
                entry = gitsnap.snapshot_worktree(ctx, tx.txid)
                entries = [entry] if entry is not None else []
            elif a.kind == "branch":
                entries = gitsnap.snapshot_branches(ctx, tx.txid, list(a.names or ()))
            elif a.kind == "tag":
                entries = gitsnap.snapshot_tags(ctx, tx.txid, list(a.names or ()))
            else:
                entries = gitsnap.snapshot_stash(ctx, tx.txid, None if a.names is None else list(a.names))
            for entry in entries:
                tx.add_git(entry)
    return moved, copied


def _abs(path: str, cwd: str) -> str:
    return os.path.normpath(os.path.join(cwd, path))


def _run(argv: list[str], cwd: str, env: dict[str, str] | None = None) -> bytes:
    import subprocess

    full = dict(os.environ)
    full.update(env or {})
    full.update({"LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0"})
    try:
        proc = subprocess.run(argv, cwd=cwd, env=full, capture_output=True, stdin=subprocess.DEVNULL,
                              timeout=ENUM_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise TrashError(f"{argv[0]} could not list what the command deletes ({type(exc).__name__})",
                         hint="list the files yourself and move them with `tcg trash -- FILE…`") from None
    if len(proc.stdout) > ENUM_MAX_BYTES:
        raise TrashError("the command would delete too many files to list beforehand",
                         hint="delete fewer at a time, or move them with `tcg trash -- FILE…`")
    if proc.returncode != 0 and not proc.stdout:
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise TrashError(f"{argv[0]} failed while listing what the command deletes"
                         + (f": {msg[-1]}" if msg else ""),
                         hint="the command was not run; check it with `tcg check LINE`")
    return proc.stdout


def _find_paths(a: FindDelete) -> set[str]:
    out = _run(list(a.argv), a.cwd)
    return {os.path.normpath(os.path.join(a.cwd, os.fsdecode(p))) for p in out.split(b"\0") if p}


def _reduce(matched: set[str]) -> list[str]:
    """Whole directories only when everything under them matched too (find would
    otherwise fail to remove the directory, and so must we); deepest first."""
    out = []
    from tcg.guard import fsops

    for path in sorted(matched, key=lambda p: (-p.count("/"), p)):
        if os.path.isdir(path) and not os.path.islink(path):
            try:
                inside = [p for p, _st in fsops.walk(path)][1:]
            except OSError:
                continue
            if any(p not in matched for p in inside):
                continue
        out.append(path)
    return out


def _git_clean_paths(a: GitClean) -> list[str]:
    base = a.cwd
    opts = list(a.options)
    for i, opt in enumerate(opts[:-1]):
        if opt == "-C":
            base = os.path.normpath(os.path.join(base, opts[i + 1]))
    flags = set(a.flags)
    argv = ["git", *a.options, "ls-files", "--others", "--directory", "-z"]
    if "-X" in flags:
        argv += ["--ignored", "--exclude-standard"]
    elif "-x" not in flags:
        argv += ["--exclude-standard"]
    argv += [f for f in a.flags if f.startswith("--exclude=")]
    argv += ["--", *a.pathspecs]
    out = _run(argv, a.cwd, dict(a.env))
    paths = []
    for raw in out.split(b"\0"):
        if not raw:
            continue
        name = os.fsdecode(raw)
        is_dir = name.endswith("/")
        path = os.path.normpath(os.path.join(base, name))
        if is_dir:
            if "-d" not in flags:
                continue  # without -d, git clean leaves untracked directories alone
            if os.path.exists(os.path.join(path, ".git")) and "-ff" not in flags:
                continue  # a nested repository: git clean -d skips it without -ff
        paths.append(path)
    return paths
