"""The event log (docs/events.md): JSONL, private file modes, atomic appends, torn lines."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcg import jsonl
from tcg.events import (
    EVENT_TYPES,
    EventLog,
    ReadStats,
    build_record,
    encode_record,
    follow_records,
    iter_records,
)
from tcg.paths import get_paths
from tcg.policy.load import load_policy
from tcg.policy.model import Decision

SCHEMA_KEYS = {"v", "ts", "event", "surface", "actor", "decision", "reason", "rules", "policy", "session"}


def mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def test_emit_writes_one_json_line_with_the_schema(tcg_home):
    pol = load_policy()
    log = EventLog()
    rec = log.emit(
        "command_decision", surface="shell", actor="agent", decision=Decision.BLOCK,
        reason="secret-store-read", rules=["secret-store", "secret-store"], policy=pol.ref(),
        command="cat .env", exit_code=126,
    )
    assert log.path == tcg_home / "state" / "events.jsonl"
    lines = log.path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 2
    on_disk = json.loads(lines[0])
    assert on_disk == rec
    assert SCHEMA_KEYS <= set(on_disk)
    assert on_disk["v"] == 1
    assert on_disk["decision"] == "block"
    assert on_disk["rules"] == ["secret-store"]
    assert on_disk["policy"] == {"snapshot": pol.snapshot_id, "fingerprint": pol.fingerprint}
    assert on_disk["exit_code"] == 126


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
def test_file_is_0600_in_a_0700_dir(tcg_home):
    log = EventLog()
    log.emit("policy_error", surface="cli")
    assert mode(log.path) == 0o600
    assert mode(log.path.parent) == 0o700


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
def test_loose_modes_are_tightened_on_write(tcg_home):
    state = get_paths().state
    state.mkdir(parents=True, mode=0o755, exist_ok=True)
    os.chmod(state, 0o755)
    f = state / "events.jsonl"
    f.write_text("")
    os.chmod(f, 0o644)
    EventLog().emit("policy_error", surface="cli")
    assert mode(f) == 0o600 and mode(state) == 0o700


def test_session_is_inherited(monkeypatch):
    monkeypatch.setenv("TCG_SESSION", "abc123")
    assert build_record("policy_error", surface="cli")["session"] == "abc123"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"event": "no_such_event", "surface": "shell"},
        {"event": "command_decision", "surface": "nowhere"},
        {"event": "command_decision", "surface": "shell", "ts": 1},
    ],
)
def test_bad_records_are_refused(kwargs):
    event = kwargs.pop("event")
    with pytest.raises(ValueError):
        build_record(event, **kwargs)


def test_non_ascii_stays_on_one_line(tcg_home):
    log = EventLog()
    log.emit("command_decision", surface="shell", command="echo 'ü\n\u2028x'")
    raw = log.path.read_bytes()
    assert raw.count(b"\n") == 1 and raw.isascii()
    assert next(iter_records(log.path))["command"] == "echo 'ü\n\u2028x'"


WRITER = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from tcg.events import EventLog
    n, go = int(sys.argv[1]), Path(sys.argv[2])
    deadline = time.monotonic() + 60
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.001)
    log = EventLog()
    for i in range(500):
        # sizes up to ~6 KB, beyond PIPE_BUF, so interleaving would show
        log.emit("command_decision", surface="shell", writer=n, seq=i, pad="x" * ((i * 97) % 6000))
    """
)


def test_concurrent_writers_never_interleave(tmp_path, tcg_home):
    go = tmp_path / "go"
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(n), str(go)]) for n in range(8)
    ]
    go.touch()
    for p in procs:
        assert p.wait(timeout=120) == 0
    # ~12 MB: the log rotated on the way (8 MiB default); nothing lost or split
    files = jsonl.rotated_paths(get_paths().events_path)
    assert len(files) >= 2
    records = []
    for f in files:
        raw = Path(f).read_bytes()
        lines = raw.split(b"\n")
        assert lines[-1] == b""
        records += [json.loads(line) for line in lines[:-1]]  # every line parses
    assert len(records) == 4000
    for n in range(8):
        assert [r["seq"] for r in records if r["writer"] == n] == list(range(500))


def test_torn_line_is_skipped_and_reported_and_next_record_is_read(tcg_home):
    log = EventLog()
    log.emit("policy_error", surface="cli", seq=1)
    with open(log.path, "ab") as fh:  # a crash mid-write: no trailing newline
        fh.write(b'{"v":1,"ts":17000,"event":"comm')
    log.emit("policy_error", surface="cli", seq=2)
    with open(log.path, "ab") as fh:
        fh.write(b"garbage that is not json\n\n[1, 2]\n")
    log.emit("policy_error", surface="cli", seq=3)
    stats = ReadStats()
    assert [r["seq"] for r in iter_records(log.path, stats)] == [1, 2, 3]
    assert stats.malformed == 3


def test_fragment_glued_to_a_record_does_not_swallow_it(tmp_path):
    """A log torn by a writer that did not repair the line end (older tcg, a copy, …)."""
    good = json.dumps(build_record("policy_error", surface="cli", seq=7), separators=(",", ":"))
    f = tmp_path / "events.jsonl"
    f.write_text('{"v":1,"event":"tor' + good + "\n" + good + "\n" + '{"v":1,"ts":3')
    stats = ReadStats()
    assert [r["seq"] for r in iter_records(f, stats)] == [7, 7]
    assert stats.malformed == 2  # the glued fragment and the unterminated last line


def test_missing_log_reads_as_empty(tmp_path):
    assert list(iter_records(tmp_path / "nope.jsonl")) == []


def test_follow_records_yields_appended_records(tmp_path):
    f = tmp_path / "events.jsonl"
    log = EventLog(path=f)
    log.emit("policy_error", surface="cli", seq=0)
    gen = follow_records(f, poll=0.01)
    assert next(gen)["seq"] == 0
    with open(f, "ab") as fh:  # a half-written record is held back until complete
        fh.write(b'{"v":1,"seq":1')
    log.emit("policy_error", surface="cli", seq=2)
    assert next(gen)["seq"] == 2


def test_event_types_are_the_documented_ones():
    assert {"command_decision", "launch_gate", "scan_completed", "mcp_session_status",
            "mcp_request_blocked", "mcp_response_masked", "clipboard_masked",
            "clipboard_partially_inspected", "policy_error"} <= EVENT_TYPES


@pytest.mark.skipif(os.name != "posix", reason="flock")
def test_a_stuck_lock_holder_does_not_block_writers(tcg_home):
    """A writer stopped (Ctrl-Z) while holding the append lock must not hang the others."""
    import fcntl

    log = EventLog()
    log.emit("policy_error", surface="cli", seq=1)
    with open(log.path, "rb") as holder:
        fcntl.flock(holder.fileno(), fcntl.LOCK_EX)
        log.emit("policy_error", surface="cli", seq=2)  # returns, without the lock
    assert [r["seq"] for r in iter_records(log.path)] == [1, 2]


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(),
    lambda children: st.lists(children, max_size=4) | st.tuples(children, children)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=500, deadline=None)
@given(record=st.dictionaries(st.text(max_size=10), _json_values, max_size=6))
def test_encoder_is_exactly_json_dumps(record):
    """encode_record skips importing json for plain types; its bytes must be
    json.dumps' bytes, including escapes, lone surrogates and non-finite floats."""
    expected = json.dumps(record, ensure_ascii=True, separators=(",", ":"), default=str) + "\n"
    assert encode_record(record) == expected.encode("ascii")


def test_encoder_falls_back_for_other_types(tmp_path):
    import enum

    class Code(enum.IntEnum):
        BLOCKED = 126

    record = {"path": tmp_path, "code": Code.BLOCKED, "n": {1: "int key"}}
    expected = json.dumps(record, ensure_ascii=True, separators=(",", ":"), default=str) + "\n"
    assert encode_record(record) == expected.encode("ascii")
