"""Giving back and expiring what the trash holds: `tcg restore`, `tcg trash list`,
`tcg gc`.

Restore refuses rather than guesses (the failures trash-cli fixed in its
restorer are the checklist): a destination that exists — a file, a directory,
or a dangling symlink — is never overwritten or followed; a manifest that does
not verify under the install key, or whose paths are relative, hold ``..`` or
leave the ``--to`` directory, is not acted on; entries go back in reverse
order; a second run of a finished restore says so and changes nothing, and an
interrupted one resumes (entries already back are skipped).
"""

from __future__ import annotations

import errno
import os
import posixpath
import time

from tcg.guard import fsops
from tcg.guard.trash import MANIFEST, RESTORED, SETTLED, Trash, TrashError, _try_lock

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Restored:
    """What one restore did (paths for the user; counts for the event)."""

    def __init__(self, txid: str) -> None:
        self.txid = txid
        self.paths: list[str] = []
        self.git: list[str] = []
        self.already = False
        self.skipped_git = 0
        self.bytes = 0


def check_path(path: object) -> str:
    """An entry path from a manifest, or TrashError when it is not a plain absolute path."""
    if not isinstance(path, str) or not path.startswith("/") or "\0" in path:
        raise TrashError(f"the manifest names a path that is not absolute: {_show(path)}",
                         hint="the transaction was not written by tcg; restore nothing from it")
    if ".." in path.split("/") or posixpath.normpath(path) != path:
        raise TrashError(f"the manifest names a path with '..' or redundant parts: {_show(path)}",
                         hint="the transaction was not written by tcg; restore nothing from it")
    return path


def destination(path: str, cwd: str, to: str | None) -> str:
    """Where an entry goes: its own path, or the same place relative to the
    transaction's working directory under ``to`` (outside it: its absolute path
    below ``to``)."""
    if to is None:
        return path
    base = cwd.rstrip("/") + "/"
    rel = path[len(base):] if path.startswith(base) else path.lstrip("/")
    dest = posixpath.normpath(posixpath.join(to, rel))
    if not rel or not dest.startswith(to.rstrip("/") + "/"):
        raise TrashError(f"{_show(path)} would be restored outside {to}",
                         hint="the transaction was not written by tcg; restore nothing from it")
    return dest


def restore(trash: Trash, txid: str, to: str | None = None) -> Restored:
    trash.recover()
    txdir = trash.txdir(txid)
    manifest = trash.read_doc(txdir, MANIFEST)
    if manifest is None or manifest.get("txid") != txid:
        raise TrashError(f"the manifest of {txid} does not verify under this install's key",
                         hint="it was not written by this tcg install; nothing was restored")
    done = Restored(txid)
    if trash.read_doc(txdir, RESTORED) is not None:
        done.already = True
        return done
    state = trash.state(txdir)
    if state in ("pending", "committed"):
        lock = _try_lock(txdir)
        if lock is None:
            raise TrashError(f"transaction {txid} is still in use (the command that filled it is running)",
                             hint="wait for the command to finish, then run `tcg restore` again")
        os.close(lock)
    cwd = manifest.get("cwd")
    if not isinstance(cwd, str) or not cwd.startswith("/"):
        raise TrashError("the manifest's working directory is not absolute",
                         hint="the transaction was not written by tcg; restore nothing from it")
    if to is not None:
        to = posixpath.normpath(os.path.abspath(to))
    entries: list[dict[str, Any]] = list(manifest.get("entries", []))
    todo: list[tuple[int, str, str]] = []
    refused: list[str] = []
    for i, e in enumerate(entries):
        path = check_path(e.get("path"))
        payload = os.path.join(txdir, "files", str(i))
        if not os.path.lexists(payload):
            continue  # went back when the command left it alone, or restored before an interruption
        dest = destination(path, cwd, to)
        if os.path.lexists(dest):
            refused.append(dest)
        todo.append((i, payload, dest))
    if refused:
        more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
        kind = "a dangling symlink" if os.path.islink(refused[0]) and not os.path.exists(refused[0]) else "it"
        raise TrashError(f"{_show(refused[0])}{more} exists; restore never overwrites {kind}",
                         hint=f"move it out of the way, or restore elsewhere: tcg restore {txid} --to DIR")
    git = list(manifest.get("git", []))
    if to is not None and git and not todo:
        raise TrashError(f"transaction {txid} holds git snapshots only; they are restored in place",
                         hint=f"run `tcg restore {txid}` in the repository (without --to)")
    for i, payload, dest in reversed(todo):
        parent = os.path.dirname(dest)
        os.makedirs(parent, exist_ok=True)
        if os.path.lexists(dest):  # appeared meanwhile (rename would replace an empty directory)
            raise TrashError(f"{_show(dest)} exists; restore never overwrites it",
                             hint=f"move it out of the way and run `tcg restore {txid}` again (it resumes)")
        try:
            os.rename(payload, dest)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise TrashError(f"cannot restore {_show(dest)}: {exc.strerror}",
                                 hint="fix the problem and run `tcg restore` again (it resumes)") from None
            fsops.copy_tree(payload, dest)
            if not fsops.same_tree(payload, dest):
                raise TrashError(f"the restored copy of {_show(dest)} does not match",
                                 hint="the trash still holds it; check the disk and retry") from None
            fsops.remove_tree(payload)
        size = entries[i].get("size")
        done.bytes += int(size) if isinstance(size, int) else 0
        done.paths.append(dest)
    if to is None:
        from tcg.guard import gitsnap

        for g in reversed(git):
            done.git.append(gitsnap.restore(g))
    else:
        done.skipped_git = len(git)
    trash.write_doc(txdir, RESTORED, {"restored": [i for i, _, _ in todo], "to": to,
                                      "time": round(time.time(), 3)})
    return done


# --------------------------------------------------------------------- listing


def rows(trash: Trash) -> list[dict[str, Any]]:
    """One summary per transaction, oldest first (paths shown relative to its cwd)."""
    trash.recover()
    out: list[dict[str, Any]] = []
    for txid, state, manifest in trash.transactions():
        if manifest is None:
            out.append({"txid": txid, "state": "unverified", "created": None, "entries": [], "git": []})
            continue
        txdir = os.path.join(trash.root, txid)
        cwd = str(manifest.get("cwd", "/"))
        settled = trash.read_doc(txdir, SETTLED) or {}
        back = set(settled.get("returned", []))
        shown = []
        for i, e in enumerate(manifest.get("entries", [])):
            if i in back:
                continue
            path = str(e.get("path", "?"))
            rel = path[len(cwd.rstrip("/")) + 1:] if path.startswith(cwd.rstrip("/") + "/") else path
            shown.append({"path": rel, "type": e.get("type"), "role": e.get("role"), "size": e.get("size")})
        git = [{"kind": g.get("kind"), "name": g.get("name"), "ref": g.get("ref"), "sha": g.get("sha")}
               for g in manifest.get("git", [])]
        out.append({"txid": txid, "state": state, "created": manifest.get("created"), "cwd": cwd,
                    "actor": manifest.get("actor"), "entries": shown, "git": git})
    return out


# -------------------------------------------------------------------------- gc


def parse_age(text: str) -> float:
    """``30`` (seconds), ``90s``, ``15m``, ``12h``, ``7d``, ``2w`` → seconds."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
    value = text.strip().lower()
    unit = value[-1:] if value[-1:] in units else "s"
    number = value[:-1] if value[-1:] in units else value
    try:
        seconds = float(number) * units[unit]
    except ValueError:
        raise TrashError(f"not an age: {text!r}", hint="e.g. --older-than 7d (s, m, h, d, w)") from None
    if seconds < 0:
        raise TrashError(f"not an age: {text!r}", hint="e.g. --older-than 7d (s, m, h, d, w)")
    return seconds


def expired(trash: Trash, older_than: float, now: float | None = None) -> list[tuple[str, dict[str, Any] | None]]:
    """Transactions past ``older_than`` seconds that are finished (settled or restored)."""
    trash.recover()
    limit = (time.time() if now is None else now) - older_than
    out: list[tuple[str, dict[str, Any] | None]] = []
    for txid, state, manifest in trash.transactions():
        if state not in ("settled", "restored"):
            continue
        created = manifest.get("created") if manifest else None
        if not isinstance(created, (int, float)):
            try:
                created = os.stat(os.path.join(trash.root, txid)).st_mtime
            except OSError:
                continue
        if created <= limit:
            out.append((txid, manifest))
    return out


def purge(trash: Trash, txid: str, manifest: dict[str, Any] | None) -> int:
    """Delete one transaction for good (its git refs too). Returns bytes freed (files)."""
    txdir = os.path.join(trash.root, txid)
    freed = fsops.tree_bytes(txdir, 1 << 62) if os.path.isdir(txdir) else 0
    if manifest:
        from tcg.guard import gitsnap

        for g in manifest.get("git", []):
            gitsnap.delete_ref(g)
    fsops.remove_tree(txdir)
    return freed


def _show(value: object) -> str:
    text = str(value)
    text = "".join(c if c.isprintable() else "?" for c in text)
    return text if len(text) <= 120 else text[:117] + "..."
