"""`tcg approve CODE`: a person lets an agent run one refused command once.

Needs a terminal, refuses inside an agent's process tree, and asks y/N on the
terminal after showing the (masked) command, where it runs and why it needed
approval. See tcg.guard.approval.
"""

from __future__ import annotations

import os

import click

from tcg.errors import TcgError


@click.command("approve")
@click.argument("code")
def approve(code: str) -> int:
    """Approve the agent's request CODE (single use). Exit 0 approved; 1 refused or declined."""
    from tcg.events import EventLog
    from tcg.guard import approval

    problem = approval.caller_problem()
    if problem is not None:
        raise TcgError(problem, hint="open a terminal of your own and run `tcg approve CODE` there")
    doc = approval.load(code)
    ask = approval.AskRequest(command=str(doc.get("command", "?")), cwd=str(doc.get("cwd", "?")),
                              reason=str(doc.get("reason", "?")), detail=str(doc.get("detail", "")),
                              line_hash=str(doc.get("line_hash", "")))
    answer = _ask_on_tty(ask.prompt() + "approve it, once? [y/N] ")
    granted = answer in ("y", "yes")
    if granted:
        approval.grant(code)
    try:
        EventLog().emit("approval", surface="cli", actor="human", decision="allow" if granted else "block",
                        reason=ask.reason, action="granted" if granted else "declined",
                        command_hash=ask.line_hash[:16])
    except TcgError as exc:
        click.echo(f"tcg: warning: the security event was not recorded: {exc.message}", err=True)
    click.echo("approved: the agent may run it once now" if granted else "not approved")
    return 0 if granted else 1


def _ask_on_tty(prompt: str) -> str:
    try:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        raise TcgError("tcg approve needs a terminal", hint="run it in a terminal of your own") from None
    try:
        os.write(fd, prompt.encode("utf-8", "replace"))
        return os.read(fd, 64).decode(errors="replace").strip().lower()
    finally:
        os.close(fd)
