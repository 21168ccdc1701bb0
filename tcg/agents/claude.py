"""Claude Code's hooks: `tcg hook claude EVENT` and the settings that wire it.

Claude Code runs the hook for each event with a JSON object on stdin and reads
a JSON reply on stdout (facts measured with 2.1.328, tests/agents):

- PreToolUse → ``permissionDecision: "deny"`` with the reason and a hint
  (the model reads ``PreToolUse:<tool> hook error: <reason>``); ``"ask"`` for
  a confirmation a person gives in Claude Code's prompt (in ``-p`` mode the
  CLI refuses and the model reads the reason: measured); when an input
  transform changed the input, ``updatedInput`` with the complete input and
  no permission decision (the user's own permission rules still apply).
  Claude Code checks an Edit's ``old_string`` against the file *before*
  PreToolUse hooks run (measured with 2.1.328: "String to replace not found
  in file", no hook call), so an alias in ``old_string`` cannot be restored
  here; docs/entities.md says what the model is told to do instead.
- PostToolUse → ``updatedToolOutput`` in the tool's own response shape, only
  when something was masked (hooks run in parallel and the last to finish
  wins, so an identity rewrite would only race other hooks).
- UserPromptSubmit → ``decision: "block"`` when the prompt holds a secret:
  nothing is sent to the API.
- SessionStart → ``additionalContext``: one paragraph on what is protected.

Fail closed: every tcg hook carries ``onFailure: "block"`` (a hook that cannot
start, times out or exits with another code than 0/2 blocks the tool call),
and any exception in here becomes a deny reply, never a silent allow. A
PostToolUse hook cannot block (the tool already ran; measured: crash, timeout,
exit 2 and ``decision: block`` all let the original output through), so on a
failure it replies with the response's shape holding no content (WITHHELD).

The hook is started in exec form (``command`` = the interpreter, ``args``), so
no shell and no CLAUDE_CODE_SHELL_PREFIX is involved, and with ``-I -c`` so
neither runpy nor the console script's imports are paid per call.
"""

from __future__ import annotations

import os

from tcg.agents.adapter import HookAdapter, Reply, hooks_block
from tcg.agents.pipeline import PostResult, ToolCall, withheld

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

# What the settings run: `python -I -c ENTRY EVENT`. The process lives a few
# milliseconds and leaves through os._exit (HookAdapter.exit), so the cyclic garbage
# collector only costs time: its passes during the imports are ~0.5 ms of a call.
# ENTRIES: every entry a tcg release wrote into settings (install/uninstall/doctor
# recognise them all).
ENTRY = "import gc, sys; gc.disable(); from tcg.agents.claude import hook; hook(sys.argv[1:])"
ENTRIES = (ENTRY, "import sys; from tcg.agents.claude import main; sys.exit(main(sys.argv[1:]))")
TIMEOUTS = {"PreToolUse": 30, "PostToolUse": 60, "UserPromptSubmit": 30, "SessionStart": 30}
MARK = "tcg"  # statusMessage of every tcg hook: how install/uninstall and doctor recognise them


class ClaudeHooks(HookAdapter):
    agent = "claude"
    surface = "claude-hooks"
    can_ask = True  # a person answers in Claude Code's prompt; in -p mode the model reads the reason

    def shell_via_station(self, env: dict[str, str] | os._Environ[str]) -> bool:
        """`tcg launch claude` set CLAUDE_CODE_SHELL_PREFIX to tcg's prefix (every Bash
        command then runs in the station)."""
        import os.path

        from tcg.agents.routes import PREFIX_NAME

        prefix = env.get("CLAUDE_CODE_SHELL_PREFIX") or ""
        return bool(env.get("TCG_SESSION")) and os.path.basename(prefix) == PREFIX_NAME

    def post_reply(self, call: ToolCall, response: object, result: PostResult) -> Reply:
        out: dict[str, object] = {"hookEventName": "PostToolUse"}
        if result.changed:
            out["updatedToolOutput"] = result.value  # updatedMCPToolOutput is for older CLIs; this serves all tools
        if result.context:
            out["additionalContext"] = "\n".join(result.context)
        return ({"hookSpecificOutput": out} if len(out) > 1 else None), 0

    def post_failure(self, response: object, text: str) -> Reply:
        if response is not None:
            return {"hookSpecificOutput": {"hookEventName": "PostToolUse",
                                           "updatedToolOutput": withheld(response)}}, 0
        return {"decision": "block", "reason": text}, 2


ADAPTER = ClaudeHooks()


def main(argv: list[str]) -> int:
    """`tcg hook claude EVENT`."""
    return ADAPTER.main(argv)


def hook(argv: list[str]) -> NoReturn:
    """What the settings start: main, then leave the process (see HookAdapter.exit)."""
    ADAPTER.exit(argv)


# ------------------------------------------------------------------ settings


def hook_entry(python: str, event: str) -> dict[str, object]:
    """One tcg command hook for ``event`` (exec form, fail closed)."""
    return {"type": "command", "command": python, "args": ["-I", "-c", ENTRY, event],
            "timeout": TIMEOUTS[event], "onFailure": "block", "statusMessage": MARK}


def settings_hooks(python: str) -> dict[str, list[dict[str, object]]]:
    """The ``hooks`` block of a Claude Code settings file: every tool, every event."""
    return hooks_block(ADAPTER.events, hook_entry, python)


def is_tcg_hook(hook: object) -> bool:
    """A hook entry tcg wrote (whatever interpreter path it names)."""
    if not isinstance(hook, dict):
        return False
    args = hook.get("args")
    return isinstance(args, list) and any(e in args for e in ENTRIES) and hook.get("statusMessage") == MARK
