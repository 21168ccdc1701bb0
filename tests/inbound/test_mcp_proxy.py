"""The inbound gate on `tcg mcp-proxy`'s response path: the official SDK client, the real
proxy process and a real SDK server (tests/mcp/server.py); the vectors travel as tool
results (`echo` returns its argument, `read_file` a file)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("mcp", reason="the official MCP SDK (PyPI `mcp`) is a test dependency")

from tcg.events import iter_records  # noqa: E402
from tests.inbound.vectors import DOCUMENTED_MISSES, MUST_FLAG, MUST_PASS  # noqa: E402
from tests.mcp.helpers import run_client, text_of  # noqa: E402


def _events(tcg_home):
    files = list(tcg_home.rglob("events.jsonl"))
    return list(iter_records(files[0])) if files else []


def _read_all(tmp_path, texts):
    """Each text written to a file and read back through the proxy by the server's
    read_file tool (the request names only a harmless path; echo's argument would
    itself be checked as a request)."""
    paths = []
    for i, text in enumerate(texts):
        path = tmp_path / f"doc{i}.txt"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        paths.append(path)

    async def body(client):
        out = []
        for path in paths:
            res = await client.call_tool("read_file", {"path": str(path)})
            out.append((res, text_of(res), res.content))
        return out

    return run_client(body, tap_log=tmp_path / "received.bin")


def test_every_vector_through_the_proxy(tmp_path, tcg_home):
    flag = [t for _, t, _ in MUST_FLAG if len(t) < 5000]  # the big ones go below, by file
    clean = [t for _, t in MUST_PASS + DOCUMENTED_MISSES]
    results = _read_all(tmp_path, flag + clean)
    for (_res, _text, content), sent in zip(results[: len(flag)], flag, strict=True):
        first = content[0].text
        assert first.startswith("tcg inbound warning: this MCP tool result"), sent
        assert content[1].text == sent, "the result is delivered whole after the warning"
    for (_res, text, content), sent in zip(results[len(flag):], clean, strict=True):
        assert len(content) == 1 and text == sent, sent
    received = [json.loads(line) for line in (tmp_path / "received.bin").read_bytes().splitlines()
                if line.strip()]
    warnings = [m["result"]["warning"] for m in received if "warning" in m.get("result", {})]
    assert len(warnings) == len(flag) and all(w.startswith("tcg inbound warning") for w in warnings)
    events = [e for e in _events(tcg_home) if e["event"] == "inbound_flagged"]
    assert len(events) == len(flag)
    assert all(e["surface"] == "mcp" and e["inbound_surface"] == "mcp-result" and e["name"]
               for e in events)
    log = "".join(json.dumps(e) for e in events)
    assert "previous instructions" not in log and "предыдущие" not in log


def test_drain_cut_and_flood_through_files(tmp_path, tcg_home):
    tib = tmp_path / "tib.txt"
    tib.write_text("head " + "\u0f40" * 13_000 + " tail", encoding="utf-8")
    zw = tmp_path / "zw.txt"
    zw.write_text("\u200b" * 10_000, encoding="utf-8")

    async def body(client):
        return [(await client.call_tool("read_file", {"path": str(p)})).content for p in (tib, zw)]

    tib_content, zw_content = run_client(body)
    assert tib_content[0].text.startswith("tcg inbound warning")
    delivered = tib_content[1].text
    assert delivered.count("\u0f40") == 2000 and delivered.startswith("head ")
    assert delivered.endswith(" tail")
    assert "invisible" in zw_content[0].text and zw_content[1].text == "\u200b" * 10_000


def test_block_policy_withholds_with_the_same_id(tmp_path, tcg_home):
    (tcg_home / "config").mkdir(exist_ok=True)
    (tcg_home / "config" / "policy.toml").write_text(
        "[inbound.surfaces.mcp-result]\ninjection = 'block'\n", encoding="utf-8")
    (res, text, content), (res2, text2, _) = _read_all(tmp_path, [MUST_FLAG[0][1], "hello"])
    assert res.is_error and "withheld" in text and MUST_FLAG[0][1] not in text
    assert text2 == "hello", "the session goes on"
    (event,) = [e for e in _events(tcg_home) if e["event"] == "inbound_flagged"]
    assert event["action"] == "block" and event["decision"] == "block"
