"""A scripted newline-JSON-RPC server for byte-level proxy tests (no SDK).

Every line it receives is appended to $RAW_LOG (so a test can prove what did or
did not reach the server). Methods: echo, big, split (answer written in chunks
that cut multi-byte characters), garbage, batch, badshape, error_secret, pid,
spawn (a grandchild for the orphan check), exit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

LOG = os.environ.get("RAW_LOG")


def send(obj, chunks: int = 1, pause: float = 0.0) -> None:
    data = (json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    if chunks <= 1:
        os.write(1, data)
        return
    step = max(1, len(data) // chunks)
    for i in range(0, len(data), step):
        os.write(1, data[i : i + step])
        time.sleep(pause)


def main() -> int:
    buf = bytearray()  # amortised appends: 30 MB frames arrive in 64 KiB pipe reads
    while True:
        chunk = os.read(0, 1 << 20)
        if not chunk:
            return 0
        buf += chunk
        if b"\n" not in chunk:
            continue
        *lines, rest = bytes(buf).split(b"\n")
        buf = bytearray(rest)
        for line in lines:
            if LOG:
                with open(LOG, "ab") as fh:
                    fh.write(line + b"\n")
            rc = handle(line)
            if rc is not None:
                return rc


def handle(line: bytes) -> int | None:
    msg = json.loads(line)
    if "id" not in msg or "method" not in msg:
        return None
    mid, method, params = msg["id"], msg["method"], msg.get("params") or {}
    if method == "echo":
        send({"jsonrpc": "2.0", "id": mid, "result": {"text": params.get("text", "")}})
    elif method == "big":
        text = "lorem ipsum dolor \u2014 \u6f22\u5b57 line\n" * (params["size"] // 32) + params.get("tail", "")
        send({"jsonrpc": "2.0", "id": mid, "result": {"text": text}})
    elif method == "split":
        # one byte per write for the multi-byte part: every character is cut by a read boundary
        data = (json.dumps({"jsonrpc": "2.0", "id": mid, "result": {"text": params["text"]}},
                           ensure_ascii=False) + "\n").encode("utf-8")
        for i in range(len(data)):
            os.write(1, data[i : i + 1])
            if data[i] >= 0x80:
                time.sleep(0.002)
    elif method == "garbage":
        os.write(2, b"raw-server: a log line on stderr\n")
        os.write(1, b"Server starting... not json\n")
        os.write(1, b"\xff\xfe invalid utf-8 \n")
        send({"jsonrpc": "2.0", "id": mid, "result": {"text": "after garbage"}})
    elif method == "batch":
        send([{"jsonrpc": "2.0", "id": mid, "result": {"text": "in a batch"}},
              {"jsonrpc": "2.0", "method": "notifications/message", "params": {}}])
    elif method == "badshape":
        send({"jsonrpc": "2.0", "id": mid, "result": {"text": "x"}, "error": {"code": 1, "message": "y"}})
    elif method == "error_secret":
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32603, "message": "failed with " + params["token"]}})
    elif method == "pid":
        send({"jsonrpc": "2.0", "id": mid, "result": {"pid": os.getpid()}})
    elif method == "spawn":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        send({"jsonrpc": "2.0", "id": mid, "result": {"pid": os.getpid(), "child": child.pid}})
    elif method == "exit":  # optionally a large last answer: the proxy must still deliver it
        text = "last words \u2014 " * (params.get("size", 0) // 16) + params.get("tail", "")
        send({"jsonrpc": "2.0", "id": mid, "result": {"text": text}})
        return int(params.get("code", 0))
    else:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no such method"}})
    return None


if __name__ == "__main__":
    sys.exit(main())
