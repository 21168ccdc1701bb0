"""The station's decision step, masking wiring, CLI aliases and small pieces."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import termios
import time
from pathlib import Path

import pexpect
import pytest

from tcg.runner import invocation
from tcg.runner import station as st
from tcg.runner.base import IdentityFilter, LazyFilter, exit_code_from_status
from tcg.runner.loop import raw_mode
from tests.helpers.leaks import assert_no_secret_written
from tests.runner.helpers import BASH, TCG_SHELL, station, station_env

TIMEOUT = 60
# Shaped like a classic GitHub token; made up for the tests, never printed by tcg.
FAKE_TOKEN = "ghp_" + "Zq8Xw3Lk9Vb2Nm4Pr7Ts1Yu6Hj0Gf5Dc2Ea8"
BIN = Path(sys.executable).parent


def events(tcg_home: Path) -> list[dict]:
    path = tcg_home / "state" / "events.jsonl"
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


# ---------------------------------------------------------------- blocked: nothing runs


def test_blocked_agent_read_never_opens_the_file(tmp_path, tcg_home):
    """`.env` is a FIFO: opening it would block forever, so a prompt 126 proves
    the command never ran (no LD_PRELOAD, no atime games)."""
    os.mkfifo(tmp_path / ".env")
    start = time.monotonic()
    res = subprocess.run(
        [TCG_SHELL, "run-line", "--shell", BASH, "cat .env"],
        cwd=tmp_path, capture_output=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL,
        env=station_env(TCG_ACTOR="agent"),
    )
    assert res.returncode == 126
    assert time.monotonic() - start < TIMEOUT
    lines = res.stderr.decode().splitlines()
    assert lines[0].startswith("tcg: blocked (secret-store-read)")
    assert lines[1].startswith("hint: ")
    assert res.stdout == b""
    (rec,) = events(tcg_home)
    assert rec["decision"] == "block" and rec["reason"] == "secret-store-read"
    assert rec["actor"] == "agent" and rec["exit_code"] == 126


def test_blocked_compound_line_runs_no_part_of_it(tmp_path):
    (tmp_path / ".env").write_text(f"TOKEN={FAKE_TOKEN}\n")
    marker = tmp_path / "ran"
    res = subprocess.run(
        [TCG_SHELL, "run-line", "--shell", BASH, f"touch '{marker}'; cat .env"],
        cwd=tmp_path, capture_output=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL,
        env=station_env(TCG_ACTOR="agent"),
    )
    assert res.returncode == 126
    assert not marker.exists()
    assert FAKE_TOKEN.encode() not in res.stdout + res.stderr


# ---------------------------------------------------------------- masked output


def test_pipe_mode_masks_planted_secret_on_both_streams(tmp_path, tcg_home):
    secret_file = tmp_path / "notes.txt"
    secret_file.write_text(f"token {FAKE_TOKEN} end\n")
    res = subprocess.run(
        station(f"cat '{secret_file}'; cat '{secret_file}' >&2"),
        capture_output=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL, env=station_env(),
    )
    assert res.returncode == 0
    for stream in (res.stdout, res.stderr):
        assert FAKE_TOKEN.encode() not in stream
        assert b"<SECRET:github-pat" in stream and stream.startswith(b"token ")
    assert_no_secret_written(tcg_home, [FAKE_TOKEN])


def test_pty_mode_masks_planted_secret(tmp_path, tcg_home):
    secret_file = tmp_path / "notes.txt"
    secret_file.write_text(f"token {FAKE_TOKEN} end\n")
    argv = station(f"cat '{secret_file}'")
    child = pexpect.spawn(argv[0], argv[1:], env=station_env(TERM="xterm"), timeout=TIMEOUT)
    child.expect(pexpect.EOF)
    out = child.before
    child.close()
    assert child.exitstatus == 0
    assert FAKE_TOKEN.encode() not in out
    assert b"<SECRET:github-pat" in out
    assert_no_secret_written(tcg_home, [FAKE_TOKEN])


def test_event_holds_the_masked_line_and_keyed_hash_only(tcg_home):
    line = f"echo {FAKE_TOKEN} >/dev/null"
    res = subprocess.run(station(line), capture_output=True, timeout=TIMEOUT,
                         stdin=subprocess.DEVNULL, env=station_env())
    assert res.returncode == 0
    (rec,) = events(tcg_home)
    assert "<SECRET:github-pat" in rec["command"]
    assert rec["command"].startswith("echo ")
    assert rec["command_len"] == len(line)
    assert_no_secret_written(tcg_home, [FAKE_TOKEN])


# ---------------------------------------------------------------- CLI aliases


def test_tcg_run_takes_an_argv_without_shell_parsing(tcg_home):
    res = subprocess.run(
        [str(BIN / "tcg"), "run", "--", "printf", "%s|", "a b", "$HOME", ";true"],
        capture_output=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL, env=station_env(),
    )
    assert res.stdout == b"a b|$HOME|;true|"
    assert res.returncode == 0
    (rec,) = events(tcg_home)
    assert rec["mode"] == "pipe" and rec["shell"] is None


def test_tcg_run_propagates_exit_code_and_not_found():
    def tcg_run(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(BIN / "tcg"), "run", "--", *argv], capture_output=True,
                              timeout=TIMEOUT, stdin=subprocess.DEVNULL, env=station_env())

    assert tcg_run(BASH, "-c", "exit 9").returncode == 9
    missing = tcg_run("no-such-program-tcg-xyz")
    assert missing.returncode == 127
    assert b"no-such-program-tcg-xyz" in missing.stderr


def test_tcg_shell_run_line_alias():
    res = subprocess.run(
        [str(BIN / "tcg"), "shell-run-line", "--shell", BASH, "echo alias; exit 4"],
        capture_output=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL, env=station_env(),
    )
    assert res.stdout == b"alias\n" and res.returncode == 4


# ---------------------------------------------------------------- small pieces


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["ls -l"], (None, "ls -l")),
        (["--shell", "/bin/zsh", "ls"], ("/bin/zsh", "ls")),
        (["--shell=/bin/zsh", "--", "--weird"], ("/bin/zsh", "--weird")),
        (["--", "-x"], (None, "-x")),
    ],
)
def test_parse_args(argv, expected):
    assert invocation.parse_args(argv) == expected


@pytest.mark.parametrize("argv", [[], ["a", "b"], ["--shell"], ["--bogus", "x"], ["--shell=", "x"]])
def test_parse_args_rejects(argv):
    with pytest.raises(invocation.UsageError):
        invocation.parse_args(argv)


def test_actor_from_env():
    assert st.actor_from_env({}) == "human"
    assert st.actor_from_env({"TCG_ACTOR": "agent"}) == "agent"
    assert st.actor_from_env({"TCG_ACTOR": "human", "TCG_AGENT": "claude"}) == "agent"


def test_detect_shell_order(tmp_path):
    """--shell, then $TCG_SHELL, then the calling shell, then $SHELL, then bash/zsh on PATH,
    then /bin/sh; the calling shell is injected, so how pytest was started does not matter."""
    def no_parent() -> None:  # the caller is not a shell
        return None

    def from_zsh() -> str:
        return "/usr/bin/zsh"

    env = {"PATH": os.environ["PATH"], "TCG_SHELL": "zsh", "SHELL": "/bin/sh"}
    assert invocation.detect_shell("/bin/bash", env, from_zsh) == "/bin/bash"
    assert os.path.basename(invocation.detect_shell(None, env, from_zsh)) == "zsh"
    assert invocation.detect_shell(None, {"PATH": os.environ["PATH"], "SHELL": BASH}, from_zsh) == "/usr/bin/zsh"
    assert invocation.detect_shell(None, {"PATH": os.environ["PATH"], "SHELL": BASH}, no_parent) == BASH
    # $SHELL that is not a known shell (or not executable) is passed over for bash on PATH
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "bash").symlink_to(BASH)
    env = {"PATH": str(bin_dir), "SHELL": str(tmp_path / "fish-not-there")}
    assert invocation.detect_shell(None, env, no_parent) == str(bin_dir / "bash")
    assert invocation.detect_shell(None, {"PATH": str(tmp_path / "empty")}, no_parent) == "/bin/sh"


def test_parent_shell_is_detected_from_proc():
    res = subprocess.run(
        [BASH, "-c", f'"{sys.executable}" -c "from tcg.runner.invocation import _parent_shell; '
                     f'print(_parent_shell())"; true'],
        capture_output=True, timeout=TIMEOUT, text=True,
    )
    assert os.path.basename(res.stdout.strip()) == "bash"


def test_exit_code_from_status():
    assert exit_code_from_status(7 << 8) == 7
    assert exit_code_from_status(15) == 143  # killed by SIGTERM


def test_identity_filter():
    f = IdentityFilter()
    assert f.feed(b"abc") == b"abc" and f.flush() == b"" and f.idle_deadline() is None


def test_raw_mode_restored_after_an_exception():
    master, slave = os.openpty()
    try:
        before = termios.tcgetattr(slave)
        with pytest.raises(RuntimeError), raw_mode(slave):
            assert not termios.tcgetattr(slave)[3] & termios.ICANON
            raise RuntimeError("boom")
        assert termios.tcgetattr(slave) == before
    finally:
        os.close(master)
        os.close(slave)


def test_lazy_filter_builds_on_first_output_and_withholds_on_failure():
    built = []
    lazy = LazyFilter(lambda: built.append(1) or IdentityFilter())
    assert lazy.flush() == b"" and not built  # no output: never built
    assert lazy.feed(b"x") == b"x" and built == [1] and lazy.built

    def broken():
        raise RuntimeError("no detector")

    failing = LazyFilter(broken)
    assert failing.feed(b"secret-ish") == b"" and failing.flush() == b""
    assert isinstance(failing.error, RuntimeError)


def test_silent_command_does_not_load_the_detector_twice(tcg_home):
    """The masked line of a repeated silent command comes from the line cache."""
    for _ in range(2):
        res = subprocess.run(station("true"), capture_output=True, timeout=TIMEOUT,
                             stdin=subprocess.DEVNULL, env=station_env())
        assert res.returncode == 0
    recs = events(tcg_home)
    assert [r["command"] for r in recs] == ["true", "true"]
    assert len(list((tcg_home / "cache" / "masked-lines").iterdir())) == 1


def test_a_forged_masked_line_entry_is_not_logged(tcg_home):
    """The line cache sits in a user-writable dir: an entry rewritten without the
    install key (to hide what ran from the event log) is ignored and rebuilt."""
    run = lambda: subprocess.run(station("true"), capture_output=True, timeout=TIMEOUT,  # noqa: E731
                                 stdin=subprocess.DEVNULL, env=station_env())
    assert run().returncode == 0
    (entry,) = (tcg_home / "cache" / "masked-lines").iterdir()
    mac, _, _ = entry.read_bytes().partition(b"\n")
    entry.write_bytes(mac + b"\nls")  # keep the old MAC, change the line
    assert run().returncode == 0
    entry.write_bytes(b"ls")  # unsigned
    assert run().returncode == 0
    assert [r["command"] for r in events(tcg_home)] == ["true", "true", "true"]


def test_event_log_unwritable_refuses_the_line_by_default(tmp_path, tcg_home):
    """Fail closed: a line whose event cannot be recorded does not run (126)."""
    (tcg_home / "state" / "events.jsonl").mkdir(parents=True)  # cannot be opened for append
    marker = tmp_path / "ran"
    res = subprocess.run(station(f"touch '{marker}'"), capture_output=True, timeout=TIMEOUT,
                         stdin=subprocess.DEVNULL, env=station_env())
    assert res.returncode == 126 and not marker.exists()
    assert b"blocked (event-log-unwritable)" in res.stderr
    assert b"Is a directory" in res.stderr  # the OS error (EISDIR) is named
    assert b"warning: the security event was not recorded" not in res.stderr


def test_event_log_failure_warns_once_and_keeps_the_decision(tmp_path, tcg_home):
    """With events.on-unwritable = "warn", a broken state dir is not a decision
    error: allowed lines still run, refused lines are still refused, and stderr
    says once that nothing was logged."""
    policy = tmp_path / "policy.toml"
    policy.write_text('[events]\non-unwritable = "warn"\n')
    (tcg_home / "state" / "events.jsonl").mkdir(parents=True)  # cannot be opened for append
    ok = subprocess.run(station("echo ran; exit 3"), capture_output=True, timeout=TIMEOUT,
                        stdin=subprocess.DEVNULL, env=station_env(TCG_POLICY=str(policy)))
    assert ok.returncode == 3 and ok.stdout == b"ran\n"
    assert ok.stderr.count(b"warning: the security event was not recorded") == 1
    (tmp_path / ".env").write_text("A=1\n")
    refused = subprocess.run(station("cat .env"), cwd=tmp_path, capture_output=True,
                             timeout=TIMEOUT, stdin=subprocess.DEVNULL,
                             env=station_env(TCG_ACTOR="agent", TCG_POLICY=str(policy)))
    assert refused.returncode == 126 and refused.stdout == b""
    assert b"warning: the security event was not recorded" in refused.stderr
