"""The session's direct output path: once the first screen is settled, the copy
loop's PTY reader thread writes the shell's output straight into the masking
process's pipe (tcg.runner.master_reader.MasterReader.attach). Real bash on a real PTY,
the real masking process writing to fd 1 (captured); the reader's methods are
only wrapped to see which path a burst took."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from tcg.runner import loop, master_reader
from tcg.runner.posix import spawn_pty
from tcg.runner.session import SessionOutput
from tcg.runner.session_screen import FirstScreen
from tests.runner.helpers import BASH

pytestmark = pytest.mark.shell
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
HALF = len(TOKEN) // 2
PLACEHOLDER = "<SECRET:github-pat-classic:"


class Spy:
    """Records the bursts the reader wrote directly and its attaches (the real
    methods run unchanged)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch):
        self.sent: list[bytes] = []
        self.attached = threading.Event()
        self.attaches = 0
        send, attach = master_reader.MasterReader._direct, master_reader.MasterReader.attach
        spy = self

        def _direct(reader: master_reader.MasterReader, data: bytes) -> bool:
            ok = send(reader, data)
            if ok:
                spy.sent.append(data)
            return ok

        def _attach(reader: master_reader.MasterReader, fd_of, feed) -> bool:
            ok = attach(reader, fd_of, feed)
            if ok:
                spy.attaches += 1
                spy.attached.set()
            return ok

        monkeypatch.setattr(master_reader.MasterReader, "_direct", _direct)
        monkeypatch.setattr(master_reader.MasterReader, "attach", _attach)

    def direct(self) -> bytes:
        return b"".join(self.sent)


def run_session_output(script: str, cwd: str, services: tuple = ()) -> tuple[int, SessionOutput]:
    """``bash -c script`` on a PTY through the copy loop and a SessionOutput
    (its masking process writes to our fd 1)."""
    output = SessionOutput(dict(os.environ), 1)
    output.prepare(FirstScreen(None, None))  # no known first screens: decided at once
    stdin = os.open(os.devnull, os.O_RDONLY)
    try:
        with loop.pty_signals() as sigs:
            child = spawn_pty([BASH, "--norc", "--noprofile", "-c", f"cd '{cwd}' && {script}"],
                              dict(os.environ), size=(24, 80))
            try:
                code = loop.copy_loop(child, stdin, 1, output, sigs, services=services)
            finally:
                child.close()
    finally:
        os.close(stdin)
        output.flush()
    return code, output


def test_a_secret_split_across_direct_bursts_is_masked(tmp_path, capfd, monkeypatch):
    spy = Spy(monkeypatch)
    (tmp_path / "a").write_text("x " + TOKEN[:HALF])
    (tmp_path / "b").write_text(TOKEN[HALF:] + " y\n")
    # the pauses are shorter than the masker's hold (500 ms): a tail that may
    # grow into a secret waits for the rest
    code, _ = run_session_output("echo ready; sleep 0.3; cat a; sleep 0.2; cat b; echo done",
                                 str(tmp_path))
    out = capfd.readouterr().out
    assert code == 0
    assert "ready" in out and "done" in out
    assert TOKEN not in out and TOKEN[:HALF] not in out
    assert "x " + PLACEHOLDER in out
    # both halves went through the direct path, in bursts of their own
    halves = [b for b in spy.sent if TOKEN[:HALF].encode() in b or TOKEN[HALF:].encode() in b]
    assert len(halves) == 2 and not any(TOKEN.encode() in b for b in halves)


def test_direct_bursts_keep_order_and_nothing_is_lost_at_exit(tmp_path, capfd, monkeypatch):
    """The switch to direct mode happens while output streams: the loop's first
    batches are fed slowly, so more is queued behind them when it attaches."""
    spy = Spy(monkeypatch)
    feed = SessionOutput.feed
    calls = []

    def slow_feed(self: SessionOutput, data: bytes) -> bytes:
        calls.append(len(data))
        if len(calls) <= 3:
            time.sleep(0.1)  # the reader queues more meanwhile
        return feed(self, data)

    monkeypatch.setattr(SessionOutput, "feed", slow_feed)
    code, _ = run_session_output("seq 1 200000; exit 3", str(tmp_path))
    out = capfd.readouterr().out
    assert code == 3
    lines = out.replace("\r\n", "\n").split("\n")
    numbers = [int(x) for x in lines if x.isdigit()]
    assert numbers == list(range(1, 200001))
    assert len(spy.direct()) > 100_000  # the rest went the direct way


def test_a_masking_process_killed_under_direct_mode_is_replaced_and_nothing_leaks(
        tmp_path, capfd, monkeypatch):
    """The reader writes to a dead masking process's pipe (EPIPE): the chunk goes
    back to the loop, which starts a new masking process; nothing is shown
    unmasked and the new process masks the rest."""
    spy = Spy(monkeypatch)
    holder: dict[str, SessionOutput] = {}
    real_init = SessionOutput.__init__

    def init(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        holder["out"] = self

    monkeypatch.setattr(SessionOutput, "__init__", init)
    go = tmp_path / "go"

    def kill_then_go() -> None:
        if not spy.attached.wait(60):
            return
        proc = holder["out"].proc
        os.kill(proc.pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # dead (a zombie until the station reaps it)
            try:
                with open(f"/proc/{proc.pid}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                        break
            except OSError:
                break
            time.sleep(0.02)
        go.touch()

    killer = threading.Thread(target=kill_then_go, daemon=True)
    killer.start()
    code, output = run_session_output(
        "echo ready; sleep 0.2; echo more; "
        "while [ ! -e go ]; do sleep 0.05; done; "
        f"echo after {TOKEN}; sleep 0.3; echo second {TOKEN}",
        str(tmp_path))
    killer.join(5)
    out = capfd.readouterr().out
    assert code == 0 and go.exists()
    assert output.restarts == 1 and "restarting it" in out
    assert TOKEN not in out
    assert "second " + PLACEHOLDER in out
    assert spy.attached.is_set()


class SlowService:
    """A LoopService (the verdict channel's interface) that takes its time, as a
    question asked on the terminal does."""

    def __init__(self, spy: Spy):
        self.fd, self._w = os.pipe()
        self.spy = spy
        self.during: tuple[int, int] | None = None

    def ready(self) -> None:
        os.read(self.fd, 1)
        before = len(self.spy.sent)
        time.sleep(0.5)
        self.during = (before, len(self.spy.sent))
        os.close(self.fd)
        os.close(self._w)
        self.fd = -1


def test_output_waits_while_a_service_runs_then_goes_direct_again(tmp_path, capfd, monkeypatch):
    spy = Spy(monkeypatch)
    service = SlowService(spy)

    def ask() -> None:
        if spy.attached.wait(60):
            time.sleep(0.2)
            os.write(service._w, b"?")

    threading.Thread(target=ask, daemon=True).start()
    code, _ = run_session_output(
        "echo ready; for i in $(seq 1 40); do echo tick $i; sleep 0.05; done", str(tmp_path),
        services=(service,))
    out = capfd.readouterr().out.replace("\r\n", "\n")
    assert code == 0
    assert service.during is not None
    before, after = service.during
    assert before == after  # nothing went to the masking process behind the service's back
    assert spy.attaches >= 2  # and direct mode came back afterwards
    ticks = [int(x.split()[1]) for x in out.split("\n") if x.startswith("tick ")]
    assert ticks == list(range(1, 41))


def _session_on_slow_terminal(tmp_path, env: dict[str, str], script: str,
                              during=None) -> tuple[int, bytes]:
    """``tcg_shell session`` running ``bash -c script`` on an outer PTY whose
    emulator reads nothing for a while (the masking process's terminal writes
    block and its writer queues), then drains until the end. ``during()`` runs
    while it waits. (exit status, everything the terminal got)."""
    import subprocess
    import tty

    from tests.runner.helpers import TCG_SHELL

    master, slave = os.openpty()
    tty.setraw(slave)
    proc = subprocess.Popen([TCG_SHELL, "session", "--shell", BASH, "--", "--norc", "--noprofile",
                             "-c", script], stdin=slave, stdout=slave, stderr=slave, env=env,
                            cwd=tmp_path, start_new_session=True)
    os.close(slave)
    try:
        time.sleep(1.0)  # nothing read: the output path backs up to the shell
        if during is not None:
            during()
        got = bytearray()
        while True:
            try:
                data = os.read(master, 1 << 16)
            except OSError:  # EIO: every holder of the slave is gone
                break
            if not data:
                break
            got += data
        return proc.wait(60), bytes(got)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("path", ["fresh", "served"])
def test_bulk_output_to_a_slow_terminal_is_masked_complete_and_in_order_at_exit(
        tmp_path, path):
    """The masking process's terminal writer (tcg.runner.term_writer) holds output
    while the terminal is behind; all of it is masked and written, in order,
    before the session exits with the shell's status; a fork server's worker
    (its descriptors passed over the socket) behaves as a fresh process."""
    from tests.helpers.mask_servers import listening, served_workers
    from tests.helpers.waiting import wait_for

    env = dict(os.environ, TERM="xterm")
    (tmp_path / "tok").write_text(f"x {TOKEN} y\n")
    script = "cat tok; seq 1 200000; cat tok; exit 3"
    seen: list[int] = []
    if path == "fresh":
        env["TCG_MASK_SERVER"] = "0"
        during = None
    else:
        _session_on_slow_terminal(tmp_path, env, "true")  # starts this TCG_HOME's server
        wait_for(lambda: listening(env), 120, "the masking fork server to listen")

        def during() -> None:
            seen.extend(served_workers(env["TCG_HOME"]))
    code, got = _session_on_slow_terminal(tmp_path, env, script, during)
    out = got.decode("utf-8", "replace").replace("\r\n", "\n")
    assert code == 3, out[-2000:]
    assert TOKEN not in out and TOKEN[:HALF] not in out
    lines = out.split("\n")
    numbers = [int(x) for x in lines if x.isdigit()]
    assert numbers == list(range(1, 200001))
    masked = [i for i, x in enumerate(lines) if x.startswith("x " + PLACEHOLDER)]
    assert len(masked) == 2 and masked[0] < lines.index("1") and masked[1] > lines.index("200000")
    if path == "served":
        assert seen, "the session's masking process did not come from the fork server"
