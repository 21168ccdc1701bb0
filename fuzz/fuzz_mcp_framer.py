"""Fuzz target: the MCP proxy's line framer and per-line handler, both directions.

The input is split at fuzzer-chosen points; whatever arrives, every frame the
proxy writes is one line of a valid, non-batch JSON-RPC message."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402,F401 - sets TCG_HOME first

with _common.instrumented():
    from tcg.detect.engine import load_detector
    from tcg.jsonrpc import BATCH, INVALID, LineSplitter, parse_line
    from tcg.keyhash import KeyedHasher
    from tcg.mcp.check_request import RequestChecker
    from tcg.mcp.mask_response import ResponseMasker
    from tcg.mcp.proxy import McpSession

MASKER = ResponseMasker(load_detector(), KeyedHasher.for_install())
CHECKER = RequestChecker(cwd=os.environ["TCG_HOME"])


def test_one_input(data: bytes) -> None:
    if not data:
        return
    split = data[0] % 8 + 1
    body = data[1:]
    session = McpSession(CHECKER, MASKER, fast_path=bool(data[0] & 0x80))
    for side in ("server", "client"):
        splitter = LineSplitter()
        handle = session.from_server if side == "server" else session.from_client
        out = []
        for i in range(0, len(body), split * 7):
            for line in splitter.feed(body[i:i + split * 7]):
                out += handle(line)
        tail = splitter.tail()
        if tail:
            out += handle(tail)
        for _dest, frame in out:
            assert frame.endswith(b"\n") and b"\n" not in frame[:-1], frame[:200]
            assert parse_line(frame[:-1]).kind not in (INVALID, BATCH), frame[:200]


SEEDS = [b'\x01{"jsonrpc":"2.0","id":1,"result":{"t":"ghp_Zq8Xw3Lk9Vb2Nm4Pr7Ts1Yu6Hj0Gf5Dc2Ea8"}}\n',
         b'\x83{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"read","arguments":{"path":".env"}}}\n',
         b'\x02[{"jsonrpc":"2.0","id":1,"method":"x"}]\n', b'\x04{"jsonrpc":"2.0","id":1,"result":{}}\n{"jso',
         b'\x05{"jsonrpc":"2.0","id":1,"id":2,"result":{}}\n', b"\x06\xff\xfe\n\n",
         b'\x87{"jsonrpc":"2.0","method":"n","params":{"x":"\\ud800"}}\n']

if __name__ == "__main__":
    _common.run(test_one_input)
