"""Properties under stream faults (hypothesis, mitmproxy's chunks(mutations())
pattern): a server's stream of frames is cut at a random point, has bytes
spliced out or in, and arrives in random chunks. Whatever the damage, the MCP
proxy forwards only whole, valid frames, each on one line, and never a planted
secret (docs/reliability.md)."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcg.detect.engine import load_detector
from tcg.jsonrpc import BATCH, INVALID, LineSplitter, parse_line
from tcg.keyhash import KeyedHasher
from tcg.mcp.check_request import RequestChecker
from tcg.mcp.mask_response import ResponseMasker
from tcg.mcp.proxy import McpSession
from tcg.mcp.relay import CLIENT
from tests.mcp.helpers import assert_no_leak, planted_secrets

SECRETS = planted_secrets()
_TEXT = st.lists(st.sampled_from(["ok ", "é ", "漢字 ", "\u2028 ", "\\n ", '" ', "x" * 50 + " ",
                                  *(f" {s} " for s in SECRETS.values())]), max_size=6).map("".join)


@st.composite
def frames(draw):
    out = []
    for mid in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["result", "error", "notification", "request"]))
        text = draw(_TEXT)
        if kind == "result":
            obj = {"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": text}]}}
        elif kind == "error":
            obj = {"jsonrpc": "2.0", "id": mid, "error": {"code": -1, "message": text}}
        elif kind == "notification":
            obj = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": text}}
        else:
            obj = {"jsonrpc": "2.0", "id": f"s{mid}", "method": "sampling/createMessage", "params": {"m": text}}
        out.append(json.dumps(obj, ensure_ascii=draw(st.booleans())).encode() + b"\n")
    return b"".join(out)


@st.composite
def mutated(draw):
    """A valid stream, then cut (EOF at a random point), splices (a slice
    removed or random bytes put in) and a random chunking."""
    data = bytearray(draw(frames()))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(data)))
        if draw(st.booleans()):
            del data[at:at + draw(st.integers(1, 40))]
        else:
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
    if draw(st.booleans()):
        data = data[:draw(st.integers(0, len(data)))]
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=12)))
    chunks, prev = [], 0
    for c in [*cuts, len(data)]:
        chunks.append(bytes(data[prev:c]))
        prev = c
    return chunks


@pytest.fixture(scope="module")
def masker():
    return ResponseMasker(load_detector(), KeyedHasher.for_install())


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(chunks=mutated(), fast=st.booleans())
def test_damaged_server_streams_never_forward_a_broken_frame_or_a_secret(masker, tmp_path, chunks, fast):
    session = McpSession(RequestChecker(cwd=tmp_path), masker, fast_path=fast)
    splitter = LineSplitter()
    sent: list[bytes] = []
    for chunk in chunks:
        for line in splitter.feed(chunk):
            sent += [d for dest, d in session.from_server(line) if dest == CLIENT]
    tail = splitter.tail()  # EOF: the unterminated last line
    if tail:
        sent += [d for dest, d in session.from_server(tail) if dest == CLIENT]
    for frame in sent:
        assert frame.endswith(b"\n") and b"\n" not in frame[:-1]
        parsed = parse_line(frame[:-1])
        assert parsed.kind not in (INVALID, BATCH), frame[:200]
    assert_no_leak(b"".join(sent), list(SECRETS.values()))
