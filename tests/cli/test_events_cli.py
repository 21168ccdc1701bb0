"""`tcg events [--follow] [--type T] [--json]`."""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time

from tcg.cli import main
from tcg.events import EventLog


def run(capsys, *args: str) -> tuple[int, str, str]:
    rc = main(["events", *args])
    out, err = capsys.readouterr()
    return rc, out, err


def seed() -> EventLog:
    log = EventLog()
    log.emit("command_decision", surface="shell", actor="agent", decision="block",
             reason="secret-store-read", rules=["dotenv"], command="cat .env", exit_code=126)
    log.emit("scan_completed", surface="scan", counts={"findings": 0})
    log.emit("command_decision", surface="shell", actor="human", decision="allow", reason="allowed",
             command="ls")
    return log


def test_empty_log(capsys):
    assert run(capsys) == (0, "", "")


def test_human_lines(capsys):
    seed()
    rc, out, err = run(capsys)
    lines = out.splitlines()
    assert rc == 0 and err == ""
    assert len(lines) == 3
    assert "command_decision  shell/agent  block:secret-store-read  rules=dotenv" in lines[0]
    assert 'command="cat .env"' in lines[0] and "exit_code=126" in lines[0]
    assert 'counts={"findings": 0}' in lines[1]


def test_type_filter_and_json(capsys):
    seed()
    rc, out, _ = run(capsys, "--type", "command_decision", "--json")
    recs = [json.loads(line) for line in out.splitlines()]
    assert rc == 0
    assert [r["command"] for r in recs] == ["cat .env", "ls"]
    _, out, _ = run(capsys, "--type", "scan_completed", "--type", "launch_gate", "--json")
    assert [json.loads(line)["event"] for line in out.splitlines()] == ["scan_completed"]


def test_malformed_lines_are_reported_not_fatal(capsys):
    log = seed()
    with open(log.path, "ab") as fh:
        fh.write(b"not json\n")
    log.emit("policy_error", surface="cli")
    with open(log.path, "ab") as fh:
        fh.write(b'{"v":1,"ts"')
    rc, out, err = run(capsys, "--json")
    assert rc == 0
    assert len(out.splitlines()) == 4
    assert f"skipped 2 malformed line(s) in {log.path}" in err


def _read_line(proc: subprocess.Popen, timeout: float) -> str:
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    buf = b""
    while time.monotonic() < deadline:
        if sel.select(timeout=0.5):
            chunk = os.read(proc.stdout.fileno(), 4096)
            if not chunk:
                break
            buf += chunk
            if b"\n" in buf:
                return buf.decode()
    raise AssertionError(f"no line from tcg events --follow within {timeout}s (got {buf!r})")


def test_follow_prints_appended_events(tmp_path):
    log = EventLog()
    log.emit("policy_error", surface="cli", seq=0)
    proc = subprocess.Popen(
        [sys.executable, "-m", "tcg", "events", "--follow", "--json", "--type", "launch_gate"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    try:
        time.sleep(0.3)  # not needed for correctness: the follower also prints old records
        log.emit("launch_gate", surface="launch", seq=1, agent="claude")
        line = _read_line(proc, timeout=60)
        assert json.loads(line.splitlines()[0])["seq"] == 1
        log.emit("launch_gate", surface="launch", seq=2)
        line = _read_line(proc, timeout=60)
        assert json.loads(line.splitlines()[0])["seq"] == 2
        assert proc.poll() is None  # still following
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        proc.stdout.close()
        proc.stderr.close()
