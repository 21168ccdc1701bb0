"""A state machine over the trash: delete (with the command deleting, leaving or
rewriting each stand-in), restore, gc and crashes between any two steps. After
every step the working tree is exactly what the model says, and the contents in
the tree and the trash together are exactly what was ever created minus what gc
expired: nothing is lost, nothing appears."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from tcg.guard import fsops
from tcg.guard.restore import purge, restore
from tcg.guard.trash import Trash, TrashError

NAMES = ["a", "b c", "d\ne", "é", "-f", "dir/x", "dir/y", "dir/sub/z"]
TOP = sorted({n.split("/")[0] for n in NAMES})


class Crash(Exception):
    """Stands for SIGKILL: the transaction object is dropped without cleanup."""


def files_under(root: Path) -> dict[str, bytes]:
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            p = Path(dirpath, f)
            out[str(p.relative_to(root))] = p.read_bytes()
    return out


class TrashMachine(RuleBasedStateMachine):
    @initialize()
    def setup(self) -> None:
        base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
        self.base = Path(tempfile.mkdtemp(prefix="tcg-trash-sm-", dir=base))
        self.work = self.base / "work"
        self.work.mkdir()
        self.trash = Trash(str(self.base / "state" / "trash"), os.urandom(32))
        self.tree: dict[str, bytes] = {}  # the model of the working tree (files)
        self.kept: dict[str, dict[str, bytes]] = {}  # txid -> files the trash keeps (by their original path)
        self.counter = 0

    def teardown(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)

    # ------------------------------------------------------------ rules

    @rule(name=st.sampled_from(NAMES))
    def create(self, name: str) -> None:
        path = self.work / name
        if os.path.lexists(path):
            return
        for prefix in _prefixes(name):
            above = self.work / prefix
            if os.path.lexists(above) and not above.is_dir():
                return
        path.parent.mkdir(parents=True, exist_ok=True)
        self.counter += 1
        data = f"{name}#{self.counter}".encode()
        path.write_bytes(data)
        self.tree[name] = data

    @rule(names=st.lists(st.sampled_from(TOP), min_size=1, max_size=3, unique=True),
          fates=st.lists(st.sampled_from(["deleted", "left", "rewritten"]), min_size=3, max_size=3))
    def delete(self, names: list[str], fates: list[str]) -> None:
        tx = self.trash.begin(cwd=str(self.work), actor="agent", command_hash="0" * 16)
        for t in names:
            tx.add(str(self.work / t))
        if not tx:
            return
        tx.execute()
        # the command: each stand-in deleted, left alone, or written into
        for i, e in enumerate(tx.entries):
            rel = os.path.relpath(e["path"], self.work)
            fate = fates[i % len(fates)]
            inside = {k: v for k, v in self.tree.items() if k == rel or k.startswith(rel + "/")}
            if fate == "left":
                continue
            self.kept.setdefault(tx.txid, {}).update(inside)
            for k in inside:
                del self.tree[k]
            if fate == "deleted":
                fsops.remove_tree(e["path"])
            else:
                self.counter += 1
                data = f"rewritten#{self.counter}".encode()
                target = Path(e["path"]) / "new" if e["type"] == "dir" else Path(e["path"])
                target.write_bytes(data)
                self.tree[os.path.relpath(target, self.work)] = data
        tx.settle(exact=True)

    @precondition(lambda self: self.kept)
    @rule(pick=st.integers(min_value=0, max_value=50))
    def restore_one(self, pick: int) -> None:
        txid = sorted(self.kept)[pick % len(self.kept)]
        try:
            restore(self.trash, txid)
        except TrashError:
            return  # a destination exists: refused, nothing moved
        self.tree.update(self.kept.pop(txid))

    @precondition(lambda self: self.kept)
    @rule(pick=st.integers(min_value=0, max_value=50))
    def gc_one(self, pick: int) -> None:
        txid = sorted(self.kept)[pick % len(self.kept)]
        manifest = self.trash.read_doc(str(Path(self.trash.root) / txid), "manifest.json")
        purge(self.trash, txid, manifest)
        del self.kept[txid]

    @rule(names=st.lists(st.sampled_from(TOP), min_size=1, max_size=3, unique=True),
          stage=st.sampled_from(["before-rename", "after-first-rename", "before-commit", "before-placeholders"]))
    def crash(self, names: list[str], stage: str) -> None:
        tx = self.trash.begin(cwd=str(self.work), actor="agent", command_hash="0" * 16)
        for t in names:
            tx.add(str(self.work / t))
        if not tx:
            return
        real_rename, real_write, real_placeholder = os.rename, fsops.write_new, fsops.make_placeholder
        calls = [0]

        def rename(a, b):  # type: ignore[no-untyped-def]
            calls[0] += 1
            if stage == "before-rename" or (stage == "after-first-rename" and calls[0] == 2):
                raise Crash
            return real_rename(a, b)

        def write_new(path, data, mode=0o600, **kw):  # type: ignore[no-untyped-def]
            if stage == "before-commit" and path.endswith("/committed"):
                raise Crash
            return real_write(path, data, mode, **kw)

        def placeholder(*_a):  # type: ignore[no-untyped-def]
            raise Crash

        os.rename, fsops.write_new = rename, write_new
        if stage == "before-placeholders":
            fsops.make_placeholder = placeholder
        try:
            tx.execute()
        except Crash:
            pass
        finally:
            os.rename, fsops.write_new, fsops.make_placeholder = real_rename, real_write, real_placeholder
        if tx._lock is not None:  # the process died: its lock went with it
            os.close(tx._lock)
            tx._lock = None
        self.trash.recover()

    # ------------------------------------------------------------ invariants

    @invariant()
    def tree_is_the_model(self) -> None:
        if not hasattr(self, "work"):
            return
        assert files_under(self.work) == self.tree

    @invariant()
    def contents_are_conserved(self) -> None:
        if not hasattr(self, "work"):
            return
        in_trash = Counter()
        for txdir in self.trash.txdirs():
            files = Path(txdir) / "files"
            if files.is_dir():
                in_trash.update(files_under(files).values())
        want = Counter()
        for kept in self.kept.values():
            want.update(kept.values())
        assert in_trash == want

    @invariant()
    def no_transaction_is_left_half_done(self) -> None:
        if not hasattr(self, "work"):
            return
        for txdir in self.trash.txdirs():
            assert self.trash.state(txdir) in ("settled", "restored"), txdir


def _prefixes(name: str) -> list[str]:
    parts = name.split("/")
    return ["/".join(parts[: i + 1]) for i in range(len(parts) - 1)]


TrashMachine.TestCase.settings = settings(max_examples=40, stateful_step_count=15, deadline=None,
                                          suppress_health_check=[HealthCheck.too_slow])
test_trash_state_machine = pytest.mark.filterwarnings("ignore")(TrashMachine.TestCase)
