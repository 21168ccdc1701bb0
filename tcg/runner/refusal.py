"""What a refused line prints, and the y/N question a person's ASK line asks.

Two lines on stderr — what and why, then ``hint:`` — shared by `tcg_shell run-line`
and the resident session's hook (which prints them itself).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def refusal_lines(verdict: Any, approval_code: str | None = None) -> tuple[str, str]:
    """The two lines a refused line prints: what and why, then ``hint:`` (shared
    with the session's hook, which prints them itself)."""
    from tcg.policy.reasons import REASONS

    code = verdict.reason
    deciding = verdict.deciding
    detail = " ".join((deciding.detail if deciding is not None else "").split())  # one line
    if approval_code is not None:
        from tcg.guard.approval import refusal_text

        message, _, hint = refusal_text(code, detail, approval_code).partition("\n")
        return message, hint
    info = REASONS.get(code)
    fix = info.fix if info else "run `tcg check LINE` to see why"
    return f"tcg: blocked ({code}): {detail}", f"hint: {fix}"


def print_refusal(verdict: Any, approval_code: str | None = None) -> None:
    message, hint = refusal_lines(verdict, approval_code)
    sys.stderr.write(f"{message}\n{hint}\n")
    sys.stderr.flush()


def confirm_on_tty(verdict: Any) -> bool:
    """ASK for a human: one y/N question on the controlling terminal."""
    deciding = verdict.deciding
    detail = " ".join((deciding.detail if deciding is not None else verdict.reason).split())
    from tcg.osutil import ask_on_tty

    return ask_on_tty(f"{detail} — run it anyway?")
