"""When a session settles a delete: the process-tree bookkeeping of
tcg.runner.session_trash, on real processes (the shell tests drive the whole
path in bash and zsh: tests/shells/test_session_guard.py)."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from tcg.runner.session_trash import DeferredSettles, descendants, process_table

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc (Linux)")


def test_descendants_follow_children_of_children():
    child = subprocess.Popen(["/bin/sh", "-c", "sleep 30 & wait"])
    try:
        deadline = time.monotonic() + 30
        while True:  # until the shell has started its sleep (other tests may leave children of ours)
            table = process_table()
            below = descendants(os.getpid(), table)
            grandchildren = descendants(child.pid, table)
            if grandchildren:
                break
            assert time.monotonic() < deadline, below
            time.sleep(0.05)
        assert child.pid in {pid for pid, _start in below}
        assert grandchildren <= below  # the sleep is found below us, through the shell
    finally:
        child.kill()
        child.wait()


def test_snapshot_leaves_out_the_requester_and_its_way_up():
    """A subshell asking about the line it starts with is that line's job, not an
    older one: it is not counted as already running."""
    table = {(10, 1): 1, (11, 5): 10, (12, 6): 11, (13, 7): 10}  # 10 the shell; 11 → 12 the asker
    settles = DeferredSettles({}, lambda *a, **k: None, table=lambda: table)
    assert settles.snapshot(10) == {(11, 5), (12, 6), (13, 7)}
    assert settles.snapshot(10, requester=12) == {(13, 7)}
    assert settles.snapshot(10, requester=10) == {(11, 5), (12, 6), (13, 7)}


def test_a_job_the_line_left_running_holds_the_settle_until_it_ends(monkeypatch):
    settled: list[str] = []
    table = {(10, 1): 1, (13, 7): 10}  # the shell and an older job
    settles = DeferredSettles({}, lambda *a, **k: None, table=lambda: dict(table))
    monkeypatch.setattr(settles, "_settle", lambda txid: (settled.append(txid), settles.held.pop(txid)))
    from tcg.runner.session_trash import Held

    settles.held["tx1"] = Held(10, settles.snapshot(10), lock=-1)
    table[(20, 9)] = 10  # the line's own job (`rm -rf build &`)
    settles.line_over(10)  # the shell's next line
    settles.poll()
    assert settled == [] and settles.held["tx1"].jobs == {(20, 9)}
    del table[(13, 7)]  # an older job ending changes nothing
    settles.poll()
    assert settled == []
    del table[(20, 9)]  # the line's job has ended
    settles.poll()
    assert settled == ["tx1"] and not settles


def test_a_pid_reused_by_another_process_is_not_the_job():
    """(pid, start time) names a process: a new process with the job's pid is not it."""
    table = {(10, 1): 1, (20, 9): 10}
    settles = DeferredSettles({}, lambda *a, **k: None, table=lambda: dict(table))
    from tcg.runner.session_trash import Held

    held = Held(10, set(), lock=-1)
    held.jobs = {(20, 9)}
    settles.held["tx"] = held
    done: list[str] = []
    settles._settle = lambda txid: (done.append(txid), settles.held.pop(txid))  # type: ignore[method-assign]
    table.pop((20, 9))
    table[(20, 99)] = 10  # pid 20 again, a different process
    settles.poll()
    assert done == ["tx"]
