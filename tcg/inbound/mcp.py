"""The inbound gate on the MCP proxy's response path.

Runs after the response masker, on every frame going to the client that is a
response with a ``result``: the text of the result (every string in it, the
same strings the model is shown) is checked as surface ``mcp-result``.

- ``warn``: the result gets a ``warning`` field, and — because clients show the
  model the content items, not extra fields — the warning as the first text
  item of ``content`` (when there is a ``content`` list);
- ``block`` / ``error``: the result is replaced by one text item with the note
  and ``isError: true`` (the response keeps its id: the client is never left
  waiting);
- a drain past the budget cuts the expensive-script characters from the
  result's strings, in order, keeping the first 2000.

A frame that cannot be parsed or rebuilt here is withheld with an error reply
for its id, as the proxy does everywhere (fail closed).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tcg.inbound.gate import Outcome, check
from tcg.jsonrpc import RESPONSE, dumps, error_frame, parse_line

SURFACE = "mcp-result"
CLIENT = "client"  # tcg.mcp.relay.CLIENT (not imported: the relay imports this module's user)


class McpInboundGate:
    """Gates the results a proxied server sends to the client."""

    def __init__(self, policy: Any, *, engine: Any = None,
                 emit: Callable[..., None] | None = None):
        self.policy = policy
        self.engine = engine
        self._emit = emit or (lambda event, **kw: None)
        self.flagged = 0

    def gate(self, out: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
        """The frames ``out`` with every client-bound result gated."""
        return [(dest, self._frame(data)) if dest == CLIENT else (dest, data) for dest, data in out]

    def _frame(self, data: bytes) -> bytes:
        if b'"result"' not in data:
            return data  # not a result (a request, a notification, an error): nothing to read
        frame = parse_line(data.rstrip(b"\n"))
        if frame.kind != RESPONSE or not isinstance(frame.obj.get("result"), dict):
            return data
        msg_id = frame.obj["id"]
        try:
            return self._gate_result(frame.obj, data)
        except Exception as exc:  # noqa: BLE001 - fail closed: withhold, answer the id
            self.flagged += 1
            self._emit("inbound_flagged", decision="block", reason="inbound-error", rules=[],
                       action="error", inbound_surface=SURFACE, error=type(exc).__name__)
            return error_frame(msg_id, "inbound-error", "tcg: tool result withheld (the inbound "
                                                        "check failed)")

    def _gate_result(self, obj: dict[str, Any], data: bytes) -> bytes:
        result = obj["result"]
        strings: list[str] = []
        _collect(result, strings)
        outcome = check("\n".join(strings), SURFACE, policy=self.policy, engine=self.engine)
        if not outcome.flagged:
            return data
        self.flagged += 1
        self._emit("inbound_flagged", **outcome.event_fields())
        if outcome.action in ("block", "error"):
            obj["result"] = {"content": [{"type": "text", "text": outcome.text}], "isError": True,
                             "warning": outcome.text}
        else:
            if outcome.cut:
                budget = [_drain_budget()]
                obj["result"] = _cut(result, budget, self.engine)
            _warn(obj["result"], outcome)
        rebuilt = dumps(obj)
        check_frame = parse_line(rebuilt[:-1])
        if check_frame.kind != RESPONSE or check_frame.obj.get("id") != obj["id"]:
            raise ValueError("the gated result is not a valid response")
        return rebuilt


def _warn(result: dict[str, Any], outcome: Outcome) -> None:
    if not outcome.warning:
        return
    result["warning"] = outcome.warning
    content = result.get("content")
    if isinstance(content, list):
        content.insert(0, {"type": "text", "text": outcome.warning})


def _collect(value: Any, out: list[str]) -> None:
    """Every string in ``value`` (keys of objects too: a server writes them)."""
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            out.append(k)
            _collect(v, out)
    elif isinstance(value, list):
        for v in value:
            _collect(v, out)


def _drain_budget() -> int:
    from tcg.inbound.inspect import DRAIN_BUDGET

    return DRAIN_BUDGET


def _cut(value: Any, budget: list[int], engine: Any) -> Any:
    """``value`` with the expensive-script characters past the shared budget removed
    from its strings (in document order)."""
    if isinstance(value, str):
        from tcg.inbound.marks import EXPENSIVE, py_mark

        pattern = py_mark(EXPENSIVE)
        out = []
        last = 0
        for m in pattern.finditer(value):
            if budget[0] > 0:
                budget[0] -= 1
                continue
            out.append(value[last:m.start()])
            last = m.end()
        out.append(value[last:])
        return "".join(out)
    if isinstance(value, dict):
        return {k: _cut(v, budget, engine) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut(v, budget, engine) for v in value]
    return value
