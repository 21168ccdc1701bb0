"""A local stand-in for the Anthropic Messages API (research/agents.md recipe).

Scripted by turn: the Nth main-loop request (one carrying the Bash tool) gets
the Nth scripted assistant message; any other request (side queries) gets a
short text. Every request body is kept verbatim: it is exactly what a provider
would receive, so tests scan the whole body for leaks.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def tool_turn(tool_id: str, command: str) -> dict[str, Any]:
    return {"blocks": [{"type": "tool_use", "id": tool_id, "name": "Bash",
                        "input": {"command": command, "description": "run a command"}}],
            "stop_reason": "tool_use"}


def call_turn(tool_id: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    """An assistant turn calling any tool (Read, Write, WebFetch, Agent, …)."""
    return {"blocks": [{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}],
            "stop_reason": "tool_use"}


def text_turn(text: str) -> dict[str, Any]:
    return {"blocks": [{"type": "text", "text": text}], "stop_reason": "end_turn"}


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


class FakeAnthropic:
    def __init__(self, turns: list[dict[str, Any]]):
        self.turns = turns
        self.bodies: list[str] = []
        self.main_calls = 0
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                body = b"{}"
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0") or 0))
                text = raw.decode("utf-8", "replace")
                try:
                    req = json.loads(text)
                except ValueError:
                    req = {}
                with owner.lock:
                    owner.bodies.append(text)
                    tools = [t.get("name") for t in req.get("tools", []) if isinstance(t, dict)]
                    if "Bash" in tools:
                        idx = owner.main_calls
                        owner.main_calls += 1
                        turn = owner.turns[idx] if idx < len(owner.turns) else text_turn("done")
                    else:
                        turn = text_turn("ok")
                if req.get("stream"):
                    self._stream(turn, req.get("model", "claude-test"))
                else:
                    self._json(turn, req.get("model", "claude-test"))

            def _message(self, model: str) -> dict[str, Any]:
                return {"id": "msg_test", "type": "message", "role": "assistant", "model": model,
                        "content": [], "stop_reason": None, "stop_sequence": None,
                        "usage": {"input_tokens": 10, "output_tokens": 1}}

            def _json(self, turn: dict[str, Any], model: str) -> None:
                msg = self._message(model)
                msg["content"] = turn["blocks"]
                msg["stop_reason"] = turn["stop_reason"]
                body = json.dumps(msg).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _stream(self, turn: dict[str, Any], model: str) -> None:
                out = [_sse("message_start", {"type": "message_start", "message": self._message(model)})]
                for i, block in enumerate(turn["blocks"]):
                    if block["type"] == "text":
                        out.append(_sse("content_block_start", {"type": "content_block_start", "index": i,
                                                                "content_block": {"type": "text", "text": ""}}))
                        out.append(_sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                                                "delta": {"type": "text_delta", "text": block["text"]}}))
                    else:
                        start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
                        out.append(_sse("content_block_start", {"type": "content_block_start", "index": i,
                                                                "content_block": start}))
                        out.append(_sse("content_block_delta", {
                            "type": "content_block_delta", "index": i,
                            "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}}))
                    out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": i}))
                out.append(_sse("message_delta", {"type": "message_delta",
                                                  "delta": {"stop_reason": turn["stop_reason"], "stop_sequence": None},
                                                  "usage": {"output_tokens": 5}}))
                out.append(_sse("message_stop", {"type": "message_stop"}))
                body = b"".join(out)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeAnthropic:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def tool_result_bodies(self, tool_id: str) -> list[dict[str, Any]]:
        """Every tool_result block for ``tool_id`` in the requests received."""
        found = []
        for text in self.bodies:
            try:
                req = json.loads(text)
            except ValueError:
                continue
            for msg in req.get("messages", []):
                content = msg.get("content")
                if not isinstance(content, list):
                    continue
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("tool_use_id") == tool_id:
                        found.append(block)
        return found
