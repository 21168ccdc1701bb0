"""Fuzz target: an agent hook's stdin (JSON) → its decision (Claude Code's adapter).

Never an exception, and fail closed: input that is not a JSON object gets a deny."""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402,F401 - sets TCG_HOME first

with _common.instrumented():
    from tcg.agents.claude import ADAPTER

ENV = {**os.environ, "TCG_ACTOR": "agent"}


def test_one_input(data: bytes) -> None:
    reply, code = ADAPTER.run("PreToolUse", data, ENV)
    assert code in (0, 2)
    try:
        obj = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        obj = None
    if not isinstance(obj, dict):
        assert reply is not None and reply["hookSpecificOutput"]["permissionDecision"] == "deny", reply


SEEDS = [b"", b"{}", b"[]", b'{"tool_name":"Bash","tool_input":{"command":"cat .env"}}',
         b'{"tool_name":"Read","tool_input":{"file_path":"/x/.env"}}',
         b'{"tool_name":"Bash","tool_input":{"command":["cat",".env"]}}', b'{"tool_name":"Bash","tool_input":',
         b'{"tool_name":"Grep","tool_input":{"pattern":"x","glob":"*.{env,pem}"}}', b"\xff"]

if __name__ == "__main__":
    _common.run(test_one_input)
