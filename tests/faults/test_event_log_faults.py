"""Fault matrix: the event log's disk fills up, hits ``ulimit -f`` or is a
device that refuses every write. Each test proves the fault happened (the
errno) and that the line was refused with 126 instead of running unlogged, and
that the log stays parseable (docs/reliability.md)."""

from __future__ import annotations

import errno
import json
import os
import stat
import subprocess
import sys
import textwrap

import pytest

from tests.faults.helpers import (
    TIMEOUT,
    all_lines_parse,
    private_mounts_or_skip,
    run_in_private_mount,
    run_station,
    station,
    station_env,
)

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the faults are injected with Linux tools")

# Runs inside the private mount namespace, after the state dir became a full tmpfs.
DISK_FULL_DRIVER = textwrap.dedent(
    """
    import errno, json, os, subprocess, sys
    from tcg.errors import EventLogError
    from tcg.events import EventLog, build_record
    state, marker, line_ran = os.environ["STATE"], os.environ["MARKER"], os.environ["LINE"]
    log = os.path.join(state, "events.jsonl")
    out = {}
    try:  # the fault itself: the filesystem is full
        with open(os.path.join(state, "probe"), "wb") as fh:
            fh.write(b"x" * 8192)
            fh.flush()
        out["probe_errno"] = 0
    except OSError as exc:
        out["probe_errno"] = exc.errno
    res = subprocess.run([*json.loads(os.environ["ARGV"])], capture_output=True, stdin=subprocess.DEVNULL)
    out.update(rc=res.returncode, stderr=res.stderr.decode("utf-8", "replace"), ran=os.path.exists(marker))
    before = open(log, "rb").read()
    # A record bigger than the room left in the log's last page: the write fails
    # part-way and must be cut back off.
    try:
        EventLog().append(build_record("command_decision", surface="shell", pad="p" * 20000))
        out["append_errno"] = 0
    except EventLogError as exc:
        out["append_errno"] = exc.errno
    after = open(log, "rb").read()
    out.update(before=before.decode("latin-1"), after=after.decode("latin-1"))
    print(json.dumps(out))
    """
)


def test_event_log_disk_full_refuses_with_126_and_keeps_the_log_parseable(tmp_path, tcg_home):
    private_mounts_or_skip()
    state = tcg_home / "state"
    key = (state / "key").read_bytes()
    marker = tmp_path / "ran"
    # one record before the disk fills, so there is a log to keep intact
    seed = subprocess.run(station("true"), capture_output=True, timeout=TIMEOUT, env=station_env())
    assert seed.returncode == 0
    first = (state / "events.jsonl").read_bytes()
    (tmp_path / "key").write_bytes(key)
    (tmp_path / "log").write_bytes(first)
    setup = (f'mount -t tmpfs -o size=64k,mode=0700 tmpfs "{state}"\n'
             f'cp "{tmp_path}/key" "{tmp_path}/log" "{state}/" && mv "{state}/log" "{state}/events.jsonl"\n'
             f'head -c 1M /dev/zero > "{state}/filler" 2>/dev/null || true')
    env = station_env(STATE=str(state), MARKER=str(marker), LINE="x",
                      ARGV=json.dumps(station(f"touch '{marker}'")))
    out = run_in_private_mount(setup, DISK_FULL_DRIVER, env)
    assert out["probe_errno"] == errno.ENOSPC  # the fault happened
    assert out["rc"] == 126 and not out["ran"]  # refused, never run unlogged
    assert "blocked (event-log-unwritable)" in out["stderr"]
    assert os.strerror(errno.ENOSPC) in out["stderr"] and "hint:" in out["stderr"]
    assert out["append_errno"] == errno.ENOSPC
    # the failed append was cut back: the log is byte-identical and parses
    assert out["after"] == out["before"]
    path = tmp_path / "after.jsonl"
    path.write_bytes(out["after"].encode("latin-1"))
    records = all_lines_parse(path)
    # the refusal itself still fitted in the log's last page: it was recorded
    assert [r["reason"] for r in records][-1] in ("event-log-unwritable", "allowed")


FSIZE_DRIVER = textwrap.dedent(
    """
    import json, os, resource, subprocess, sys, tempfile
    from tcg.errors import EventLogError
    from tcg.events import EventLog, build_record
    log = os.environ["LOG"]
    size = os.path.getsize(log)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size + 4096, resource.RLIM_INFINITY))
    out = {}
    fd, probe = tempfile.mkstemp()
    try:  # the fault itself: a write past the limit fails with EFBIG (SIGXFSZ is ignored)
        os.pwrite(fd, b"x", size + 8192)
        out["probe_errno"] = 0
    except OSError as exc:
        out["probe_errno"] = exc.errno
    finally:
        os.close(fd)
        os.unlink(probe)
    res = subprocess.run(json.loads(os.environ["ARGV"]), capture_output=True, stdin=subprocess.DEVNULL)
    out.update(rc=res.returncode, stderr=res.stderr.decode("utf-8", "replace"))
    before = os.path.getsize(log)
    try:
        EventLog().append(build_record("command_decision", surface="shell", pad="p" * 8192))
        out["append_errno"] = 0
    except EventLogError as exc:
        out["append_errno"] = exc.errno
    out["grew"] = os.path.getsize(log) - before
    print(json.dumps(out))
    """
)


def test_event_log_file_size_limit_refuses_with_126(tmp_path, tcg_home):
    marker = tmp_path / "ran"
    assert subprocess.run(station("true"), timeout=TIMEOUT, env=station_env()).returncode == 0
    log = tcg_home / "state" / "events.jsonl"
    res = subprocess.run([sys.executable, "-c", FSIZE_DRIVER], capture_output=True, timeout=TIMEOUT,
                         env=station_env(LOG=str(log), ARGV=json.dumps(station(f"touch '{marker}'"))))
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["probe_errno"] == errno.EFBIG  # the fault happened
    assert out["rc"] == 126 and not marker.exists()
    assert os.strerror(errno.EFBIG) in out["stderr"] and "ulimit -f" in out["stderr"]
    assert out["append_errno"] == errno.EFBIG and out["grew"] == 0  # cut back, nothing torn
    all_lines_parse(log)


def test_event_log_on_a_full_device_refuses_and_never_touches_the_device(tmp_path, tcg_home):
    """events.jsonl pointing at a character device (a private /dev/full): the
    old appender followed the link, chmodded the device to 0600 (as root: the
    machine's /dev/full) and wrote into it. Now: refused, device untouched."""
    if os.geteuid() != 0:
        pytest.skip("mknod of a character device needs root")
    full = tmp_path / "full"
    os.mknod(full, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    os.chmod(full, 0o666)
    with pytest.raises(OSError) as fault, open(full, "wb", buffering=0) as fh:
        fh.write(b"x")
    assert fault.value.errno == errno.ENOSPC  # the fault is real
    log = tcg_home / "state" / "events.jsonl"
    log.symlink_to(full)
    marker = tmp_path / "ran"
    res = run_station(f"touch '{marker}'")
    assert res.returncode == 126 and not marker.exists()
    assert b"blocked (event-log-unwritable)" in res.stderr
    assert stat.S_IMODE(os.stat(full).st_mode) == 0o666
