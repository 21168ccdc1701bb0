"""Fault matrix: the streams between a command and its reader break. tcg is
SIGKILLed mid-stream, the child closes its stdout and keeps running, a
grandchild keeps the pipe open, a 200 MB line has no newline, invalid UTF-8
surrounds a secret, a pipe breaks on either side, the reader stalls
(docs/reliability.md). Each test checks the fault happened (signal, errno or
the process state) and that no planted secret came out unmasked."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pytest

from tests.faults.helpers import (
    BASH,
    TIMEOUT,
    all_lines_parse,
    fresh_token,
    run_station,
    station,
    station_env,
)
from tests.helpers.leaks import assert_no_secret_written
from tests.helpers.waiting import wait_for

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the faults are injected with Linux tools")


def gone(pid: int) -> bool:
    """The process has exited (a zombie left to an init that does not reap counts)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def secret_file(tmp_path: Path, token: str, lines: int = 20_000) -> Path:
    path = tmp_path / "big.txt"
    path.write_text("".join(f"line {i} token {token} end\n" for i in range(lines)))
    return path


def test_tcg_killed_mid_stream_pipe_mode_leaks_nothing_and_the_child_dies_of_sigpipe(tmp_path, tcg_home):
    token = fresh_token()
    big = secret_file(tmp_path, token)
    rc_file = tmp_path / "cat-rc"
    line = f"while :; do cat '{big}' || {{ echo $? > '{rc_file}'; exit; }}; done"
    proc = subprocess.Popen(station(line), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=station_env())
    got = b""
    while len(got) < 200_000:
        ready, _, _ = select.select([proc.stdout], [], [], TIMEOUT)
        assert ready, "no output from the station"
        got += os.read(proc.stdout.fileno(), 1 << 16)
    proc.kill()
    got += proc.stdout.read()
    proc.stderr.read()
    assert proc.wait(TIMEOUT) == -signal.SIGKILL  # the fault happened
    # `> file` creates the file before `echo` writes to it: wait for what it wrote
    wait_for(lambda: rc_file.exists() and rc_file.read_text().endswith("\n"),
             what="the child to notice the dead reader")
    assert rc_file.read_text().strip() == "141"  # cat died of SIGPIPE: nothing kept running
    assert token.encode() not in got and b"<SECRET:github-pat" in got
    log = tcg_home / "state" / "events.jsonl"
    if log.exists():  # killed before recording: whatever is there still parses
        all_lines_parse(log)
    assert_no_secret_written(tcg_home, [token])


def test_tcg_killed_mid_stream_pty_mode_hangs_up_the_child(tmp_path, tcg_home):
    token = fresh_token()
    big = secret_file(tmp_path, token)
    hup = tmp_path / "hup"
    line = f"trap 'echo hup > \"{hup}\"; exit 129' HUP; while :; do cat '{big}'; done"
    argv = station(line)
    child = pexpect.spawn(argv[0], argv[1:], env=station_env(TERM="xterm"), timeout=TIMEOUT)
    child.expect("<SECRET:github-pat")
    child.expect("<SECRET:github-pat")
    got = child.before
    os.kill(child.pid, signal.SIGKILL)
    child.expect(pexpect.EOF)
    got += child.before
    child.close()
    assert child.signalstatus == signal.SIGKILL  # the fault happened
    wait_for(hup.exists, what="the child's SIGHUP")  # the child was hung up, not left running
    assert token.encode() not in got
    assert_no_secret_written(tcg_home, [token])


@pytest.mark.parametrize("pty", [False, True], ids=["pipe", "pty"])
def test_child_closes_stdout_and_keeps_running_exit_code_comes_from_waitpid(tmp_path, pty):
    line = "echo before; exec >&- 2>&- <&-; sleep 1; exit 7"
    start = time.monotonic()
    if pty:
        argv = station(line)
        child = pexpect.spawn(argv[0], argv[1:], env=station_env(TERM="xterm"), timeout=TIMEOUT)
        child.expect(pexpect.EOF)
        child.close()
        code, out = child.exitstatus, child.before
    else:
        res = run_station(line)
        code, out = res.returncode, res.stdout
    # EOF came at once; tcg waited for the child's exit (≥ 1 s) and took its status
    assert time.monotonic() - start >= 1.0
    assert code == 7 and b"before" in out


def test_grandchild_holding_the_pipe_gets_a_bounded_drain(tmp_path):
    gpid = tmp_path / "gpid"
    line = f"sleep 60 & echo $! > '{gpid}'; echo hi"
    res = run_station(line)
    pid = int(gpid.read_text())
    try:
        assert not gone(pid)  # the fault was in effect: the grandchild still held the pipe
        assert res.returncode == 0 and res.stdout == b"hi\n"
    finally:
        os.kill(pid, signal.SIGKILL)


def test_grandchild_writing_forever_is_cut_off_and_stays_masked(tmp_path):
    token = fresh_token()
    gpid = tmp_path / "gpid"
    line = f"(while :; do echo 'bg {token}'; done) & echo $! > '{gpid}'; exit 3"
    res = run_station(line)
    pid = int(gpid.read_text())
    try:
        assert res.returncode == 3
        assert token.encode() not in res.stdout
        wait_for(lambda: gone(pid), what="the writer to die of SIGPIPE once tcg stopped reading")
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


HUGE_DRIVER = """
import json, os, resource, subprocess, sys
argv = json.loads(sys.argv[1])
proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
total, tail = 0, b""
while True:
    chunk = proc.stdout.read(1 << 20)
    if not chunk:
        break
    total += len(chunk)
    tail = (tail + chunk)[-4096:]
rc = proc.wait()
print(json.dumps({"rc": rc, "total": total, "tail": tail.decode("latin-1"),
                  "maxrss_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""


def test_200mb_line_without_newline_bounded_memory_secret_at_the_end_masked(tmp_path):
    import json

    token = fresh_token()
    line = f"head -c 200000000 /dev/zero | tr '\\0' a; printf ' {token}'"
    res = subprocess.run([sys.executable, "-c", HUGE_DRIVER, json.dumps(station(line))],
                         capture_output=True, timeout=600, env=station_env())
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["rc"] == 0
    assert token not in out["tail"] and "<SECRET:github-pat" in out["tail"]
    assert out["total"] >= 200_000_000  # every byte passed (the mask is longer than the token)
    # the peak RSS of tcg (the largest child) stayed far below the line's size
    assert out["maxrss_kb"] < 150 * 1024, f"peak RSS {out['maxrss_kb']} KiB"


@pytest.mark.parametrize("pty", [False, True], ids=["pipe", "pty"])
def test_invalid_utf8_around_a_secret_passes_through_and_the_secret_is_masked(tmp_path, pty):
    token = fresh_token()
    payload = tmp_path / "payload"
    payload.write_bytes(b"\xff\xfe " + token.encode() + b" \xe2\x82 \xc3")
    line = f"cat '{payload}'; echo"
    if pty:
        argv = station(line)
        child = pexpect.spawn(argv[0], argv[1:], env=station_env(TERM="xterm"), timeout=TIMEOUT)
        child.expect(pexpect.EOF)
        child.close()
        out = child.before
    else:
        out = run_station(line).stdout
    assert token.encode() not in out
    assert out.startswith(b"\xff\xfe <SECRET:github-pat")
    assert b" \xe2\x82 \xc3" in out  # the invalid bytes pass through unchanged


def test_sigpipe_inside_the_command_gives_141():
    res = run_station("yes | head -n1; echo \"rc=${PIPESTATUS[0]}\"")
    assert res.stdout == b"y\nrc=141\n"
    assert b"Broken pipe" not in res.stderr


def test_tcg_own_stdout_closed_exits_quietly_and_records_the_sigpipe(tcg_home):
    res = subprocess.run(
        [BASH, "-c", '"$@" | head -n1 >/dev/null; echo "rc=${PIPESTATUS[0]}"', "-", *station("seq 1000000000")],
        capture_output=True, timeout=TIMEOUT, env=station_env())
    assert res.stdout == b"rc=141\n"  # the child died of SIGPIPE, tcg reported it as 128+13
    assert b"Traceback" not in res.stderr and b"BrokenPipe" not in res.stderr
    assert res.stderr == b""
    rec = all_lines_parse(tcg_home / "state" / "events.jsonl")[-1]
    assert rec["exit_code"] == 141


def test_slow_consumer_bounded_rss_child_blocks_and_nothing_is_lost(tmp_path):
    """The reader stops reading for a while: tcg's memory stays bounded (the
    child blocks on a full pipe), and every byte arrives once it resumes."""
    n = 3_000_000
    proc = subprocess.Popen(station(f"seq {n}"), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=station_env())
    first = proc.stdout.read(10)  # started
    rss = []
    for _ in range(15):  # 3 s without reading
        time.sleep(0.2)
        with open(f"/proc/{proc.pid}/status") as fh:
            rss += [int(x.split()[1]) for x in fh if x.startswith("VmRSS:")]
    import fcntl
    import termios

    queued = fcntl.ioctl(proc.stdout.fileno(), termios.FIONREAD, b"\0\0\0\0")
    assert int.from_bytes(queued, sys.byteorder) >= 60_000  # the fault: our pipe is full, unread
    rest = proc.stdout.read()
    assert proc.wait(TIMEOUT) == 0
    assert max(rss) < 64 * 1024, f"tcg RSS grew to {max(rss)} KiB while the reader stalled"
    data = first + rest
    assert data == b"".join(b"%d\n" % i for i in range(1, n + 1))
