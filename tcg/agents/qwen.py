"""Qwen Code's hooks: `tcg hook qwen EVENT` and the settings that wire it.

Qwen Code 0.24.4 has Claude-style hooks (measured, tests/agents): the same
events and input fields, PreToolUse ``permissionDecision: "deny"`` honoured.
What differs:

- PostToolUse cannot replace a tool's output. It can stop it: a reply with
  ``continue: false`` turns the result into an error whose message is
  ``stopReason``, and the session goes on. So when masking changed an
  output, tcg stops the original and puts the masked text in ``stopReason``:
  the model reads the masked output, the secret never reaches it.
- A hook that crashes, times out or prints something else lets the call
  through (Qwen Code has no ``onFailure`` setting): tcg's hook catches every
  exception and refuses, but a killed hook process fails open. docs/agents.md
  says so.
- Hooks are configured in a settings file; `tcg launch qwen` generates one and
  points ``QWEN_CODE_SYSTEM_SETTINGS_PATH`` at it (the highest-precedence
  layer, which a project cannot override), merged with the system settings
  file that was there. Hook commands run through a shell, so each one is given
  an empty ``BASH_ENV`` (tcg's own hook must not go through the station).
"""

from __future__ import annotations

import os

from tcg.agents.adapter import HookAdapter, Reply, hooks_block
from tcg.agents.pipeline import WITHHELD, PostResult, ToolCall

ENTRY = "import sys; from tcg.agents.qwen import main; sys.exit(main(sys.argv[1:]))"
TIMEOUTS = {"PreToolUse": 30, "PostToolUse": 60, "UserPromptSubmit": 30, "SessionStart": 30}  # seconds
MARK = "tcg"


def _text_of(value: object) -> str:
    """The text a Qwen tool result carries for the model (``llmContent``: a string or parts)."""
    if isinstance(value, dict):
        value = value.get("llmContent", value)
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for part in value:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "\n".join(parts)
    from tcg.events import encode_record

    return encode_record({"output": value}).decode("ascii")


class QwenHooks(HookAdapter):
    agent = "qwen"
    surface = "qwen-hooks"
    can_rewrite_input = False  # 0.24.4 reads no updatedInput from a PreToolUse hook (its source)

    def shell_via_station(self, env: dict[str, str] | os._Environ[str]) -> bool:
        """`tcg launch qwen` set BASH_ENV to tcg's file (every `bash -c` runs in the station)."""
        from tcg.agents.routes import BASH_ENV_NAME

        return bool(env.get("TCG_SESSION")) and os.path.basename(env.get("BASH_ENV") or "") == BASH_ENV_NAME

    def post_reply(self, call: ToolCall, response: object, result: PostResult) -> Reply:
        if not result.changed and not result.context:
            return None, 0
        notes = list(result.context)
        if result.counts.get("secret-in-output"):
            secrets = sorted(r for r in result.rules if r)
            notes.insert(0, f"tcg masked {result.counts['secret-in-output']} secret(s) ({', '.join(secrets)}) in "
                            f"this {call.tool} output")
        if result.counts.get("entity-in-output"):
            notes.append(f"tcg replaced {result.counts['entity-in-output']} business name(s) with their aliases")
        text = "; ".join(notes) + f"; the {'masked ' if result.changed else ''}output follows.\n{_text_of(result.value)}"
        return {"continue": False, "stopReason": text}, 0

    def post_failure(self, response: object, text: str) -> Reply:
        return {"continue": False, "stopReason": f"{WITHHELD}\n{text}"}, 0


ADAPTER = QwenHooks()


def main(argv: list[str]) -> int:
    """`tcg hook qwen EVENT`."""
    return ADAPTER.main(argv)


def hook_entry(python: str, event: str) -> dict[str, object]:
    """One tcg command hook for ``event`` (a shell command line; BASH_ENV emptied)."""
    from tcg.shells.quoting import posix_quote

    command = " ".join([posix_quote(python), "-I", "-c", posix_quote(ENTRY), event])
    return {"type": "command", "command": command, "timeout": TIMEOUTS[event], "name": MARK,
            "env": {"BASH_ENV": "", "ENV": ""}}


def settings_hooks(python: str) -> dict[str, list[dict[str, object]]]:
    return hooks_block(ADAPTER.events, hook_entry, python)
