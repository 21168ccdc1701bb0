"""Faults of the resident terminal session (`tcg_shell session`, docs/shells.md),
driven in real bash and zsh in tmux panes (tests/shells/tmux.py):

- the station SIGKILLed while a program streams secrets through it: the shell
  inside gets SIGHUP (its job records the signal), nothing unmasked reaches
  the screen past the kill, and the terminal the session ran on is sane again;
- the policy file replaced mid-session by an invalid one: the next line is
  refused (fail closed) with the file and line of the error.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time

import pytest

from tests.helpers.waiting import wait_for
from tests.shells import conftest as shell_fixtures

from .helpers import fresh_token

pytestmark = pytest.mark.shell
# The shell tests' fixtures (real bash/zsh panes in tmux), shared rather than copied.
panes, shell_name, warm_detector = (shell_fixtures.panes, shell_fixtures.shell_name,
                                    shell_fixtures.warm_detector)

PY = shlex.quote(sys.executable)

# A job that prints the planted token on every line until the terminal hangs
# up; its SIGHUP handler records the signal before it exits.
STREAMER = r"""
import os, signal, sys, time
def hup(signum, frame):
    with open("hup.txt", "w") as fh:
        fh.write(f"{signum}\n")
    os._exit(129)
signal.signal(signal.SIGHUP, hup)
with open("pid.txt", "w") as fh:
    fh.write(f"{os.getpid()} {os.getppid()}\n")
token = open("tok.txt").read().strip()
i = 0
while True:
    i += 1
    try:
        print(f"row {i} key={token}", flush=True)
    except OSError:
        time.sleep(0.05)  # the hung-up terminal: wait for the SIGHUP
    time.sleep(0.01)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_station_sigkilled_mid_stream_hangs_up_the_shell_and_leaks_nothing(panes, shell_name):
    """A shell that opted out of the automatic session starts one by hand; a job
    in it streams a token; SIGKILL the station mid-stream."""
    token = fresh_token()
    outer = panes(shell_name, session=True, env={"TCG_SESSION_AUTO": "0"})
    (outer.workdir / "tok.txt").write_text(token + "\n")
    (outer.workdir / "streamer.py").write_text(STREAMER)
    before = outer.stty()
    outer.line(f"{PY} -I -m tcg.shell_entry session", wait=False)
    wait_for(lambda: outer.screen().count("P1> ") >= 2, 120, "the session's first prompt")
    station = outer.session_station_pid()
    outer.line(f"{PY} streamer.py", wait=False)
    job, inner_shell = map(int, outer.file("pid.txt").split())
    outer.wait_screen("row 20 key=<SECRET:", timeout=60)  # streaming, masked
    assert _alive(job) and _alive(inner_shell)

    os.kill(station, signal.SIGKILL)
    wait_for(lambda: not _alive(station), 30, "the station to die")
    # The master side closed: the inner shell is hung up and hangs up its job.
    assert outer.file("hup.txt", timeout=30) == f"{int(signal.SIGHUP)}\n"
    wait_for(lambda: not _alive(job) and not _alive(inner_shell), 30,
             "the job and the shell inside the session to exit")
    outer.wait_prompt(timeout=60)  # the outer shell's next prompt: P2
    screen = outer.screen()
    assert "key=<SECRET:github-pat-classic:" in screen
    assert token not in screen and token[4:20] not in screen, screen
    after = outer.stty()
    assert before.split("\n", 1)[1] == after.split("\n", 1)[1]  # every flag as before the session
    assert "-isig" not in after and "-icanon" not in after and "-echo " not in after
    outer.line("echo alive > alive.txt")
    assert outer.file("alive.txt") == "alive\n"
    assert token not in outer.screen()


def test_policy_replaced_by_an_invalid_one_refuses_the_next_line(panes, shell_name, tmp_path):
    """The session re-reads its policy (at most every second): a file broken
    while the session runs refuses the next line with where it broke; mending it
    lets lines run again."""
    policy = tmp_path / "policy.toml"
    policy.write_text('[decisions.human]\nsecret-store-read = "block"\n')
    p = panes(shell_name, session=True, env={"TCG_POLICY": str(policy)})
    p.line("echo first > first.txt")
    assert p.file("first.txt") == "first\n"
    broken = tmp_path / "policy.new"
    broken.write_text('[decisions.human]\nsecret-store-read = "block"\nthis is = not toml ]\n')
    os.replace(broken, policy)  # replaced, as an editor saving the file does
    # Past the session's re-read interval (POLICY_RECHECK, one second).
    time.sleep(1.5)
    screen = p.line("echo second > second.txt")
    assert not (p.workdir / "second.txt").exists(), screen
    assert "tcg: blocked" in screen and "policy" in screen, screen
    assert f"{policy}" in screen.replace("\n", "") and "line 3" in screen, screen
    assert "hint: " in screen
    policy.write_text('[decisions.human]\nsecret-store-read = "block"\n')
    time.sleep(1.5)
    p.line("echo third > third.txt")
    assert p.file("third.txt") == "third\n"


def _tree_rss_kib(pid: int) -> int:
    """VmRSS of ``pid`` and every descendant (the station and its masking process)."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as fh:
                total += next((int(x.split()[1]) for x in fh if x.startswith("VmRSS:")), 0)
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as fh:
                    todo += [int(c) for c in fh.read().split()]
        except (FileNotFoundError, ProcessLookupError):
            continue
    return total


STREAM_LINES = 60_000


def test_a_terminal_that_stops_reading_bounds_the_session_and_loses_nothing(tmp_path, warm_detector,
                                                                             hermetic_home):
    """The session's own terminal (a PTY we hold) stops reading for 3 s while a
    program in the session prints 60,000 lines holding a token: the session
    blocks with bounded memory, and once reading resumes every line arrives, in
    order, masked."""
    import fcntl
    import re
    import termios

    from ptyprocess import PtyProcess  # type: ignore[import-untyped]

    from tests.shells.tmux import BASHRC, render_hook

    token = fresh_token()
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    (home / ".bashrc").write_text(BASHRC + f"source '{home / 'hook.bash'}'\n")
    (home / "hook.bash").write_text(render_hook("bash"))
    (work / "tok.txt").write_text(token + "\n")
    (work / "stream.py").write_text(
        "tok = open('tok.txt').read().strip()\n"
        f"for i in range({STREAM_LINES}):\n    print(i, 'key=' + tok)\n"
        "print('END-' + 'OF-STREAM')\n")
    env = dict(os.environ, HOME=str(home), TERM="xterm-256color", LC_ALL="C.UTF-8")
    env.pop("TCG_SESSION_AUTO", None)
    bash = subprocess.run(["sh", "-c", "command -v bash"], capture_output=True, text=True).stdout.strip()
    term = PtyProcess.spawn([sys.executable, "-I", "-m", "tcg.shell_entry", "session", "--shell", bash,
                             "--", "--noprofile", "--rcfile", str(home / ".bashrc"), "-i"],
                            cwd=str(work), env=env, dimensions=(40, 150))
    got = bytearray()

    def read_until(mark: bytes, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while mark not in got:
            assert time.monotonic() < deadline, f"no {mark!r}; got the tail {bytes(got[-500:])!r}"
            if term.fd in __import__("select").select([term.fd], [], [], 0.5)[0]:
                got.extend(os.read(term.fd, 1 << 16))

    try:
        read_until(b"P1> ")
        term.write(f"{shlex.quote(sys.executable)} stream.py\r".encode())
        read_until(b"key=<SECRET:")
        rss = []
        for _ in range(12):  # 3 s without reading
            time.sleep(0.25)
            rss.append(_tree_rss_kib(term.pid))
        queued = int.from_bytes(fcntl.ioctl(term.fd, termios.FIONREAD, b"\0\0\0\0"), sys.byteorder)
        assert queued >= 2048, f"the terminal's buffer is not full ({queued} bytes)"  # the fault
        assert b"END-OF-STREAM" not in got
        assert max(rss) < 256 * 1024, f"the session grew to {max(rss)} KiB while its terminal stalled"
        read_until(b"END-OF-STREAM", timeout=300)
        read_until(b"P2> ")
    finally:
        term.terminate(force=True)
    text = bytes(got).decode("utf-8", "replace")
    assert token not in text and token[4:20] not in text
    # A line cut by a chunk end while the terminal stalls: the masker holds a possible
    # secret's start for mask.terminal-hold-ms, then lets a few characters go that
    # cannot be one (`gh` of `ghp_…`) and masks the rest when it comes. Such a line is
    # there, its secret masked, with that short prefix of the token before the placeholder.
    found = list(re.finditer(r"(?m)^(\d+) key=([^<\s]{0,4})<SECRET:github-pat-classic:", text))
    assert all(token.startswith(m.group(2)) for m in found), "something other than the token's start was shown"
    rows = [int(m.group(1)) for m in found]
    assert rows == list(range(STREAM_LINES)), "lines lost, repeated or out of order"
