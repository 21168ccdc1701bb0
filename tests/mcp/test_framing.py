"""Framing: split on \\n only, whole-line UTF-8, strict JSON-RPC shapes, error frames."""

from __future__ import annotations

import json

import pytest

from tcg.jsonrpc import (
    BATCH,
    INVALID,
    NOTIFICATION,
    REQUEST,
    RESPONSE,
    TCG_ERROR_CODE,
    LineSplitter,
    dumps,
    error_frame,
    parse_line,
)


def test_splits_on_newline_only_and_keeps_u2028_and_u0085():
    line = json.dumps({"jsonrpc": "2.0", "method": "m", "params": {"t": "a\u2028b\u0085c\rd"}},
                      ensure_ascii=False).encode()
    s = LineSplitter()
    assert s.feed(line + b"\n" + line[:5]) == [line]
    assert s.feed(line[5:] + b"\n") == [line]
    assert parse_line(line).obj["params"]["t"] == "a\u2028b\u0085c\rd"


@pytest.mark.parametrize("step", [1, 2, 3, 7, 4096])
def test_any_chunking_gives_the_same_lines(step):
    lines = [("漢字✓ " * i).encode() for i in range(1, 40)]
    data = b"\n".join(lines) + b"\n"
    s = LineSplitter()
    got = []
    for i in range(0, len(data), step):
        got += s.feed(data[i : i + step])
    assert got == lines and s.tail() == b""


def test_tail_is_the_unterminated_last_line():
    s = LineSplitter()
    assert s.feed(b"abc\ndef") == [b"abc"]
    assert s.tail() == b"def"


@pytest.mark.parametrize(("line", "kind"), [
    (b'{"jsonrpc":"2.0","id":1,"method":"m"}', REQUEST),
    (b'{"jsonrpc":"2.0","id":"s","method":"m","params":{}}', REQUEST),
    (b'{"jsonrpc":"2.0","method":"notifications/progress","params":{}}', NOTIFICATION),
    (b'{"jsonrpc":"2.0","id":1,"result":{}}', RESPONSE),
    (b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}', RESPONSE),
    (b'[{"jsonrpc":"2.0","id":1,"method":"m"}]', BATCH),
    (b'{"jsonrpc":"2.0","id":null,"method":"m"}', INVALID),
    (b'{"jsonrpc":"2.0","id":true,"method":"m"}', INVALID),
    (b'{"jsonrpc":"2.0","id":1.5,"method":"m"}', INVALID),
    (b'{"jsonrpc":"1.0","id":1,"method":"m"}', INVALID),
    (b'{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}', INVALID),
    (b'{"jsonrpc":"2.0","id":1,"result":[]}', INVALID),
    (b'{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"x"}}', INVALID),
    (b'{"jsonrpc":"2.0","id":1,"method":"m","params":"str"}', INVALID),
    (b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"a":2}}', INVALID),
    (b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":NaN}}', INVALID),
    (b'\xff{"jsonrpc":"2.0","id":1,"method":"m"}', INVALID),
    (b"not json", INVALID),
    (b'"a string"', INVALID),
])
def test_classify(line, kind):
    assert parse_line(line).kind == kind


def test_duplicate_keys_keep_the_id_readable_for_the_error_reply():
    f = parse_line(b'{"jsonrpc":"2.0","id":"k","method":"m","params":{"a":1,"a":2}}')
    assert f.kind == INVALID and f.id == "k" and "duplicate" in f.problem


@pytest.mark.parametrize("mid", [7, "7", "abc", 0, -1, 2**63])
def test_error_frame_preserves_id_and_type(mid):
    data = error_frame(mid, "protected-resource", "refused", "mcp-dotenv")
    assert data.endswith(b"\n") and data.count(b"\n") == 1
    obj = json.loads(data)
    assert obj["id"] == mid and type(obj["id"]) is type(mid)
    assert obj["error"] == {"code": TCG_ERROR_CODE, "message": "refused",
                            "data": {"reason": "protected-resource", "rule": "mcp-dotenv"}}
    assert parse_line(data[:-1]).kind == RESPONSE


def test_error_code_avoids_sdk_transport_codes():
    assert -32099 <= TCG_ERROR_CODE <= -32000 and TCG_ERROR_CODE not in (-32000, -32001, -32002)


def test_dumps_never_embeds_a_newline_and_survives_lone_surrogates():
    data = dumps({"t": "a\nb\u2028", "s": "\ud800"})
    assert data.count(b"\n") == 1
    assert json.loads(data)["s"] == "\ud800"
