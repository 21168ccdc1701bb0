"""tcg.jsonl: the one appender (torn tails isolated, failed writes cut back,
rotation by size that never splits a record) and the readers across rotations."""

from __future__ import annotations

import json
import os
import threading

import pytest

from tcg import jsonl
from tcg.events import EventLog, build_record, follow_records, iter_records, set_rotation


def line(n: int, pad: int = 0) -> bytes:
    return (json.dumps({"n": n, "pad": "x" * pad}) + "\n").encode()


def numbers(path) -> list[int]:
    """Records of ``path`` and its rotated files, oldest first."""
    return [json.loads(raw)["n"] for raw in jsonl.iter_lines(str(path))]


def numbers_in(path) -> list[int]:
    """Records of the one file ``path``."""
    return [json.loads(raw)["n"] for raw in open(path, "rb")]


def test_rotation_keeps_n_files_and_never_splits_a_record(tmp_path):
    path = str(tmp_path / "log.jsonl")
    for n in range(100):
        jsonl.append(path, line(n, 300), max_bytes=2000, keep=3)
    files = jsonl.rotated_paths(path)
    assert [os.path.basename(f) for f in files] == ["log.jsonl.3", "log.jsonl.2", "log.jsonl.1", "log.jsonl"]
    for f in files:
        data = open(f, "rb").read()
        assert len(data) <= 2000
        assert all(json.loads(raw) for raw in data.splitlines())  # whole records only
    kept = numbers(path)
    assert kept == list(range(kept[0], 100))  # oldest dropped, the rest in order, no gap


def test_a_record_larger_than_max_bytes_gets_a_file_of_its_own(tmp_path):
    path = str(tmp_path / "log.jsonl")
    jsonl.append(path, line(1), max_bytes=1000, keep=2)
    jsonl.append(path, line(2, 5000), max_bytes=1000, keep=2)
    jsonl.append(path, line(3), max_bytes=1000, keep=2)
    assert numbers(path) == [1, 2, 3]
    assert numbers_in(path + ".1") == [2]


def test_torn_tail_is_isolated_and_readers_skip_only_it(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes(line(1) + b'{"n": 2, "pa')  # a writer killed mid-record
    jsonl.append(str(path), line(3))
    raws = list(jsonl.iter_lines(str(path)))
    assert raws == [line(1), b'{"n": 2, "pa\n', line(3)]


def test_a_writer_that_waited_for_the_lock_while_another_rotated_writes_to_the_new_file(tmp_path):
    fcntl = pytest.importorskip("fcntl")
    path = str(tmp_path / "log.jsonl")
    jsonl.append(path, line(1, 900))
    held = os.open(path, os.O_RDWR)
    fcntl.flock(held, fcntl.LOCK_EX)  # we are "the other writer"
    t = threading.Thread(target=jsonl.append, args=(path, line(2)), kwargs={"max_bytes": 100_000, "keep": 2})
    t.start()
    t.join(0.05)
    jsonl.rotate(path, 2)  # rotate while the writer waits for the lock
    fcntl.flock(held, fcntl.LOCK_UN)
    os.close(held)
    t.join(10)
    assert numbers_in(path + ".1") == [1]
    assert numbers_in(path) == [2]


def test_events_read_across_rotation_in_order_and_follow_survives_a_rotation(tcg_home):
    set_rotation(65536, 4)
    try:
        log = EventLog()
        for i in range(600):
            log.emit("command_decision", surface="shell", seq=i, pad="y" * 400)
        assert len(jsonl.rotated_paths(str(log.path))) == 5
        seqs = [r["seq"] for r in iter_records(log.path)]
        assert seqs == list(range(seqs[0], 600)) and len(seqs) > 300
        follow = follow_records(log.path, poll=0.01, from_start=False)
        # the follower is positioned at the end; records that rotate the file still arrive
        got: list[int] = []
        t = threading.Thread(target=lambda: got.extend(next(follow)["seq"] for _ in range(300)), daemon=True)
        t.start()
        for i in range(600, 900):
            log.emit("command_decision", surface="shell", seq=i, pad="y" * 400)
        t.join(60)
        assert got == list(range(600, 900))
    finally:
        set_rotation(8 * 1024 * 1024, 5)


def test_rotation_settings_come_from_the_policy(tmp_path, tcg_home, monkeypatch):
    from tcg import events
    from tcg.errors import PolicyError
    from tcg.policy.load import load_policy

    policy = tmp_path / "policy.toml"
    policy.write_text("[events]\nmax-bytes = 70000\nkeep = 2\n")
    monkeypatch.setenv("TCG_POLICY", str(policy))
    try:
        load_policy(include_repo=False)
        assert events.rotation() == (70000, 2)
        policy.write_text("[events]\nmax-bytes = 10\n")
        with pytest.raises(PolicyError) as err:
            load_policy(include_repo=False)
        assert err.value.line == 2 and "out of range" in err.value.message
    finally:
        events.set_rotation(events.DEFAULT_MAX_BYTES, events.DEFAULT_KEEP)


def test_appender_refuses_a_symlink_and_a_non_regular_file(tmp_path):
    target = tmp_path / "elsewhere"
    target.write_bytes(b"")
    link = tmp_path / "log.jsonl"
    link.symlink_to(target)
    with pytest.raises(OSError):
        jsonl.append(str(link), line(1))
    assert target.read_bytes() == b""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(OSError):
        jsonl.check_writable(str(fifo))
    assert EventLog  # the events module is the appender's user
    assert build_record


def test_the_bounded_lock_waits_for_a_holder_then_gives_up(tmp_path):
    """tcg.osutil.lock_exclusive (the event log's lock, the detector build's): a
    lock held elsewhere is waited for at most ``wait`` seconds, then the caller is
    told to go on without it; a lock released meanwhile is taken."""
    import fcntl
    import threading

    from tcg.osutil import lock_exclusive

    path = tmp_path / "lock"
    holder = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    waiter = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)
        assert lock_exclusive(waiter, 0.2, poll=0.01) is False
        threading.Timer(0.2, lambda: fcntl.flock(holder, fcntl.LOCK_UN)).start()
        assert lock_exclusive(waiter, 30.0, poll=0.01) is True
        assert lock_exclusive(holder, 0.0) is False  # now the waiter holds it
    finally:
        os.close(holder)
        os.close(waiter)
