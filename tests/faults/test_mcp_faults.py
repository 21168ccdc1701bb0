"""Fault matrix, MCP: the server dies in the middle of a frame (half a JSON
line, then ``os._exit``), and a client that never reads. The proxy must never
forward the half frame, must answer every pending request with a JSON-RPC
error, exit with the server's status and record it (docs/reliability.md)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tcg.events import iter_records
from tests.faults.helpers import TIMEOUT, fresh_token
from tests.mcp.test_proxy_raw import RawProxy, req

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="real processes and signals")

# Answers request 1 whole, then for request 2 writes half of a frame holding a
# secret and dies; request 3 is still pending when it dies.
HALF_FRAME_SERVER = """
import json, os, sys
token = os.environ["PLANTED"]
seen = 0
for raw in sys.stdin.buffer:
    msg = json.loads(raw)
    seen += 1
    if seen == 1:
        os.write(1, (json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"ok": 1}}) + "\\n").encode())
    elif seen == 3:
        frame = json.dumps({"jsonrpc": "2.0", "id": 2, "result": {"text": "x" * 70000 + " " + token}})
        os.write(1, frame[: len(frame) - 20].encode())  # cut inside the secret, no newline
        os._exit(1)
"""


def test_server_killed_mid_frame_half_frame_never_forwarded_pending_ids_get_errors(tmp_path, tcg_home):
    token = fresh_token()
    proxy = RawProxy(tmp_path, server=[sys.executable, "-c", HALF_FRAME_SERVER], env={"PLANTED": token})
    proxy.send(req(1, "ping"))
    assert proxy.next()["result"] == {"ok": 1}
    proxy.send(req(2, "tools/call", name="read"))
    proxy.send(req(3, "tools/call", name="read"))
    answers = {}
    while len(answers) < 2:
        msg = proxy.next()
        answers[msg["id"]] = msg
    rc = proxy.close()
    assert rc == 1  # the server's own exit status: it died as scripted (the fault happened)
    for mid in (2, 3):
        assert "error" in answers[mid] and "result" not in answers[mid]
    assert token[:12].encode() not in proxy.received and b"x" * 1000 not in proxy.received
    assert proxy.no_more()
    events = [r for r in iter_records(tcg_home / "state" / "events.jsonl") if r["event"] == "mcp_session_status"]
    assert events and events[-1].get("exit_code", events[-1].get("status")) not in (0, None)


def test_client_that_never_reads_leaves_the_proxy_bounded_and_killable(tmp_path):
    """The client sends requests for large answers and never reads: the proxy
    blocks on the full pipe with bounded memory, and still ends on SIGTERM."""
    proxy = subprocess.Popen(
        [sys.executable, "-m", "tcg", "mcp-proxy", "--", sys.executable,
         os.path.join(os.path.dirname(__file__), "..", "mcp", "raw_server.py")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0)
    try:
        for mid in range(40):
            proxy.stdin.write((json.dumps(req(mid, "big", size=1_000_000)) + "\n").encode())
        rss = []
        for _ in range(20):
            time.sleep(0.25)
            with open(f"/proc/{proxy.pid}/status") as fh:
                rss += [int(x.split()[1]) for x in fh if x.startswith("VmRSS:")]
        import fcntl
        import termios

        queued = int.from_bytes(fcntl.ioctl(proxy.stdout.fileno(), termios.FIONREAD, b"\0\0\0\0"), sys.byteorder)
        assert queued >= 60_000  # the fault: our end of the pipe is full and unread
        assert max(rss) < 200 * 1024, f"proxy RSS grew to {max(rss)} KiB"
    finally:
        proxy.send_signal(signal.SIGTERM)
        try:
            rc = proxy.wait(TIMEOUT)
        finally:
            proxy.kill()
    assert rc != 0  # it ended on the signal instead of hanging on the full pipe
