"""A local stand-in for the Anthropic Messages API, so the real Claude Code CLI runs offline.

Scripted by turn: the Nth main-loop request (one carrying the Bash tool) gets
the Nth scripted assistant message; any other request (side queries) gets a
short text. Every request body is kept verbatim: it is exactly what a provider
would receive, so tests scan the whole body for leaks.
"""

from __future__ import annotations

import json
from typing import Any

from tests.helpers.fake_api import FakeAPI


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


class FakeAnthropic(FakeAPI):
    """Turns are the requests that offer the Bash tool (the main loop); side queries get "ok"."""

    @property
    def main_calls(self) -> int:
        return self.calls

    def counts(self, req: dict[str, Any]) -> bool:
        return "Bash" in [t.get("name") for t in req.get("tools", []) if isinstance(t, dict)]

    def answer(self, req: dict[str, Any], turn: dict[str, Any]) -> tuple[bytes, str]:
        if "text" in turn and "blocks" not in turn:
            turn = text_turn(turn["text"])
        model = req.get("model", "claude-test")
        msg = {"id": "msg_test", "type": "message", "role": "assistant", "model": model,
               "content": [], "stop_reason": None, "stop_sequence": None,
               "usage": {"input_tokens": 10, "output_tokens": 1}}
        if not req.get("stream"):
            return json.dumps({**msg, "content": turn["blocks"], "stop_reason": turn["stop_reason"]}).encode(), \
                "application/json"
        out = [_sse("message_start", {"type": "message_start", "message": msg})]
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
        return b"".join(out), "text/event-stream"

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
