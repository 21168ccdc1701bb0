"""The trash as a state machine (hypothesis RuleBasedStateMachine): random
sequences of `tcg trash`, `tcg restore` (in place, or `--to` when the place is
taken), `tcg gc` and writes to a temp tree, run through tcg's own CLI entry
point in-process. A model of the tree and of what the trash holds must match
the disk after every step: a restore always gives back the original bytes,
nothing is lost (gc removes only what is past its age), a taken destination is
never overwritten, and every manifest verifies (docs/reliability.md)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from tcg.cli import main as tcg_main

FILES = ("a.txt", "b.bin", "d/c.txt", "d/e/f.txt")


def _tcg(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = tcg_main(list(args))
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 1
    return rc, out.getvalue(), err.getvalue()


def _disk(root: str) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    for base, _dirs, names in os.walk(root):
        for n in names:
            path = os.path.join(base, n)
            with open(path, "rb") as fh:
                found[os.path.relpath(path, root)] = fh.read()
    return found


def _deleted(gc_output: str) -> list[str]:
    return [ln for ln in gc_output.splitlines() if ln.startswith("deleted ")]


def _under(path: str, target: str) -> bool:
    return path == target or path.startswith(target + "/")


class TrashMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.base = tempfile.mkdtemp(prefix="trash-sm-")
        self.root = os.path.join(self.base, "tree")
        os.mkdir(self.root)
        self.old_cwd = os.getcwd()
        os.chdir(self.root)
        self.tree: dict[str, bytes] = {}
        self.held: dict[str, dict[str, bytes]] = {}  # txid -> the files it holds (path -> bytes)
        self.targets: dict[str, list[str]] = {}  # txid -> the paths given to `tcg trash`
        self.elsewhere = 0

    def teardown(self) -> None:
        os.chdir(self.old_cwd)
        import shutil

        shutil.rmtree(self.base, ignore_errors=True)

    @rule(name=st.sampled_from(FILES), data=st.binary(max_size=300))
    def write(self, name: str, data: bytes) -> None:
        os.makedirs(os.path.dirname(name) or ".", exist_ok=True)
        with open(name, "wb") as fh:
            fh.write(data)
        self.tree[name] = data

    @precondition(lambda self: bool(self.tree))
    @rule(pick=st.data())
    def trash(self, pick: st.DataObject) -> None:
        candidates = sorted(set(self.tree) | {p.split("/")[0] for p in self.tree if "/" in p})
        chosen = pick.draw(st.lists(st.sampled_from(candidates), min_size=1, max_size=3, unique=True))
        chosen = [c for c in chosen if not any(c != o and _under(c, o) for o in chosen)]
        rc, out, err = _tcg("trash", "--", *chosen)
        assert rc == 0, (out, err)
        txid = out.rsplit("tcg restore ", 1)[1].split()[0]
        moved = {p: b for p, b in self.tree.items() if any(_under(p, c) for c in chosen)}
        assert moved
        for p in moved:
            del self.tree[p]
            assert not os.path.lexists(p)
        self.held[txid] = moved
        self.targets[txid] = chosen

    @precondition(lambda self: bool(self.held))
    @rule(pick=st.data())
    def restore(self, pick: st.DataObject) -> None:
        txid = pick.draw(st.sampled_from(sorted(self.held)))
        taken = [t for t in self.targets[txid] if os.path.lexists(t)]
        rc, out, err = _tcg("restore", txid)
        if taken:
            assert rc == 1 and "restore never overwrites" in err, (rc, out, err)
            self.elsewhere += 1
            alt = os.path.join(self.base, f"elsewhere{self.elsewhere}")
            rc, out, err = _tcg("restore", txid, "--to", alt)
            assert rc == 0, (out, err)
            assert _disk(alt) == self.held.pop(txid)  # the original bytes, in the same layout
        else:
            assert rc == 0, (out, err)
            back = self.held.pop(txid)
            for p, data in back.items():
                with open(p, "rb") as fh:
                    assert fh.read() == data
            self.tree.update(back)
        rc, out, _ = _tcg("restore", txid)
        assert rc == 0 and "already restored" in out  # a second restore changes nothing

    @rule(apply=st.booleans())
    def gc_young(self, apply: bool) -> None:
        """Nothing in the trash is an hour old: gc deletes nothing, applied or not."""
        rc, out, err = _tcg("gc", "--older-than", "1h", *(["--apply"] if apply else []))
        assert rc == 0 and not _deleted(out), (out, err)

    @rule()
    def gc_dry_run_of_everything(self) -> None:
        rc, out, err = _tcg("gc", "--older-than", "0s")
        assert rc == 0 and not _deleted(out), (out, err)
        for txid in self.held:
            assert f"would delete {txid}" in out

    @invariant()
    def tree_matches_the_model(self) -> None:
        assert _disk(self.root) == self.tree

    @invariant()
    def trash_holds_what_the_model_says_and_manifests_verify(self) -> None:
        rc, out, err = _tcg("trash", "list", "--json")
        assert rc == 0, err
        rows = {r["txid"]: r for r in map(json.loads, out.splitlines())}
        assert all(r["state"] != "unverified" for r in rows.values())
        for txid, chosen in self.targets.items():
            if txid in self.held:
                assert rows[txid]["state"] == "settled"
                assert sorted(e["path"] for e in rows[txid]["entries"]) == sorted(chosen)
            else:
                assert rows[txid]["state"] == "restored"


def test_trash_restore_gc_sequences_lose_nothing(tcg_home):
    run_state_machine_as_test(
        TrashMachine,
        settings=settings(max_examples=60, stateful_step_count=20, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow]),
    )


@pytest.mark.parametrize("age", ["0s"])
def test_gc_of_finished_transactions_leaves_the_tree_alone(tcg_home, tmp_path, monkeypatch, age):
    """gc --apply at age 0 expires every finished transaction — and only the trash:
    the working tree is untouched and a purged id is gone for good."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "keep.txt").write_bytes(b"keep")
    (tmp_path / "gone.txt").write_bytes(b"gone")
    rc, out, _ = _tcg("trash", "--", "gone.txt")
    txid = out.rsplit("tcg restore ", 1)[1].split()[0]
    rc, out, err = _tcg("gc", "--older-than", age, "--apply")
    assert rc == 0 and f"deleted {txid}" in out, (out, err)
    assert _disk(str(tmp_path)) == {"keep.txt": b"keep"}
    rc, _, err = _tcg("restore", txid)
    assert rc == 1 and "no transaction" in err
