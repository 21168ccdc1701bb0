"""Newline-delimited JSON-RPC 2.0: line framing, strict parsing, message shapes, error frames.

The MCP stdio proxy (tcg.mcp) speaks it on both sides, and the stages it runs on
a server's responses (tcg.entities.objects, tcg.inbound.mcp) rebuild and refuse
frames with it: it sits below all three, in the core.

Frames are split on ``b"\\n"`` only (never ``splitlines()``: U+2028/U+0085 may
appear raw inside JSON strings) and decoded as UTF-8 per whole line, so a
multi-byte character split across two reads is never damaged. There is no line
length limit (asyncio's 64 KiB ``StreamReader`` limit broke other proxies).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

# Every error tcg originates on the wire carries this code: inside the
# implementation-defined range -32000..-32099, avoiding -32000/-32001 (read by
# SDKs as "connection closed" / "timeout") and -32002 (MCP "resource not found").
TCG_ERROR_CODE = -32051

REQUEST = "request"
NOTIFICATION = "notification"
RESPONSE = "response"
BATCH = "batch"
INVALID = "invalid"


class LineSplitter:
    """Accumulate raw chunks; return complete lines (without the newline).

    Chunks are kept in a list and joined once per line, so a 30 MB frame read
    in 256 KiB pieces costs O(n), not O(n²).
    """

    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def feed(self, chunk: bytes) -> list[bytes]:
        lines: list[bytes] = []
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            if nl < 0:
                break
            if self._parts:
                self._parts.append(chunk[start:nl])
                lines.append(b"".join(self._parts))
                self._parts = []
            else:
                lines.append(chunk[start:nl])
            start = nl + 1
        if start < len(chunk):
            self._parts.append(chunk[start:])
        return lines

    def tail(self) -> bytes:
        """What is left after EOF (an unterminated last line), and reset."""
        data = b"".join(self._parts)
        self._parts = []
        return data


class FrameError(ValueError):
    """The line is not one valid JSON-RPC 2.0 message."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # Parsers disagree on duplicate keys (first vs last wins): a frame with one
    # could show the client a value the proxy never checked. Refuse it.
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise FrameError("duplicate object key")
    return obj


def _no_constant(name: str) -> Any:
    raise FrameError(f"non-JSON constant {name}")


def loads(text: str) -> Any:
    """Strict JSON: no NaN/Infinity, no duplicate keys."""
    return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)


def is_valid_id(value: Any) -> bool:
    """MCP request ids: a string or an integer (never null, never a bool)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def readable_id(obj: Any) -> Any:
    """The id of a (possibly malformed) message if one can be answered, else None."""
    if isinstance(obj, dict):
        value = obj.get("id")
        if is_valid_id(value):
            return value
    return None


@dataclass
class Frame:
    """One parsed line. ``obj`` is None when the line is not JSON."""

    kind: str
    obj: Any = None
    problem: str = ""

    @property
    def id(self) -> Any:
        return readable_id(self.obj)

    @property
    def method(self) -> str | None:
        m = self.obj.get("method") if isinstance(self.obj, dict) else None
        return m if isinstance(m, str) else None


def classify(obj: Any) -> tuple[str, str]:
    """(kind, problem) of a parsed JSON value."""
    if isinstance(obj, list):
        return BATCH, "JSON-RPC batches are not supported (removed from MCP in 2025-06-18)"
    if not isinstance(obj, dict):
        return INVALID, "not a JSON object"
    if obj.get("jsonrpc") != "2.0":
        return INVALID, "jsonrpc must be \"2.0\""
    has_id = "id" in obj
    if "method" in obj:
        if not isinstance(obj["method"], str):
            return INVALID, "method must be a string"
        if "result" in obj or "error" in obj:
            return INVALID, "a request carries no result/error"
        if "params" in obj and not isinstance(obj["params"], (dict, list)):
            return INVALID, "params must be an object or array"
        if not has_id:
            return NOTIFICATION, ""
        if not is_valid_id(obj["id"]):
            return INVALID, "request id must be a string or an integer"
        return REQUEST, ""
    if ("result" in obj) == ("error" in obj):
        return INVALID, "a response carries exactly one of result/error"
    if not has_id or not (is_valid_id(obj["id"]) or (obj["id"] is None and "error" in obj)):
        return INVALID, "response id must be a string or an integer"
    if "result" in obj and not isinstance(obj["result"], dict):
        return INVALID, "result must be an object"
    if "error" in obj:
        err = obj["error"]
        if not (isinstance(err, dict) and isinstance(err.get("code"), int)
                and not isinstance(err.get("code"), bool) and isinstance(err.get("message"), str)):
            return INVALID, "error must have an integer code and a string message"
    return RESPONSE, ""


def parse_line(line: bytes) -> Frame:
    """Decode one whole line (strict UTF-8) and classify it."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return Frame(INVALID, None, "not valid UTF-8")
    try:
        obj = loads(text)
    except FrameError as exc:
        # valid JSON that we refuse (duplicate keys, NaN): keep it only to answer its id
        try:
            lenient = json.loads(text)
        except (ValueError, RecursionError):
            lenient = None
        return Frame(INVALID, lenient, str(exc))
    except (ValueError, RecursionError):
        return Frame(INVALID, None, "not valid JSON")
    kind, problem = classify(obj)
    return Frame(kind, obj, problem)


def dumps(obj: Any) -> bytes:
    """Serialise one message as a frame (with its newline). Never embeds a raw newline."""
    try:
        data = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (from a \\ud800 escape): keep it escaped
        data = json.dumps(obj, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode("ascii")
    return data + b"\n"


def error_frame(msg_id: Any, reason: str, message: str, rule: str | None = None) -> bytes:
    """A JSON-RPC error reply for ``msg_id`` (type preserved) with tcg's code."""
    data: dict[str, Any] = {"reason": reason}
    if rule:
        data["rule"] = rule
    return dumps({"jsonrpc": "2.0", "id": msg_id,
                  "error": {"code": TCG_ERROR_CODE, "message": message, "data": data}})
