"""`tcg mcp-proxy` between the official MCP Python SDK client and an SDK server (real parts).

Each test is one real session: client → tap (records every byte the client
receives) → `python -m tcg mcp-proxy` → tests/mcp/server.py.
"""

from __future__ import annotations

import base64
import json

import pytest

pytest.importorskip("mcp", reason="the official MCP SDK (PyPI `mcp`) is a test dependency")

import anyio  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from tcg.events import iter_records  # noqa: E402
from tests.helpers.leaks import assert_no_secret_written
from tests.mcp.helpers import TCG_ERROR_CODE, assert_no_leak, planted_secrets, run_client, text_of


def _find_events(tcg_home):
    files = list(tcg_home.rglob("events.jsonl"))
    assert files, "no event log written"
    return list(iter_records(files[0]))


def test_masks_every_field_relays_everything_and_leaks_nothing(tmp_path, tcg_home):
    secrets = planted_secrets()
    a, b, c, d = secrets["TEST_SECRET_A"], secrets["TEST_SECRET_B"], secrets["TEST_SECRET_C"], \
        secrets["TEST_SECRET_D"]
    leaky = tmp_path / "notes.txt"
    leaky.write_text(f"aws run\nGITHUB_TOKEN={a}\nstripe: {b}\n", encoding="utf-8")
    small_blob = tmp_path / "small.bin"
    small_blob.write_bytes(f"TOKEN={c}\n".encode())
    large_blob = tmp_path / "large.bin"  # > 4096 base64 chars: the proxy's own long-run pass
    large_blob.write_bytes(b"header line\n" * 600 + f"key={d}\n".encode() + b"trailer\n" * 50)
    tap = tmp_path / "received.bin"

    async def body(client):
        out = {}
        tools = await client.list_tools()
        out["deploy_desc"] = next(t.description for t in tools.tools if t.name == "deploy")
        out["file"] = text_of(await client.call_tool("read_file", {"path": str(leaky)}))
        out["env"] = text_of(await client.call_tool("env_dump", {}))
        out["structured"] = (await client.call_tool("structured", {})).structured_content
        out["echo"] = text_of(await client.call_tool("echo", {"text": f"echo {c}"}))
        out["small_blob"] = (await client.call_tool("blob", {"path": str(small_blob)})).content
        out["large_blob"] = (await client.call_tool("blob", {"path": str(large_blob)})).content
        out["resource"] = (await client.read_resource("config://secret")).contents[0].text
        out["prompt"] = (await client.get_prompt("leaky_prompt")).messages[0].content.text
        progress = []

        async def on_progress(p, total, message):
            progress.append((p, total, message))

        out["prog"] = text_of(await client.call_tool("prog", {"steps": 3}, progress_callback=on_progress))
        out["progress"] = progress
        out["sample"] = text_of(await client.call_tool("sample", {"prompt": "hello"}))
        # concurrent in-flight calls, answered out of order
        results = {}

        async def call(i):
            r = await client.call_tool("sleep", {"seconds": 0.3 - i * 0.03})
            results[i] = text_of(r)

        async with anyio.create_task_group() as tg:
            for i in range(8):
                tg.start_soon(call, i)
        out["concurrent"] = results
        # cancellation: the client times out, sends notifications/cancelled; the session lives on
        with pytest.raises(MCPError):
            await client.call_tool("sleep", {"seconds": 30}, read_timeout_seconds=0.5)
        out["after_cancel"] = text_of(await client.call_tool("echo", {"text": "still alive"}))
        return out

    out = run_client(body, tap_log=tap, env=secrets)

    assert "<SECRET:" in out["deploy_desc"]
    assert "aws run" in out["file"] and out["file"].count("<SECRET:") == 2
    assert "<SECRET:github-pat-classic:" in out["file"]
    assert out["env"].count("<SECRET:") >= 4
    structured = json.dumps(out["structured"])
    assert structured.count("<SECRET:github-pat-classic:") == 3  # value, list item, key
    assert out["echo"].startswith("echo <SECRET:")
    for content in (out["small_blob"], out["large_blob"]):
        image, resource = content
        for data in (image.data, resource.resource.blob):
            decoded = base64.b64decode(data)
            assert decoded.startswith(b"<SECRET:") or b"<SECRET:" in decoded
    assert "<SECRET:" in out["resource"] and "<SECRET:" in out["prompt"]
    assert out["prog"] == "done" and [p[0] for p in out["progress"]] == [1, 2, 3]
    assert out["sample"] == "sampled:hello"
    assert out["concurrent"] == {i: "slept" for i in range(8)}
    assert out["after_cancel"] == "still alive"

    received = tap.read_bytes()
    assert received.count(b"\n") > 10
    assert_no_leak(received, list(secrets.values()))
    assert_no_secret_written(tcg_home, list(secrets.values()))

    events = _find_events(tcg_home)
    kinds = [e["event"] for e in events]
    assert kinds[0] == "mcp_session_status" and events[0]["status"] == "start"
    assert kinds[-1] == "mcp_session_status" and events[-1]["status"] == "stop"
    assert events[-1]["exit_code"] == 0 and events[-1]["policy"]["fingerprint"]
    masked = [e for e in events if e["event"] == "mcp_response_masked"]
    rules = {r for e in masked for r in e["rules"]}
    assert {"github-pat-classic", "stripe-live-secret-key"} <= rules
    assert all(e["count"] >= 1 and e["reason"] == "secret-in-response" for e in masked)


def _protected_tree(tmp_path):
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    (work / ".env").write_text("DB_PASSWORD=hunter2hunter2\n")
    (work / ".env.local").write_text("X=1\n")
    (work / "environment.txt").write_text("just a file about environments\n")
    (work / "innocent.txt").symlink_to(".env")  # relative symlink
    (work / "abs_link.txt").symlink_to(work / ".env.local")  # absolute symlink
    ssh = tmp_path / "home_ssh" / ".ssh"
    ssh.mkdir(parents=True)
    (ssh / "id_ed25519").write_text("not really a key\n")
    (work / "keydir").symlink_to(ssh)
    root = tmp_path / "declared_root"
    root.mkdir()
    (root / "cfg.txt").symlink_to(work / ".env")  # only reachable relative to the root
    return work, root


BLOCKED_PATHS = [
    ".env", "./.env", ".env.local", ".ENV", "%2Eenv", "%252Eenv", "%25252Eenv", "sub\\..\\.env",
    "sub/../.env", "\\u002eenv", "innocent.txt", "abs_link.txt", "keydir/id_ed25519", "keydir/config",
    "file:///tmp/x/.env", "~/.ssh/id_rsa", "/some/where/id_dsa", "cat .env.production",
]


def test_blocks_protected_resources_in_every_spelling(tmp_path, tcg_home):
    work, root = _protected_tree(tmp_path)

    async def list_roots(ctx):
        return types.ListRootsResult(roots=[types.Root(uri=root.as_uri())])

    async def body(client):
        outcome = {}
        for path in BLOCKED_PATHS:
            try:
                await client.call_tool("read_file", {"path": path})
                outcome[path] = "allowed"
            except MCPError as exc:
                outcome[path] = (exc.code, exc.data, exc.message)
        # a key hidden in a nested argument object, and a resource URI
        try:
            await client.call_tool("echo", {"text": "fine", "extra": {"nested": ["a", "../.ssh"]}})
            outcome["nested"] = "allowed"
        except MCPError as exc:
            outcome["nested"] = (exc.code, exc.data, exc.message)
        try:
            await client.read_resource("file:///home/u/.env")
            outcome["resource"] = "allowed"
        except MCPError as exc:
            outcome["resource"] = (exc.code, exc.data, exc.message)
        outcome["environment.txt"] = text_of(await client.call_tool("read_file", {"path": "environment.txt"}))
        # before roots are known, cfg.txt (relative to the root, not the cwd) is just missing
        r = await client.call_tool("read_file", {"path": "cfg.txt"})
        outcome["cfg-before-roots"] = r.is_error
        assert await client.call_tool("roots", {})  # server asks roots/list; proxy learns the root
        try:
            await client.call_tool("read_file", {"path": "cfg.txt"})
            outcome["cfg-after-roots"] = "allowed"
        except MCPError as exc:
            outcome["cfg-after-roots"] = (exc.code, exc.data, exc.message)
        return outcome

    out = run_client(body, cwd=work, list_roots_callback=list_roots)
    for path in [*BLOCKED_PATHS, "nested", "resource", "cfg-after-roots"]:
        got = out[path]
        assert got != "allowed", f"{path!r} reached the server"
        code, data, message = got
        assert code == TCG_ERROR_CODE, path
        assert data["reason"] == "protected-resource", path
        assert data["rule"].startswith("mcp-"), path
        assert "hunter2" not in message
    assert out["keydir/id_ed25519"][1]["rule"] in ("mcp-ssh-dir", "mcp-ssh-key")
    assert out["environment.txt"] == "just a file about environments\n"
    assert out["cfg-before-roots"] is True  # relative to the cwd it does not exist: server error

    events = _find_events(tcg_home)
    blocked = [e for e in events if e["event"] == "mcp_request_blocked"]
    assert len(blocked) == len(BLOCKED_PATHS) + 3
    assert all(e["decision"] == "block" and e["rules"] for e in blocked)
    flat = json.dumps(events)
    assert "hunter2" not in flat and "innocent.txt" not in flat


def test_5mb_frame_and_a_server_printing_garbage(tmp_path, tcg_home):
    """5 MB through the SDK on both ends (30 MB is in test_proxy_raw: the SDK alone
    needs ~40 s for one 30 MB result here), with a secret at its end, while the
    server prints non-JSON lines on stdout."""
    secret = planted_secrets()["TEST_SECRET_A"]

    async def body(client):
        garbage = text_of(await client.call_tool("garbage", {}))
        five = text_of(await client.call_tool("big", {"size": 5_000_000, "tail": f" token {secret}"}))
        return garbage, five, text_of(await client.call_tool("echo", {"text": "x"}))

    garbage, five, echo = run_client(body, env={"TEST_GARBAGE": "1"})
    assert garbage == "ok" and echo == "x"
    assert len(five.encode()) > 4_999_000
    assert "\u2028" in five and "\u0085" in five and "\u6f22\u5b57" in five
    assert five.endswith(">") and "<SECRET:github-pat-classic:" in five[-100:]
    assert secret not in five
    stop = [e for e in _find_events(tcg_home) if e.get("status") == "stop"][-1]
    # the startup line; inside a tool the SDK server points fd 1 at stderr (its own guard)
    assert stop["invalid_server"] == 1
    assert stop["masked_spans"] == 1


def test_auto_mode_client_works_through_the_proxy(tcg_home):
    """The SDK's default (server/discover probe, 2026-07-28 protocol) passes through unchanged."""

    async def body(client):
        return text_of(await client.call_tool("echo", {"text": "modern"}))

    assert run_client(body, mode="auto") == "modern"
