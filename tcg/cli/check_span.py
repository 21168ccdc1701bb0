"""`tcg check-span --channel C [--json] [--sanitize]`: decide a payload (stdin)
by where it is going (tcg.guard.channels).

Exit 0 ALLOW/SANITIZE · 2 BLOCK · 3 ASK · 1 usage error, as `tcg check`. The
decision is recorded (``channel_decision``: channel, decision, rule ids, the
payload's length and keyed hash — never the payload). ``--json`` prints the
offsets, rule ids and placeholders of every finding; ``--sanitize`` prints the
payload with each finding replaced by its placeholder when the channel allows
it to go out that way.
"""

from __future__ import annotations

import json
import os
import sys

import click

from tcg.errors import TcgError


@click.command("check-span")
@click.option("--channel", required=True, metavar="C", help="Where the bytes go (docs/guard.md lists them).")
@click.option("--json", "as_json", is_flag=True, help="The verdict as JSON (offsets, rule ids, placeholders).")
@click.option("--sanitize", is_flag=True, help="Print the payload with findings replaced (ALLOW/SANITIZE only).")
def check_span(channel: str, as_json: bool, sanitize: bool) -> int:
    """Decide the payload on stdin for CHANNEL. Exit 0 allow/sanitize, 2 block, 3 ask, 1 error."""
    from tcg.cli.check import exit_code_for
    from tcg.events import EventLog, actor_from_env
    from tcg.guard.channels import decide
    from tcg.guard.channels import sanitize as replace
    from tcg.keyhash import KeyedHasher
    from tcg.policy.load import load_policy
    from tcg.policy.model import Decision
    from tcg.policy.reasons import REASONS

    payload = sys.stdin.buffer.read()
    policy = load_policy()
    hasher = KeyedHasher.for_install()
    verdict = decide(channel, payload, policy, hasher=hasher)
    try:
        EventLog().emit("channel_decision", surface="cli", actor=actor_from_env(os.environ),
                        decision=verdict.decision.value, reason=verdict.reason,
                        rules=sorted({s.rule for s in verdict.spans}), policy=policy.ref(), channel=channel,
                        findings=len(verdict.spans), payload_len=len(payload),
                        payload_hash=hasher.h16(payload))
    except TcgError as exc:
        click.echo(f"tcg: warning: the security event was not recorded: {exc.message}", err=True)
    if sanitize:
        if verdict.decision in (Decision.ALLOW, Decision.SANITIZE):
            sys.stdout.buffer.write(replace(payload, verdict.spans))
            sys.stdout.flush()
        out = sys.stderr
    else:
        out = sys.stdout
    if as_json:
        out.write(json.dumps({**verdict.as_json(), "payload_len": len(payload)}, sort_keys=True) + "\n")
    else:
        head = f"{verdict.decision.value.upper()}  {verdict.reason} ({channel})"
        out.write(head + "\n")
        for s in verdict.spans:
            out.write(f"  {s.start}-{s.end}  {s.rule}  {s.placeholder}\n")
        info = REASONS.get(verdict.reason)
        if info is not None and verdict.decision is not Decision.ALLOW:
            out.write(f"hint: {info.fix}\n")
    return exit_code_for(verdict.decision)
