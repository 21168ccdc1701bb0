"""Local stand-ins for the OpenAI APIs Codex and Qwen Code call, offline.

Both keep every request body verbatim (what a provider would receive: tests
grep all of it for planted secrets) and answer turn N of a script with the
Nth scripted assistant message, streamed as SSE:

- FakeResponses: the Responses API (`POST /v1/responses`, what Codex 0.169.0
  speaks: `wire_api = "chat"` is no longer supported there): `response.created`,
  `response.output_item.added`/`.done` (a `function_call` or a `message`),
  `response.completed`.
- FakeChat: Chat Completions (`POST /v1/chat/completions`, Qwen Code's OpenAI
  auth): `chat.completion.chunk` deltas (`tool_calls` or `content`), `[DONE]`.
  Only requests offering tools count as turns (side queries get a short text).
"""

from __future__ import annotations

import json
from typing import Any

from tests.helpers.fake_api import FakeAPI, text

__all__ = ["FakeChat", "FakeResponses", "call", "text"]


def call(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"call": (name, arguments, call_id)}


class FakeResponses(FakeAPI):
    def answer(self, req: dict[str, Any], turn: dict[str, Any]) -> tuple[bytes, str]:
        out = []

        def event(kind: str, **data: Any) -> None:
            out.append(f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n".encode())

        rid = f"resp_{len(self.bodies)}"
        event("response.created", response={"id": rid})
        if "call" in turn:
            name, args, cid = turn["call"]
            item = {"type": "function_call", "id": f"fc_{cid}", "call_id": cid, "name": name,
                    "arguments": json.dumps(args)}
        else:
            item = {"type": "message", "role": "assistant", "id": f"msg_{rid}",
                    "content": [{"type": "output_text", "text": turn["text"]}]}
        event("response.output_item.added", output_index=0, item=item)
        event("response.output_item.done", output_index=0, item=item)
        event("response.completed", response={"id": rid, "usage": {
            "input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}})
        return b"".join(out), "text/event-stream"

    def outputs(self) -> dict[str, str]:
        """call_id → the function_call_output the model received (last request wins)."""
        found = {}
        for body in self.bodies:
            for item in json.loads(body).get("input", []):
                if isinstance(item, dict) and item.get("type") == "function_call_output":
                    found[item["call_id"]] = json.dumps(item["output"])
        return found


class FakeChat(FakeAPI):
    def counts(self, req: dict[str, Any]) -> bool:
        return bool(req.get("tools"))

    def answer(self, req: dict[str, Any], turn: dict[str, Any]) -> tuple[bytes, str]:
        if "call" in turn:
            name, args, cid = turn["call"]
            delta: dict[str, Any] = {"role": "assistant", "tool_calls": [
                {"index": 0, "id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]}
            finish = "tool_calls"
        else:
            delta = {"role": "assistant", "content": turn["text"]}
            finish = "stop"
        base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": req.get("model", "m")}
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        if not req.get("stream"):
            msg = {**base, "object": "chat.completion", "usage": usage,
                   "choices": [{"index": 0, "message": delta, "finish_reason": finish}]}
            return json.dumps(msg).encode(), "application/json"
        chunks = [{**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                  {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": usage}]
        return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n", \
            "text/event-stream"

    def outputs(self) -> dict[str, str]:
        """tool_call_id → the tool message content the model received."""
        found = {}
        for body in self.bodies:
            for msg in json.loads(body).get("messages", []):
                if isinstance(msg, dict) and msg.get("role") == "tool":
                    found[msg.get("tool_call_id")] = json.dumps(msg.get("content"))
        return found
