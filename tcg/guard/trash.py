"""The trash: per-transaction directories with a write-ahead manifest.

One mediated line that deletes or overwrites something is one transaction::

    <state>/trash/<txid>/manifest.json    what will move, written before anything moves
                         committed         every entry is in the trash (and git refs written)
                         placeholders.json the stand-ins left for the command (identities)
                         settled.json      which entries went back (the command did not delete them)
                         restored.json     `tcg restore` finished
                         files/<n>         entry n's bytes (a renamed tree, or a verified copy)

Order of a transaction (each step durable before the next): the manifest is
created with O_EXCL and fsynced; each entry is renamed into ``files/`` (same
filesystem) or copied and verified (another filesystem, under a budget); the
commit marker is written; placeholders go where entries were. A crash before
the commit marker rolls the transaction back on the next start (every entry
goes back, the directory is removed: nothing lost, no orphan); a crash after
it settles it (placeholders the command never removed are swapped back for the
originals). Nothing here ever deletes a user's file for good: a full trash is
an error the caller turns into BLOCK.

Manifests and markers are signed with the install key (tcg.signed): a manifest
written by anything else does not verify and is never acted on.
"""

from __future__ import annotations

import os
import time

from tcg.errors import TcgError
from tcg.guard import fsops
from tcg.signed import read_signed_json, signed_bytes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from typing import Any

MANIFEST = "manifest.json"
COMMITTED = "committed"
PLACEHOLDERS = "placeholders.json"
SETTLED = "settled.json"
RESTORED = "restored.json"
FILES = "files"
VERSION = 1
DEFAULT_COPY_BUDGET = 256 << 20
DEFAULT_MAX_ENTRIES = 10_000
STALE_EMPTY_S = 60.0  # a transaction directory with no manifest this old is debris


class TrashError(TcgError):
    """The trash could not take the entries; nothing was deleted. ``code`` is the
    reason code a mediated command is refused with."""

    code = "trash-failed"


class TrashFull(TrashError):
    code = "trash-full"


class TrashCrossDevice(TrashError):
    code = "trash-cross-device"


def copy_budget(policy: Any) -> int:
    """The policy's ``trash.copy-budget`` (bytes the trash may copy for one line: a
    snapshot, or a delete across filesystems), DEFAULT_COPY_BUDGET when unset or invalid."""
    value = policy.model.trash.copy_budget if policy is not None else None
    return value if value is not None and value >= 0 else DEFAULT_COPY_BUDGET


def trash_root(env: Mapping[str, str] | None = None) -> str:
    from tcg.paths import get_paths

    return os.path.join(get_paths(env).state_dir, "trash")


def new_txid() -> str:
    """Readable, unique, and sorted as created (to the millisecond, UTC):
    ``20261201-101530.123-3fa9c2``."""
    now = time.time()
    return (time.strftime("%Y%m%d-%H%M%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}-"
            + os.urandom(3).hex())


def process_start(pid: int) -> str | None:
    """A process's start time (clock ticks since boot, Linux /proc), to tell a live
    owner from a reused pid; None where it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2 :].split()
    return fields[19].decode() if len(fields) > 19 else None


def process_alive(pid: int, start: str | None) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    now = process_start(pid)
    return start is None or now is None or now == start


class Trash:
    """The trash of one install (``root``), signing with ``key``."""

    def __init__(self, root: str, key: bytes) -> None:
        self.root = root
        self.key = key

    @classmethod
    def for_install(cls, env: Mapping[str, str] | None = None) -> Trash:
        from tcg.keyhash import load_or_create_key
        from tcg.paths import get_paths

        return cls(trash_root(env), load_or_create_key(get_paths(env)))

    # ------------------------------------------------------------ signed files

    def _sign(self, tag: str, doc: Any) -> bytes:
        from tcg.events import encode_record  # the json encoder's C part, without importing json

        return signed_bytes(self.key, tag, encode_record(doc).rstrip(b"\n"))

    def read_doc(self, txdir: str, name: str) -> Any:
        """A signed JSON file of the transaction, or None (absent or not verifying).
        A manifest must name its own folder: the tag binds the file's name, not the
        transaction, so a genuine manifest copied into another folder would otherwise
        be rolled back there onto the first transaction's paths."""
        doc = read_signed_json(os.path.join(txdir, name), self.key, f"trash/{name}", legacy=True)
        if name == MANIFEST and (not isinstance(doc, dict) or doc.get("txid") != os.path.basename(txdir)):
            return None
        return doc

    def write_doc(self, txdir: str, name: str, doc: Any, durable: bool = True) -> None:
        """Write a signed document once (O_EXCL). ``durable``: fsync it and its
        directory — for the manifest and the commit marker; the stand-ins' record
        and the settle record can be rebuilt by settling again."""
        path = os.path.join(txdir, name)
        data = self._sign(f"trash/{name}", doc)
        if durable:
            fsops.write_new(path, data)
            fsops.fsync_dir(txdir)
        else:
            fsops.write_new(path, data, sync=False)

    # ------------------------------------------------------------ transactions

    def device(self) -> int | None:
        """st_dev of the trash (or of its nearest existing parent)."""
        path = self.root
        while True:
            try:
                return os.stat(path).st_dev
            except FileNotFoundError:
                parent = os.path.dirname(path)
                if parent == path:
                    return None
                path = parent
            except OSError:
                return None

    def begin(self, *, cwd: str, actor: str, command_hash: str, deferred_owner: int | None = None,
              copy_budget: int = DEFAULT_COPY_BUDGET, max_entries: int = DEFAULT_MAX_ENTRIES) -> Transaction:
        return Transaction(self, cwd=cwd, actor=actor, command_hash=command_hash,
                           deferred_owner=deferred_owner, copy_budget=copy_budget, max_entries=max_entries)

    def txdirs(self) -> list[str]:
        try:
            names = sorted(n for n in os.listdir(self.root) if not n.startswith("."))
        except FileNotFoundError:
            return []
        return [os.path.join(self.root, n) for n in names]

    def state(self, txdir: str) -> str:
        """``restored``, ``settled``, ``committed`` or ``pending`` (no commit marker)."""
        if os.path.exists(os.path.join(txdir, RESTORED)):
            return "restored"
        if os.path.exists(os.path.join(txdir, SETTLED)):
            return "settled"
        if os.path.exists(os.path.join(txdir, COMMITTED)):
            return "committed"
        return "pending"

    def recover(self, *, owner: int | None = None) -> list[str]:
        """Finish what dead owners left: roll back transactions that never
        committed, settle committed ones. ``owner``: also settle deferred
        transactions of this (live) process — the shell whose previous line
        has finished. Returns the txids touched."""
        touched: list[str] = []
        for txdir in self.txdirs():
            state = self.state(txdir)
            if state in ("settled", "restored"):
                continue
            lock = _try_lock(txdir)
            if lock is None:
                continue  # its owner is alive and working on it
            try:
                manifest = self.read_doc(txdir, MANIFEST)
                if manifest is None:
                    if _is_debris(txdir):
                        fsops.remove_tree(txdir)
                        touched.append(os.path.basename(txdir))
                    continue
                info = manifest.get("owner", {})
                deferred = bool(info.get("deferred"))
                if deferred and info.get("pid") != owner and process_alive(int(info["pid"]), info.get("start")):
                    continue
                tx = Transaction.from_manifest(self, txdir, manifest)
                if state == "pending":
                    tx.rollback()
                else:
                    tx.settle(exact=False)
                touched.append(tx.txid)
            finally:
                os.close(lock)
        return touched

    def transactions(self) -> Iterator[tuple[str, str, dict[str, Any] | None]]:
        """(txid, state, manifest or None when it does not verify) for each transaction."""
        for txdir in self.txdirs():
            yield os.path.basename(txdir), self.state(txdir), self.read_doc(txdir, MANIFEST)

    def txdir(self, txid: str) -> str:
        if not txid or "/" in txid or txid.startswith(".") or "\0" in txid:
            raise TrashError(f"not a transaction id: {txid!r}", hint="list them with `tcg trash list`")
        path = os.path.join(self.root, txid)
        if not os.path.isdir(path):
            raise TrashError(f"no transaction {txid} in the trash", hint="list them with `tcg trash list`")
        return path


def _try_lock(txdir: str) -> int | None:
    """An fd holding the transaction's lock, or None when its owner holds it."""
    try:
        fd = os.open(txdir, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return None
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no concurrent owners to detect
        return fd
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _is_debris(txdir: str) -> bool:
    try:
        st = os.stat(txdir)
        payload = os.listdir(os.path.join(txdir, FILES)) if os.path.isdir(os.path.join(txdir, FILES)) else []
    except OSError:
        return False
    return not payload and time.time() - st.st_mtime > STALE_EMPTY_S


class Transaction:
    """One line's worth of relocations, copies and git snapshots."""

    def __init__(self, trash: Trash, *, cwd: str, actor: str, command_hash: str,
                 deferred_owner: int | None, copy_budget: int, max_entries: int,
                 txid: str | None = None) -> None:
        self.trash = trash
        self.txid = txid or new_txid()
        self.dir = os.path.join(trash.root, self.txid)
        self.cwd = cwd
        self.actor = actor
        self.command_hash = command_hash
        self.deferred_owner = deferred_owner
        self.copy_budget = copy_budget
        self.max_entries = max_entries
        self.entries: list[dict[str, Any]] = []
        self.git: list[dict[str, Any]] = []
        self.created = time.time()
        self._lock: int | None = None
        self._fds: dict[int, int | None] = {}
        self._idents: dict[int, tuple[int, int, int]] = {}
        self.committed = False
        self.copied_bytes = 0

    @classmethod
    def from_manifest(cls, trash: Trash, txdir: str, manifest: dict[str, Any]) -> Transaction:
        tx = cls(trash, cwd=str(manifest.get("cwd", "/")), actor=str(manifest.get("actor", "")),
                 command_hash=str(manifest.get("command_hash", "")), deferred_owner=None,
                 copy_budget=0, max_entries=0, txid=os.path.basename(txdir))
        tx.entries = list(manifest.get("entries", []))
        tx.git = list(manifest.get("git", []))
        tx.created = float(manifest.get("created", 0))
        tx.committed = os.path.exists(os.path.join(txdir, COMMITTED))
        ph = trash.read_doc(txdir, PLACEHOLDERS) or {}
        for key, ident in ph.items():
            tx._idents[int(key)] = tuple(ident)  # type: ignore[assignment]
        return tx

    # ---------------------------------------------------------------- plan

    def add(self, path: str, *, kind: str = "move", role: str = "delete", placeholder: bool = True) -> bool:
        """Plan ``path`` (absolute, normalised). ``move`` takes the entry away (the
        command then finds a placeholder, or nothing); ``copy`` keeps a copy and
        leaves the entry in place. False when it does not exist (nothing to keep)."""
        try:
            info = fsops.describe(path)
        except FileNotFoundError:
            return False
        for other in self.entries:
            if other["kind"] == "move" and (path == other["path"] or path.startswith(other["path"].rstrip("/") + "/")):
                return True  # already inside something moving whole
        if kind == "move":
            inner = path.rstrip("/") + "/"
            self.entries = [e for e in self.entries if not (e["kind"] == "move" and e["path"].startswith(inner))]
        self.entries.append({"path": path, "kind": kind, "role": role, "placeholder": placeholder, **info})
        return True

    def add_git(self, entry: dict[str, Any]) -> None:
        self.git.append(entry)

    def __bool__(self) -> bool:
        return bool(self.entries or self.git)

    # ---------------------------------------------------------------- execute

    def execute(self) -> None:
        """Write the manifest, move/copy every entry, write git refs, commit, leave
        placeholders. Raises TrashError (rolled back: nothing changed)."""
        if len(self.entries) > self.max_entries:
            raise TrashError(
                f"the command would move {len(self.entries)} entries into the trash (limit {self.max_entries})",
                hint="delete fewer entries at a time, or raise trash.max-entries in your policy")
        dev = self.trash.device()
        copies = 0
        for e in self.entries:
            if e["kind"] == "move" and dev is not None and e["dev"] == dev:
                e["method"] = "rename"
            else:
                e["method"] = "copy"
                copies += fsops.tree_bytes(e["path"], self.copy_budget)
        if copies > self.copy_budget:
            where = "on another filesystem than the trash" if any(
                e["kind"] == "move" and e["method"] == "copy" for e in self.entries) else "to keep"
            raise TrashCrossDevice(
                f"{_mib(copies)} would have to be copied into the trash ({where}); "
                f"the copy budget is {_mib(self.copy_budget)}",
                hint="move the files yourself, or raise trash.copy-budget in your policy")
        free = fsops.free_bytes(os.path.dirname(self.trash.root) if not os.path.isdir(self.trash.root)
                                else self.trash.root)
        if copies and free is not None and copies + (64 << 10) > free:
            raise TrashFull(f"the trash has {_mib(free)} free, {_mib(copies)} are needed",
                            hint="free space (`tcg gc --older-than 7d --apply`) and run the command again")
        self.copied_bytes = copies
        try:
            self._write_intent()
        except OSError as exc:
            self._discard_dir()
            raise _trash_error(exc, "writing the manifest") from None
        try:
            self._move_all()
            self._write_git_refs()
            fsops.write_new(os.path.join(self.dir, COMMITTED), b"")
            fsops.fsync_dir(self.dir)
        except OSError as exc:
            self.rollback()
            raise _trash_error(exc, "moving the entries") from None
        except TrashError:
            self.rollback()
            raise
        self.committed = True
        self._leave_placeholders()

    def _write_intent(self) -> None:
        os.makedirs(self.trash.root, mode=0o700, exist_ok=True)
        os.mkdir(self.dir, 0o700)
        os.mkdir(os.path.join(self.dir, FILES), 0o700)
        self._lock = _try_lock(self.dir)
        owner = self.deferred_owner if self.deferred_owner is not None else os.getpid()
        manifest = {
            "v": VERSION, "txid": self.txid, "created": round(self.created, 3), "cwd": self.cwd,
            "actor": self.actor, "command_hash": self.command_hash,
            "owner": {"pid": owner, "start": process_start(owner), "deferred": self.deferred_owner is not None},
            "entries": self.entries, "git": self.git,
        }
        self.trash.write_doc(self.dir, MANIFEST, manifest)
        fsops.fsync_dir(self.trash.root)

    def payload(self, index: int) -> str:
        return os.path.join(self.dir, FILES, str(index))

    def _move_all(self) -> None:
        parents: set[str] = set()
        for i, e in enumerate(self.entries):
            dst = self.payload(i)
            if e["method"] == "rename":
                os.rename(e["path"], dst)
                parents.add(os.path.dirname(e["path"]))
            else:
                fsops.copy_tree(e["path"], dst)
                if not fsops.same_tree(e["path"], dst):
                    raise TrashError(f"the copy of {e['path']} in the trash does not match the original",
                                     hint="check the disk, then run the command again")
        # The renames need no fsync of their own: the commit marker's fsync commits
        # them with it (journalled filesystems order metadata), and a rename lost to
        # a power cut leaves the entry where it was — which recovery expects.
        del parents

    def _write_git_refs(self) -> None:
        if not self.git:
            return
        from tcg.guard import gitsnap

        for g in self.git:
            gitsnap.write_ref(g)

    def _leave_placeholders(self) -> None:
        idents: dict[str, list[int]] = {}
        for i, e in enumerate(self.entries):
            if e["kind"] != "move" or e["method"] != "rename" or not e["placeholder"] or e["type"] == "special":
                continue
            try:
                fd, ident = fsops.make_placeholder(e["path"], e)
            except OSError:
                continue  # the command will find nothing there: still nothing lost
            self._fds[i] = fd
            self._idents[i] = ident
            idents[str(i)] = list(ident)
        if idents:
            try:
                self.trash.write_doc(self.dir, PLACEHOLDERS, idents, durable=False)
            except OSError:
                pass  # settling in this process uses the fds; a later one is conservative

    def detach(self) -> None:
        """Hand the transaction to a later settle (the deferred owner's next line)."""
        for fd in self._fds.values():
            if fd is not None:
                os.close(fd)
        self._fds.clear()
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    # ---------------------------------------------------------------- settle

    def settle(self, exact: bool = True) -> dict[str, list[int]]:
        """After the command: an entry whose placeholder is still there, untouched,
        was not deleted — it goes back. Copies of entries still present and equal
        are dropped. Returns {"returned": […], "kept": […], "changed": […]}."""
        returned: list[int] = []
        kept: list[int] = []
        changed: list[int] = []
        for i, e in enumerate(self.entries):
            path, payload = e["path"], self.payload(i)
            if not os.path.lexists(payload):
                continue
            if e["method"] == "copy":
                if os.path.lexists(path) and fsops.same_tree(payload, path):
                    fsops.remove_tree(payload)
                    returned.append(i)
                elif os.path.lexists(path) and e["kind"] == "move":
                    changed.append(i)
                else:
                    kept.append(i)
                continue
            ident = self._idents.get(i)
            if ident is None:
                if not exact and not self._idents and not os.path.lexists(path):
                    # recovering a transaction that died before leaving placeholders:
                    # the command never ran, so nothing of it was deleted
                    os.rename(payload, path)
                    returned.append(i)
                elif os.path.lexists(path):
                    changed.append(i)
                else:
                    kept.append(i)
                continue
            state = fsops.placeholder_state(path, self._fds.get(i) if exact else None, ident)
            if state == "untouched":
                try:
                    fsops.remove_placeholder(path, e)
                    os.rename(payload, path)
                    returned.append(i)
                except OSError:
                    changed.append(i)
            elif state == "deleted":
                kept.append(i)
            else:
                changed.append(i)
        for fd in self._fds.values():
            if fd is not None:
                os.close(fd)
        self._fds.clear()
        result = {"returned": returned, "kept": kept, "changed": changed}
        if returned and not kept and not changed and not self.git and len(returned) == len(self.entries):
            fsops.remove_tree(self.dir)  # nothing was deleted after all: no transaction to keep
        else:
            try:
                self.trash.write_doc(self.dir, SETTLED, {**result, "time": round(time.time(), 3)}, durable=False)
            except FileExistsError:
                pass
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None
        return result

    def finish(self) -> None:
        """For `tcg trash` itself: nothing will run after it; the entries stay."""
        self.trash.write_doc(self.dir, SETTLED, {"returned": [], "kept": list(range(len(self.entries))),
                                                 "changed": [], "time": round(time.time(), 3)})
        self.detach()

    # ---------------------------------------------------------------- rollback

    def rollback(self) -> None:
        """Undo an uncommitted transaction: every entry goes back where it was,
        copies and refs are dropped, the directory is removed."""
        conflicts: list[int] = []
        for i, e in reversed(list(enumerate(self.entries))):
            payload = self.payload(i)
            if not os.path.lexists(payload):
                continue
            if e.get("method") == "copy":
                fsops.remove_tree(payload)  # the original never moved: this is a (partial) copy
            elif os.path.lexists(e["path"]):
                conflicts.append(i)  # something new took its place: keep both, lose nothing
            else:
                os.rename(payload, e["path"])
        if conflicts:
            self.trash.write_doc(self.dir, SETTLED, {"returned": [], "kept": sorted(conflicts), "changed": [],
                                                     "time": round(time.time(), 3)})
            self.detach()
            return
        if self.git:
            from tcg.guard import gitsnap

            for g in self.git:
                gitsnap.delete_ref(g)
        for fd in self._fds.values():
            if fd is not None:
                os.close(fd)
        self._fds.clear()
        self._discard_dir()

    def _discard_dir(self) -> None:
        if os.path.isdir(self.dir):
            fsops.remove_tree(self.dir)
            fsops.fsync_dir(self.trash.root)
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None


def _trash_error(exc: OSError, doing: str) -> TrashError:
    if exc.errno in fsops.FULL_ERRNOS:
        return TrashFull(f"the trash is full ({doing}); nothing was deleted",
                         hint="free space (`tcg gc --older-than 7d --apply`) and run the command again")
    what = exc.strerror or type(exc).__name__
    where = f": {exc.filename}" if exc.filename else ""
    return TrashError(f"the trash could not take the entries ({doing}: {what}{where}); nothing was deleted",
                      hint="fix the problem, or delete the files yourself outside the agent")


def _mib(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB" if n >= 1 << 20 else f"{n} bytes"
