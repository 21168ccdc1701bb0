"""Pipe mode (the agent case): real bash children, stdin/stdout not terminals."""

from __future__ import annotations

import hashlib
import json
import os
import select
import signal
import subprocess
import time

import pytest

from tests.helpers.leaks import assert_no_secret_written
from tests.runner.helpers import BASH, TCG_SHELL, ZSH, station, station_env

TIMEOUT = 60


def run(line: str, *, input: bytes | None = b"", shell: str | None = BASH, **env: str):
    return subprocess.run(
        station(line, shell),
        input=input,
        capture_output=True,
        timeout=TIMEOUT,
        env=station_env(**env),
    )


def events(tcg_home) -> list[dict]:
    path = tcg_home / "state" / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("code", [0, 1, 42])
def test_exit_code_is_the_childs(code):
    assert run(f"exit {code}").returncode == code


def test_signal_death_is_128_plus_n():
    assert run("kill -TERM $$").returncode == 143


def test_command_not_found_is_127_from_the_shell():
    res = run("no-such-command-tcg-xyz")
    assert res.returncode == 127
    assert b"not found" in res.stderr


def test_missing_shell_is_127_with_a_message():
    res = run("true", shell="/nonexistent/shell")
    assert res.returncode == 127
    assert b"/nonexistent/shell" in res.stderr


def test_stdout_and_stderr_stay_separate():
    res = run("echo out; echo err >&2; echo out2")
    assert res.stdout == b"out\nout2\n"
    assert res.stderr == b"err\n"


def test_piped_stdin_is_passed_byte_exact_without_echo_or_cr():
    res = run("cat", input=b"ab")
    assert res.stdout == b"ab"
    assert res.returncode == 0


def test_yes_head_has_no_broken_pipe():
    res = run("yes | head -1")
    assert res.stdout == b"y\n"
    assert b"Broken pipe" not in res.stderr
    assert res.returncode == 0


def test_binary_50m_is_byte_identical(tmp_path):
    # Random bytes minus "@": raw /dev/urandom holds e-mail-shaped runs such as
    # b"E@n.RQ" (~4 per 50 MB) that the PII rule masks, by design of the masker.
    blob = tmp_path / "blob.bin"
    with open(blob, "wb") as fh:
        for _ in range(50):
            fh.write(os.urandom(1 << 20).replace(b"@", b"A"))
    res = run(f"cat '{blob}'")
    assert res.returncode == 0
    assert hashlib.sha256(res.stdout).hexdigest() == hashlib.sha256(blob.read_bytes()).hexdigest()


def test_program_exiting_right_after_1mb_delivers_every_byte():
    res = run("head -c 1000000 /dev/zero | tr '\\0' a; exit 3")
    assert res.returncode == 3
    assert res.stdout == b"a" * 1_000_000


def test_background_grandchild_does_not_hang_the_caller():
    start = time.monotonic()
    res = run("sleep 30 & echo started")
    assert res.stdout == b"started\n"
    assert res.returncode == 0
    assert time.monotonic() - start < 20  # generous: the grandchild sleeps 30 s


def test_output_streams_before_the_child_exits():
    """`tail -f` style: a line shows while the command is still running."""
    proc = subprocess.Popen(
        station("echo first; sleep 30"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=station_env(),
    )
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 8)
        assert ready, "no output within 8 s while the child runs"
        assert proc.stdout.readline() == b"first\n"
        assert proc.poll() is None
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(TIMEOUT)
    assert proc.returncode == 143  # forwarded to the child, reported as 128+15


def test_sigterm_to_tcg_is_forwarded_to_the_child(tmp_path):
    ready = tmp_path / "ready"
    proc = subprocess.Popen(
        station(f"touch '{ready}'; sleep 30"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=station_env(),
    )
    end = time.monotonic() + TIMEOUT
    while not ready.exists() and time.monotonic() < end:
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    proc.wait(TIMEOUT)
    assert proc.returncode == 143


def test_consumer_going_away_gives_the_child_sigpipe():
    res = subprocess.run(
        ["bash", "-c", 'set -o pipefail; "$@" | head -c 5 >/dev/null; echo "rc=${PIPESTATUS[0]}"', "-",
         *station("yes")],
        capture_output=True,
        timeout=TIMEOUT,
        env=station_env(),
    )
    assert res.stdout == b"rc=141\n"
    assert b"Broken pipe" not in res.stderr


def test_usage_rejects_more_than_one_line_argument(tmp_path):
    marker = tmp_path / "ran"
    argv = [TCG_SHELL, "run-line", "touch", str(marker)]
    res = subprocess.run(argv, capture_output=True, timeout=TIMEOUT, env=station_env())
    assert res.returncode == 2
    assert b"ONE argument" in res.stderr
    assert not marker.exists()


def test_event_recorded_with_exit_code_and_no_raw_line(tcg_home):
    fake = "AKIA" + "QWERTYUIOPASDFGH"  # shaped like a credential; planted, never logged
    res = run(f"echo {fake} >/dev/null; exit 5")
    assert res.returncode == 5
    (rec,) = [e for e in events(tcg_home) if e["event"] == "command_decision"]
    assert rec["exit_code"] == 5
    assert rec["mode"] == "pipe"
    assert rec["nested"] is False
    assert rec["shell"] == BASH
    assert rec["policy"]["fingerprint"]
    assert len(rec["command_hash"]) == 16
    assert rec["command_len"] == len(f"echo {fake} >/dev/null; exit 5")
    assert_no_secret_written(tcg_home, [fake])


def test_session_and_recursion_marker_exported():
    res = run('printf "%s|%s" "$TCG_MEDIATED" "$TCG_SESSION"', TCG_SESSION="abc123")
    assert res.stdout == b"abc123|abc123"


def test_nested_run_line_passes_through_and_records_nesting(tcg_home):
    inner = " ".join(f"'{a}'" for a in station("echo inner; exit 4"))
    res = run(f"{inner}; echo outer-rc=$?")
    assert res.stdout == b"inner\nouter-rc=4\n"
    recs = [e for e in events(tcg_home) if e["event"] == "command_decision"]
    assert [r["nested"] for r in recs] == [True, False]
    assert recs[0]["mode"] == "pipe" and recs[0]["exit_code"] is None
    assert recs[0]["session"] == recs[1]["session"]


def test_forged_marker_does_not_disable_mediation(tcg_home):
    res = run("echo hi", TCG_MEDIATED="forged", TCG_MEDIATED_FDS="i1:2,i1:3")
    assert res.stdout == b"hi\n"
    (rec,) = [e for e in events(tcg_home) if e["event"] == "command_decision"]
    assert rec["nested"] is False and rec["mode"] == "pipe"


def test_invalid_policy_fails_closed_nothing_executed(tmp_path, tcg_home):
    bad = tmp_path / "bad.toml"
    bad.write_text("[decisions.agent]\nsecret-store-read = 'maybe'\n")
    marker = tmp_path / "ran"
    res = subprocess.run(
        [TCG_SHELL, "run-line", "--shell", BASH, f"touch '{marker}'"],
        capture_output=True,
        timeout=TIMEOUT,
        env=station_env(TCG_POLICY=str(bad)),
    )
    assert res.returncode == 126
    assert b"policy-invalid" in res.stderr and b"bad.toml" in res.stderr
    assert b"hint:" in res.stderr
    assert not marker.exists()
    (rec,) = [e for e in events(tcg_home) if e["event"] == "command_decision"]
    assert rec["decision"] == "block" and rec["reason"] == "policy-invalid"
    assert rec["exit_code"] == 126


def test_crash_while_deciding_fails_closed(tmp_path, tcg_home):
    """An exception in the decision step (here: the cwd was deleted) → 126 internal-error."""
    gone = tmp_path / "gone"
    gone.mkdir()
    marker = tmp_path / "ran"
    res = subprocess.run(
        ["bash", "-c", 'cd "$1" && rmdir "$1" && exec "${@:2}"', "-", str(gone),
         TCG_SHELL, "run-line", "--shell", BASH, f"touch '{marker}'"],
        capture_output=True,
        timeout=TIMEOUT,
        env=station_env(),
    )
    assert res.returncode == 126
    assert b"internal-error" in res.stderr and b"hint:" in res.stderr
    assert not marker.exists()


@pytest.mark.skipif(ZSH is None, reason="zsh not installed")
def test_runs_with_the_requested_shell_binary():
    res = run('print -r -- "$ZSH_VERSION"', shell=ZSH)
    assert res.returncode == 0 and res.stdout.strip()
