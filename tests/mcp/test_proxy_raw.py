"""`tcg mcp-proxy` at the byte level: a raw client writes exact bytes (ids of both
types, malformed frames, batches, characters cut by read boundaries, 30 MB
frames) and a scripted server (tests/mcp/raw_server.py) answers; signals,
exit status and orphans are checked on real processes."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

import pytest

from tests.helpers.leaks import assert_no_secret_written
from tests.mcp.helpers import HERE, TCG_ERROR_CODE, assert_no_leak, planted_secrets

RAW_SERVER = str(HERE / "raw_server.py")
TIMEOUT = 60


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ", 1)[1][0] != "Z"  # a zombie is dead
    except (FileNotFoundError, IndexError):
        return False


def _wait_dead(pid: int, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


class RawProxy:
    """The proxy in front of raw_server.py, driven with raw bytes."""

    def __init__(self, tmp_path, server=None, env=None):
        self.log = tmp_path / "server_received.jsonl"
        argv = [sys.executable, "-m", "tcg", "mcp-proxy", "--", *(server or [sys.executable, RAW_SERVER])]
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, bufsize=0,
                                     env={**os.environ, "RAW_LOG": str(self.log), **(env or {})})
        self.lines: queue.Queue = queue.Queue()
        self.received = bytearray()
        self.stderr = b""
        threading.Thread(target=self._read, daemon=True).start()
        self._err_thread = threading.Thread(target=self._read_err, daemon=True)
        self._err_thread.start()

    def _read(self):
        buf = bytearray()
        while chunk := os.read(self.proc.stdout.fileno(), 1 << 20):
            self.received += chunk
            buf += chunk
            if b"\n" in chunk:
                *lines, rest = bytes(buf).split(b"\n")
                buf = bytearray(rest)
                for line in lines:
                    self.lines.put(line)
        self.lines.put(None)

    def _read_err(self):
        self.stderr = self.proc.stderr.read()

    def write(self, data: bytes, chunk: int = 0, pause: float = 0.0):
        if not chunk:
            self.proc.stdin.write(data)
            return
        for i in range(0, len(data), chunk):
            self.proc.stdin.write(data[i : i + chunk])
            time.sleep(pause)

    def send(self, obj):
        self.write((json.dumps(obj, ensure_ascii=False) + "\n").encode())

    def next(self, timeout=TIMEOUT):
        line = self.lines.get(timeout=timeout)
        assert line is not None, "proxy closed its stdout"
        return json.loads(line)

    def no_more(self, wait=0.5):
        try:
            line = self.lines.get(timeout=wait)
        except queue.Empty:
            return True
        return line is None

    def server_got(self) -> bytes:
        return self.log.read_bytes() if self.log.exists() else b""

    def close(self, timeout=TIMEOUT) -> int:
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        rc = self.proc.wait(timeout)
        self._err_thread.join(timeout)  # all of the proxy's stderr is in self.stderr
        return rc


def req(mid, method, **params):
    return {"jsonrpc": "2.0", "id": mid, "method": method, "params": params}


def test_ids_keep_their_type_and_blocked_requests_never_reach_the_server(tmp_path):
    p = RawProxy(tmp_path)
    p.send(req("abc-1", "tools/call", name="read_file", arguments={"path": ".env"}))
    r = p.next()
    assert r["id"] == "abc-1" and r["error"]["code"] == TCG_ERROR_CODE
    assert r["error"]["data"] == {"reason": "protected-resource", "rule": "mcp-dotenv"}
    p.send(req(7, "resources/read", uri="file:///home/u/.ssh/id_ed25519"))
    r = p.next()
    assert r["id"] == 7 and type(r["id"]) is int and r["error"]["code"] == TCG_ERROR_CODE
    # the JSON escape \u002e is decoded by parsing: the raw frame spells .env without a dot
    p.write(b'{"jsonrpc":"2.0","id":"u","method":"tools/call","params":{"path":"\\u002eenv"}}\n')
    assert p.next()["id"] == "u"
    # an object KEY naming the resource
    p.send(req(8, "tools/call", arguments={"id_rsa": "x"}))
    assert p.next()["error"]["data"]["rule"] == "mcp-ssh-key"
    # blocked notification: dropped, no reply, not forwarded
    p.send({"jsonrpc": "2.0", "method": "notifications/roots/list_changed", "params": {"p": "a/.env"}})
    p.send(req("s-2", "echo", text="hello"))
    r = p.next()
    assert r == {"jsonrpc": "2.0", "id": "s-2", "result": {"text": "hello"}}
    p.send(req(0, "echo", text="zero"))
    assert p.next()["id"] == 0
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "s-9", "reason": "t"}}
    p.send(cancel)  # relayed unchanged (the id it names is untouched)
    assert p.close() == 0
    got = p.server_got()
    assert b".env" not in got and b"002e" not in got and b"id_rsa" not in got and b".ssh" not in got
    assert got.count(b"\n") == 3
    assert json.loads(got.splitlines()[-1]) == cancel


def test_invalid_client_frames_fail_closed(tmp_path):
    p = RawProxy(tmp_path)
    p.write(b"this is not json\n")
    p.write(b'{"jsonrpc":"2.0","id":"q","method":5}\n')
    r = p.next()
    assert r["id"] == "q" and r["error"]["data"]["reason"] == "invalid-frame"
    # duplicate keys: parsers disagree on which wins, so the frame is refused (its id answered)
    p.write(b'{"jsonrpc":"2.0","id":9,"method":"echo","params":{"text":"a","text":"b"}}\n')
    r = p.next()
    assert r["id"] == 9 and r["error"]["code"] == TCG_ERROR_CODE
    # a batch: every element with an id gets its own error; nothing is forwarded
    p.write(json.dumps([req(1, "echo", text="x"), {"jsonrpc": "2.0", "method": "n"},
                        req("b", "echo", text="y")]).encode() + b"\n")
    ids = {p.next()["id"], p.next()["id"]}
    assert ids == {1, "b"}
    p.write(b'\xff{"jsonrpc":"2.0","id":3,"method":"echo"}\n')  # not UTF-8: no readable id
    p.write(b'{"jsonrpc":"2.0","id":4,"method":"echo","params":{"v":NaN}}\n')
    assert p.next()["id"] == 4
    p.write(b"\n   \n")  # blank lines: ignored
    p.send(req(5, "echo", text="ok"))
    assert p.next() == {"jsonrpc": "2.0", "id": 5, "result": {"text": "ok"}}
    assert p.close() == 0
    assert p.server_got().count(b"\n") == 1  # only the valid request reached the server
    assert b"refused an invalid" in p.stderr


def test_multibyte_utf8_cut_by_read_boundaries_both_ways(tmp_path):
    text = "漢字✓—é\u2028\u0085𝄞 " * 20
    p = RawProxy(tmp_path)
    frame = (json.dumps(req(1, "split", text=text), ensure_ascii=False) + "\n").encode()
    p.write(frame, chunk=1 if len(frame) < 2000 else 7, pause=0.0005)  # client → proxy, byte by byte
    r = p.next()
    assert r["result"]["text"] == text  # server → proxy was cut inside every character too
    assert b"\xef\xbf\xbd" not in p.received  # no U+FFFD anywhere
    assert p.close() == 0


def test_30mb_frames_both_directions_with_a_secret_at_the_end(tmp_path, tcg_home):
    secret = planted_secrets()["TEST_SECRET_A"]
    big = ("lorem ipsum dolor \u2014 \u6f22\u5b57 line\n" * 900_000)  # ~30 MB of UTF-8
    assert len(big.encode()) > 30_000_000
    p = RawProxy(tmp_path)
    p.send(req(1, "echo", text=big + " " + secret))  # a 30 MB request frame ...
    r = p.next(timeout=180)  # ... echoed back as a 30 MB response frame
    text = r["result"]["text"]
    assert text.startswith(big) and "<SECRET:github-pat-classic:" in text[-80:]
    assert p.close() == 0
    assert len(p.server_got()) > 30_000_000
    assert_no_leak(bytes(p.received[-4096:]), [secret])
    assert secret.encode() not in p.received
    assert_no_secret_written(tcg_home, [secret])


def test_server_garbage_batches_and_bad_shapes_never_reach_the_client(tmp_path):
    secret = planted_secrets()["TEST_SECRET_B"]
    p = RawProxy(tmp_path)
    p.send(req(1, "garbage"))
    assert p.next() == {"jsonrpc": "2.0", "id": 1, "result": {"text": "after garbage"}}
    p.send(req(2, "batch"))
    r = p.next()
    assert r["id"] == 2 and r["error"]["data"]["reason"] == "invalid-frame"
    p.send(req("three", "badshape"))
    r = p.next()
    assert r["id"] == "three" and r["error"]["code"] == TCG_ERROR_CODE
    p.send(req(4, "error_secret", token=secret))
    r = p.next()
    assert r["id"] == 4 and r["error"]["code"] == -32603
    assert r["error"]["message"].startswith("failed with <SECRET:stripe-live-secret-key:")
    assert p.close() == 0
    for line in bytes(p.received).splitlines():
        assert json.loads(line)["jsonrpc"] == "2.0"
    assert b"not json" not in p.received and secret.encode() not in p.received
    assert b"raw-server: a log line on stderr" in p.stderr  # the server's stderr is passed through
    assert b"refused an invalid line (not valid JSON) from the server" in p.stderr


def test_exit_status_is_the_servers_and_its_last_large_answer_is_delivered(tmp_path):
    secret = planted_secrets()["TEST_SECRET_C"]
    p = RawProxy(tmp_path)
    p.send(req(1, "exit", code=3, size=12_000_000, tail=" " + secret))  # answer, then exit at once
    r = p.next(timeout=120)
    assert r["id"] == 1 and len(r["result"]["text"]) > 8_000_000
    assert r["result"]["text"].endswith(">") and secret not in r["result"]["text"]
    assert p.proc.wait(TIMEOUT) == 3


def test_client_eof_closes_server_stdin(tmp_path):
    p = RawProxy(tmp_path)
    p.send(req(1, "pid"))
    pid = p.next()["result"]["pid"]
    assert p.close() == 0  # the server saw EOF on its stdin and exited 0
    assert _wait_dead(pid)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_terminates_server_and_its_children(tmp_path, sig):
    p = RawProxy(tmp_path)
    p.send(req(1, "spawn"))
    r = p.next()["result"]
    server, child = r["pid"], r["child"]
    assert _alive(server) and _alive(child)
    p.proc.send_signal(sig)
    rc = p.proc.wait(TIMEOUT)
    assert rc == 128 + signal.SIGTERM  # the server was terminated by SIGTERM: 128+15
    assert _wait_dead(server), "server orphaned"
    assert _wait_dead(child), "server's child orphaned"


def test_proxy_killed_hard_still_takes_the_server_down(tmp_path):
    """kill -9 on the proxy: Linux PDEATHSIG delivers SIGTERM to the server."""
    if not sys.platform.startswith("linux"):
        pytest.skip("PR_SET_PDEATHSIG is Linux-only")
    p = RawProxy(tmp_path)
    p.send(req(1, "pid"))
    server = p.next()["result"]["pid"]
    p.proc.kill()
    p.proc.wait(TIMEOUT)
    assert _wait_dead(server), "server orphaned after kill -9 of the proxy"


def test_missing_server_command_fails_cleanly(tmp_path):
    p = subprocess.run([sys.executable, "-m", "tcg", "mcp-proxy", "--", "no-such-mcp-server-xyz"],
                       input=b"", capture_output=True, timeout=TIMEOUT)
    assert p.returncode == 127
    assert b"not found" in p.stderr and p.stdout == b""


def test_no_deadlock_while_a_large_frame_waits_for_the_client(tmp_path):
    """While the proxy is stuck writing a 4 MB answer to a client that is busy writing,
    the client's next 2000 requests (answered by the proxy itself: blocked) must still be
    read: their replies queue behind the big frame instead of stopping the reader."""
    proc = subprocess.Popen([sys.executable, "-m", "tcg", "mcp-proxy", "--", sys.executable, RAW_SERVER],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    try:
        proc.stdin.write(json.dumps(req(1, "big", size=4_000_000)).encode() + b"\n")
        head = proc.stdout.read(1024)  # the big frame is being written: the writer holds the client side
        pad = "x" * 1100  # 2000 requests of ~1.2 KB: more than a 1 MiB read plus a 1 MiB pipe
        blocked = b"".join(json.dumps(req(i, "tools/call", path=".env", pad=pad)).encode() + b"\n"
                           for i in range(2, 2002))
        done = threading.Event()

        def writer():
            proc.stdin.write(blocked)
            done.set()

        threading.Thread(target=writer, daemon=True).start()
        assert done.wait(TIMEOUT), "the proxy stopped reading the client (deadlock)"
        proc.stdin.close()
        out = head + proc.stdout.read()
        replies = [json.loads(line) for line in out.splitlines()]
        assert [r["id"] for r in replies] == list(range(1, 2002))
    finally:
        proc.kill()
        proc.wait(TIMEOUT)
