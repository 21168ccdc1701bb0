"""PTY mode: the station agent driven by pexpect in a real terminal, real bash children."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pexpect
import pytest

from tests.runner.helpers import BASH, ZSH, station, station_env

pytestmark = pytest.mark.shell
TIMEOUT = 30


def spawn(line: str, *, rows: int = 24, cols: int = 80, shell: str = BASH,
          **env: str) -> pexpect.spawn:
    argv = station(line, shell)
    return pexpect.spawn(
        argv[0], argv[1:], dimensions=(rows, cols), env=station_env(TERM="xterm", **env),
        timeout=TIMEOUT,
    )


def finish(child: pexpect.spawn) -> int:
    child.expect(pexpect.EOF)
    child.close()
    assert child.signalstatus is None, "the station itself died of a signal"
    return child.exitstatus


def wait_for(predicate, timeout: float = TIMEOUT) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError("condition not reached in time")
        time.sleep(0.02)


@pytest.mark.parametrize("code", [0, 1, 42])
def test_exit_codes(code):
    assert finish(spawn(f"exit {code}")) == code


@pytest.mark.skipif(ZSH is None, reason="zsh not installed")
def test_zsh_in_pty_exit_code_size_and_restore(tmp_path):
    """zsh is the shell that leaves a raw terminal behind when mishandled."""
    child = spawn('[[ -t 0 && -t 1 ]] && print tty-ok; stty size; exit 5', shell=ZSH,
                  rows=33, cols=111)
    child.expect("tty-ok")
    child.expect("33 111")
    assert finish(child) == 5


def test_command_not_found_127():
    child = spawn("no-such-command-tcg-xyz")
    child.expect("not found")
    assert finish(child) == 127


def test_ctrl_c_reaches_the_child_130(tmp_path):
    ready = tmp_path / "ready"
    child = spawn(f"touch '{ready}'; sleep 30")
    wait_for(ready.exists)
    time.sleep(0.1)
    child.sendcontrol("c")
    assert finish(child) == 130


def test_child_killed_by_sigterm_143():
    assert finish(spawn("kill -TERM $$")) == 143


def test_is_a_pty_with_window_size_and_resize(tmp_path):
    go = tmp_path / "go"
    child = spawn(
        f"test -t 0 && test -t 1 && echo tty-ok; stty size; "
        f"while [ ! -e '{go}' ]; do sleep 0.02; done; stty size",
        rows=30,
        cols=100,
    )
    child.expect("tty-ok")
    child.expect("30 100")
    child.setwinsize(40, 132)
    time.sleep(0.2)  # let SIGWINCH reach the station before the child asks again
    go.touch()
    child.expect("40 132")
    assert finish(child) == 0


def test_stdin_forwarded_byte_exact(tmp_path):
    out = tmp_path / "got"
    ready = tmp_path / "ready"
    # raw on the inner terminal too, so the bytes arrive uninterpreted
    child = spawn(f"stty raw -echo; touch '{ready}'; head -c 6 > '{out}'; stty sane")
    wait_for(ready.exists)
    child.send(b"a\x03b\x1a\x04\xff")
    assert finish(child) == 0
    assert out.read_bytes() == b"a\x03b\x1a\x04\xff"


def test_program_exiting_right_after_1mb_delivers_every_byte():
    child = spawn("head -c 1000000 /dev/zero | tr '\\0' a; exit 3")
    got = bytearray()
    while True:
        try:
            got += child.read_nonblocking(65536, timeout=TIMEOUT)
        except pexpect.EOF:
            break
    child.close()
    assert child.exitstatus == 3
    assert got.count(b"a") == 1_000_000


def test_yes_head_no_broken_pipe():
    child = spawn("yes | head -1; echo rc=${PIPESTATUS[0]}")
    child.expect(pexpect.EOF)
    out = child.before
    child.close()
    assert b"Broken pipe" not in out
    assert b"y\r\nrc=141" in out


def test_ctrl_z_suspends_like_a_job_and_fg_resumes(tmp_path):
    """^Z inside the PTY stops the child; tcg stops itself so the outer shell's
    job control sees a stopped job; `fg` continues both."""
    ready = tmp_path / "ready"
    argv = " ".join(f"'{a}'" for a in station(f"touch '{ready}'; sleep 1; echo resumed"))
    sh = pexpect.spawn(
        BASH, ["--norc", "--noprofile", "-i"], env=station_env(PS1="PROMPT> ", TERM="dumb"),
        timeout=TIMEOUT,
    )
    sh.expect("PROMPT> ")
    sh.sendline(argv)
    wait_for(ready.exists)
    time.sleep(0.2)
    sh.sendcontrol("z")
    sh.expect("Stopped")
    sh.expect("PROMPT> ")
    sh.sendline("fg")
    sh.expect("\nresumed")
    sh.expect("PROMPT> ")
    sh.sendline("echo rc=$?")
    sh.expect("rc=0")
    sh.sendline("exit")
    sh.expect(pexpect.EOF)


# ---------------------------------------------------------------- terminal restore


class OuterShell:
    """An interactive bash in a pexpect PTY: the terminal tcg must leave as it found it."""

    def __init__(self, tmp_path: Path):
        self.tmp = tmp_path
        self.sh = pexpect.spawn(
            BASH, ["--norc", "--noprofile", "-i"], env=station_env(PS1="PROMPT> ", TERM="dumb"),
            timeout=TIMEOUT, dimensions=(24, 80),
        )
        self.sh.expect("PROMPT> ")

    def run(self, cmd: str) -> None:
        self.sh.sendline(cmd)
        self.sh.expect("PROMPT> ")

    def stty(self, name: str) -> str:
        f = self.tmp / name
        self.run(f"stty -g > '{f}'")
        return f.read_text()

    def close(self) -> None:
        self.sh.sendline("exit")
        self.sh.expect(pexpect.EOF)


@pytest.mark.parametrize("how", ["normal", "child-killed", "tcg-sigterm"])
def test_terminal_mode_restored(tmp_path, how):
    shell = OuterShell(tmp_path)
    before = shell.stty("before")
    pidfile = tmp_path / "pid"
    rc = tmp_path / "rc"
    line = f"echo $$ $PPID > '{pidfile}.tmp'; mv '{pidfile}.tmp' '{pidfile}'; exec sleep 30"
    if how == "normal":
        line = "exit 7"
    argv = " ".join(f"'{a}'" for a in station(line))
    shell.sh.sendline(f"{argv}; echo $? > '{rc}'")
    if how != "normal":
        wait_for(pidfile.exists)
        child_pid, tcg_pid = map(int, pidfile.read_text().split())
        os.kill(child_pid if how == "child-killed" else tcg_pid,
                signal.SIGKILL if how == "child-killed" else signal.SIGTERM)
    wait_for(rc.exists)
    shell.sh.expect("PROMPT> ")
    after = shell.stty("after")
    shell.close()
    assert after == before
    expected = {"normal": 7, "child-killed": 128 + 9, "tcg-sigterm": 128 + 15}[how]
    assert int(rc.read_text()) == expected


# ---------------------------------------------------------------- full-screen programs


def test_vi_open_scroll_edit_quit(tmp_path):
    target = tmp_path / "notes.txt"
    target.write_text("".join(f"line {i}\n" for i in range(1, 200)) + "THE-END-MARKER\n")
    # a short relative name: a long path makes vi stop at "Press ENTER" first
    child = spawn(f"cd '{tmp_path}' && vi -u NONE notes.txt", rows=24, cols=80)
    child.expect("line 1")
    child.send("G")
    child.expect("THE-END-MARKER")  # vim redraws by difference; this line shares no prefix
    child.send("dd")
    child.send(":wq\r")
    assert finish(child) == 0
    lines = target.read_text().splitlines()
    assert lines[-1] == "line 199" and len(lines) == 199


def test_less_open_scroll_quit(tmp_path):
    target = tmp_path / "long.txt"
    target.write_text("".join(f"row-{i:03d}\n" for i in range(1, 301)))
    child = spawn(f"less '{target}'", rows=24, cols=80, LESS="", LESSHISTFILE="-")
    child.expect("row-001")
    child.send(" ")
    child.expect("row-04")
    child.send("G")
    child.expect("row-300")
    child.send("q")
    assert finish(child) == 0


# ---------------------------------------------------------------- terminal-mode masking


def test_plain_partial_line_shows_while_the_command_runs(tmp_path):
    """A prompt-like partial line is not held until the command ends."""
    go = tmp_path / "go"
    child = spawn(f"printf 'hello '; while [ ! -e '{go}' ]; do sleep 0.05; done; printf 'world\\n'")
    child.expect("hello ")  # before `go` exists: the command is still running
    go.touch()
    child.expect("world")
    assert finish(child) == 0


def test_secret_split_across_two_writes_is_masked(tcg_home):
    token = "ghp_" + "Zq8Xw3Lk9Vb2Nm4Pr7Ts1Yu6Hj0Gf5Dc2Ea8"
    head, tail = token[:14], token[14:]
    child = spawn(f"printf '%s' '{head}'; sleep 0.1; printf '%s\\n' '{tail}'")
    child.expect(pexpect.EOF)
    out = child.before
    child.close()
    assert child.exitstatus == 0
    assert head.encode() not in out and tail.encode() not in out
    assert b"<SECRET:github-pat" in out
