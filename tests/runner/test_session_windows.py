"""The Windows session loop (tcg/runner/session_windows.py) against fakes of
the console, the ConPTY child and the named pipe: Windows cannot run here.
The masker and the decider are the real ones. The real thing runs on the
Windows runner of .github/workflows/shells.yml."""

from __future__ import annotations

import os
import queue
import threading
import time

from tcg.runner import session_channel as ch
from tcg.runner.base import LazyFilter
from tcg.runner.session_decide import SessionDecider
from tcg.runner.session_windows import QueueAsker, WindowsSessionLoop

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


class Stream:
    def __init__(self):
        self.q: queue.Queue[bytes] = queue.Queue()
        self.written = bytearray()
        self.lock = threading.Lock()

    def read(self, *_a) -> bytes:
        return self.q.get()

    def write(self, data: bytes) -> int:
        with self.lock:
            self.written += data
        return len(data)

    def text(self) -> str:
        with self.lock:
            return self.written.decode("utf-8", "replace")


class FakeConsole(Stream):
    def __init__(self):
        super().__init__()
        self.dims = (24, 80)

    def size(self):
        return self.dims


class FakeChild(Stream):
    def __init__(self):
        super().__init__()
        self.status = None
        self.sizes = []
        self.signals = []

    def set_size(self, rows, cols):
        self.sizes.append((rows, cols))

    def poll(self):
        return self.status

    def wait(self):
        while self.status is None:
            time.sleep(0.01)
        return self.status

    def send_signal(self, sig):
        self.signals.append(sig)
        self.status = 128 + sig

    def exit(self, code):
        self.q.put(b"")
        self.status = code


class FakePipe(Stream):
    def close(self):
        self.q.put(b"")


def wait_until(cond, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def start(tmp_path, env=None):
    child, console, pipe = FakeChild(), FakeConsole(), FakePipe()

    def masker():
        from tcg.mask import masker_for
        from tcg.runner.session_mask import _load

        return masker_for(_load(), "terminal")

    def decider(asker):
        return SessionDecider(dict(os.environ, **(env or {})), asker, lambda *a: None)

    loop = WindowsSessionLoop(child, console, pipe, LazyFilter(masker), decider, poll=0.02)
    result = {}
    t = threading.Thread(target=lambda: result.setdefault("code", loop.run()), daemon=True)
    t.start()
    return loop, child, console, pipe, t, result


def request(kind, seq, line, cwd):
    return ch.MAGIC + f"{kind} {seq} ".encode() + b"\0" + cwd.encode() + b"\0" + line.encode() + b"\0"


def test_output_masked_input_forwarded_sizes_followed_exit_code(tmp_path):
    loop, child, console, pipe, t, result = start(tmp_path)
    child.q.put(f"PS> echo {TOKEN}\r\n{TOKEN}\r\n".encode())
    wait_until(lambda: "<SECRET:github-pat-classic:" in console.text())
    assert TOKEN not in console.text()
    console.q.put(b"dir\r")
    wait_until(lambda: bytes(child.written) == b"dir\r")
    console.dims = (40, 120)
    wait_until(lambda: (40, 120) in child.sizes)
    child.exit(7)
    t.join(30)
    assert result["code"] == 7


def test_a_line_is_decided_over_the_pipe(tmp_path):
    (tmp_path / ".env").write_text("A=1\n")
    loop, child, console, pipe, t, result = start(tmp_path, env={"TCG_ACTOR": "agent"})
    pipe.q.put(request("L", "1", "Get-Content .env", str(tmp_path)))
    pipe.q.put(request("L", "2", "Get-ChildItem", str(tmp_path)))
    wait_until(lambda: pipe.text().count("\n") == 2)
    first, second = pipe.text().splitlines()
    assert first.split("\x1f")[:2] == ["1", "refuse"]
    assert second.split("\x1f")[:2] == ["2", "ok"]
    child.exit(0)
    t.join(30)


def test_ask_reads_the_key_from_the_console_not_the_child(tmp_path, monkeypatch):
    policy = tmp_path / "p.toml"
    policy.write_text('[decisions.human]\nsecret-store-read = "ask"\n')
    monkeypatch.setenv("TCG_POLICY", str(policy))
    (tmp_path / ".env").write_text("A=1\n")
    loop, child, console, pipe, t, result = start(tmp_path)
    pipe.q.put(request("L", "9", "cat .env", str(tmp_path)))
    wait_until(lambda: "run it anyway? [y/N]" in console.text())
    console.q.put(b"y")
    wait_until(lambda: "\x1fok\x1f" in pipe.text())
    assert [ln.split("\x1f")[1] for ln in pipe.text().splitlines()] == ["wait", "ok"]
    assert b"y" not in bytes(child.written)  # the answer never reached the shell
    child.exit(0)
    t.join(30)


def test_queue_asker_times_out_as_no():
    console = FakeConsole()
    asker = QueueAsker(console, timeout=0.2)
    assert asker.ask("tcg: x - run it anyway?") is False
    assert console.text().endswith("no\r\n")
    assert not asker.offer(b"y")  # no question open: the bytes are the shell's
