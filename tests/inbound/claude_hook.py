"""A minimal Claude Code PostToolUse hook for the e2e test: it calls the inbound gate
(tcg.inbound.hook.check_tool_output) the way docs/inbound.md tells the hook adapter to,
and answers in Claude Code's hook JSON. The real adapter lives with `tcg hook`."""

from __future__ import annotations

import json
import os
import sys

from tcg.events import EventLog
from tcg.inbound.hook import check_tool_output, surface_for_tool


def main() -> int:
    data = json.load(sys.stdin)
    surface = surface_for_tool(data.get("tool_name", ""))
    response = data.get("tool_response")
    if surface != "file-read" or not isinstance(response, dict):
        print("{}")
        return 0
    file = dict(response.get("file") or {})
    verdict = check_tool_output(str(file.get("content", "")), surface, log=EventLog())
    if not verdict.outcome.flagged:
        print("{}")
        return 0
    # banner: Read's response shape with the warning in front of the content
    # (updatedToolOutput is honoured for Read in 2.1.328); context: the warning as
    # additionalContext, the output replaced only when the gate changed it
    out: dict = {"hookSpecificOutput": {"hookEventName": "PostToolUse"}}
    mode = os.environ.get("INBOUND_HOOK_MODE", "banner")
    if mode == "banner" or verdict.replaced:
        file["content"] = verdict.banner_text if mode == "banner" else verdict.text
        out["hookSpecificOutput"]["updatedToolOutput"] = {**response, "file": file}
    if mode == "context" and verdict.additional_context:
        out["hookSpecificOutput"]["additionalContext"] = verdict.additional_context
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
