"""McpSession (the relay's handler) in process: routing, fail-closed paths, events."""

from __future__ import annotations

import json

import pytest

from tcg.detect.engine import load_detector
from tcg.jsonrpc import TCG_ERROR_CODE
from tcg.keyhash import KeyedHasher
from tcg.mcp.check_request import RequestChecker
from tcg.mcp.mask_response import MaskStats, ResponseMasker
from tcg.mcp.proxy import McpSession, default_name
from tcg.mcp.relay import CLIENT, SERVER
from tests.mcp.helpers import planted_secrets


@pytest.fixture
def session(tmp_path):
    events = []
    s = McpSession(RequestChecker(cwd=tmp_path), ResponseMasker(load_detector(), KeyedHasher.for_install()),
                   emit=lambda event, **kw: events.append((event, kw)))
    s.events = events
    return s


def line(obj) -> bytes:
    return json.dumps(obj).encode()


def test_routing_and_events(session):
    ok = line({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}})
    assert session.from_client(ok) == [(SERVER, ok + b"\n")]
    out = session.from_client(line({"jsonrpc": "2.0", "id": "a", "method": "tools/call",
                                     "params": {"name": "read", "arguments": {"p": ".env"}}}))
    assert out[0][0] == CLIENT and json.loads(out[0][1])["error"]["code"] == TCG_ERROR_CODE
    assert session.from_client(line({"jsonrpc": "2.0", "method": "n", "params": {"p": ".ssh"}})) == []
    event, fields = session.events[-1]
    assert event == "mcp_request_blocked" and fields["rules"] == ["mcp-ssh-dir"]
    assert session.counts["blocked"] == 2


def test_unmasked_server_lines_are_forwarded_byte_for_byte(session):
    raw = b'{"jsonrpc":"2.0","id":1,"result":{"t":"caf\\u00e9  spaced"}}'
    assert session.from_server(raw) == [(CLIENT, raw + b"\n")]


def test_roots_learned_from_the_clients_answer(session, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / ".env").write_text("x")
    (root / "cfg").symlink_to(tmp_path / ".env")
    session.from_server(line({"jsonrpc": "2.0", "id": 5, "method": "roots/list"}))
    session.from_client(line({"jsonrpc": "2.0", "id": 5, "result": {"roots": [{"uri": root.as_uri()}]}}))
    out = session.from_client(line({"jsonrpc": "2.0", "id": 6, "method": "m", "params": {"path": "cfg"}}))
    assert out[0][0] == CLIENT and json.loads(out[0][1])["error"]["data"]["rule"] == "mcp-dotenv"


def test_a_masked_message_that_would_be_invalid_becomes_an_error(session, monkeypatch):
    secret = planted_secrets()["TEST_SECRET_A"]

    def broken(message, **_kw):
        stats = MaskStats()
        stats.add("github-pat-classic")
        return {"jsonrpc": "2.0", "result": {"t": "masked"}}, stats  # lost its id: not a valid response

    monkeypatch.setattr(session.masker, "mask_message", broken)
    out = session.from_server(line({"jsonrpc": "2.0", "id": "z", "result": {"t": secret}}))
    assert len(out) == 1 and out[0][0] == CLIENT
    reply = json.loads(out[0][1])
    assert reply["id"] == "z" and reply["error"]["data"]["reason"] == "secret-in-response"
    assert secret.encode() not in out[0][1]
    assert session.counts["withheld"] == 1


@pytest.mark.parametrize("fast_path", [True, False])
def test_internal_errors_fail_closed(session, monkeypatch, fast_path):
    secret = planted_secrets()["TEST_SECRET_A"]

    def boom(message, *_a, **_kw):
        raise RuntimeError("bug")

    if not fast_path:
        session._screen = None
    monkeypatch.setattr(session.masker, "mask_message", boom)
    monkeypatch.setattr(session.masker, "is_clean_latin1", boom)  # the fast path's scan
    out = session.from_server(line({"jsonrpc": "2.0", "id": 3, "result": {"t": secret}}))
    assert json.loads(out[0][1])["error"]["data"]["reason"] == "internal-error"
    assert session.from_server(line({"jsonrpc": "2.0", "method": "n", "params": {"t": secret}})) == []
    out = session.from_server(line({"jsonrpc": "2.0", "id": 4, "method": "sampling/createMessage"}))
    assert out[0][0] == SERVER  # a server request is answered back to the server
    monkeypatch.setattr(session.checker, "check", boom)
    out = session.from_client(line({"jsonrpc": "2.0", "id": 9, "method": "m"}))
    assert out[0][0] == CLIENT and json.loads(out[0][1])["error"]["data"]["reason"] == "internal-error"


@pytest.mark.parametrize(("argv", "name"), [
    (["npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"], "server-filesystem"),
    (["/usr/bin/python3.11", "tests/mcp/server.py"], "server"),
    (["uvx", "mcp-server-git"], "mcp-server-git"),
    (["my-server", "--flag"], "my-server"),
])
def test_default_name(argv, name):
    assert default_name(argv) == name


def test_event_fields_never_carry_a_secret_even_as_a_tool_name(session):
    secret = planted_secrets()["TEST_SECRET_B"]
    session.from_client(line({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                              "params": {"name": secret, "arguments": {"p": ".env"}}}))
    event, fields = session.events[-1]
    assert event == "mcp_request_blocked"
    assert secret not in json.dumps(fields) and fields["tool"].startswith("<SECRET:")
