"""Real -> alias on structured data: every string of a JSON value, and MCP lines.

Used for what reaches the model through a structured channel: MCP server
messages (tcg mcp-proxy) and tool responses (the Claude Code hooks'
PostToolUse). Object keys are aliased too (a server may key results by a
client's name); the JSON-RPC envelope (``jsonrpc``, ``id``, ``method``) is not.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from tcg.entities.matcher import Matcher

ENVELOPE = frozenset({"jsonrpc", "id", "method"})


def alias_string(matcher: Matcher, s: str) -> tuple[str, int]:
    if not s:
        return s, 0
    data = s.encode("utf-8", "surrogatepass")
    found = matcher.find_bytes(data)
    if not found:
        return s, 0
    from tcg.entities.stream import replace_bytes

    return replace_bytes(data, found).decode("utf-8", "surrogatepass"), len(found)


def alias_object(matcher: Matcher, node: object, *, skip_keys: frozenset[str] = frozenset()
                 ) -> tuple[object, int]:
    """A copy of ``node`` with every string aliased (keys in ``skip_keys`` at the
    top level keep their values); and how many spans were replaced."""
    total = 0

    def walk(x: object, top: bool = False) -> object:
        nonlocal total
        if isinstance(x, str):
            out, n = alias_string(matcher, x)
            total += n
            return out
        if isinstance(x, dict):
            res = {}
            for k, v in x.items():
                if top and k in skip_keys:
                    res[k] = v
                    continue
                nk = walk(k) if isinstance(k, str) else k
                res[nk] = walk(v)
            return res
        if isinstance(x, list):
            return [walk(v) for v in x]
        return x

    return walk(node, top=True), total


def mcp_line_filter(matcher: Matcher) -> Callable[[bytes], tuple[bytes, int]]:
    """For tcg mcp-proxy: a server line -> (the line with entities aliased, spans).

    A line with no candidate is returned as it is (one prefilter pass); a line
    that is not a JSON object is left to the proxy, which never forwards one.
    """

    def run(line: bytes) -> tuple[bytes, int]:
        if not matcher.find_bytes(line) and b"\\u" not in line:
            return line, 0
        try:
            obj = json.loads(line)
        except ValueError:
            return line, 0
        if not isinstance(obj, dict):
            return line, 0
        new, n = alias_object(matcher, obj, skip_keys=ENVELOPE)
        if not n:
            return line, 0
        from tcg.jsonrpc import dumps

        return dumps(new)[:-1], n

    return run
