"""`tcg inbound check [--surface S] [--json] [--output]`: the inbound gate on stdin.

Exit 0 when nothing was found, 1 when the text was flagged (whatever the
surface's action), 2 on an error (an invalid policy, a failed check). Like
`tcg check` it records no event: it mediates nothing, it answers a question.
"""

from __future__ import annotations

import json
import sys

import click

from tcg.inbound.policy import SURFACES


@click.group(name="inbound")
def inbound() -> None:
    """The inbound gate: prompt injection, invisible text and expensive scripts (docs/inbound.md)."""


@inbound.command(name="check")
@click.option("--surface", type=click.Choice(SURFACES), default="web", show_default=True,
              help="Which surface's policy applies.")
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as JSON.")
@click.option("--output", is_flag=True,
              help="Print what the surface would deliver (the text, cut or replaced, with the "
                   "warning in front) on stdout; the verdict goes to stderr.")
def check(surface: str, as_json: bool, output: bool) -> int:
    """Check the text on stdin; exit 0 clean, 1 flagged, 2 error."""
    from tcg.errors import ExitCode, PolicyError
    from tcg.inbound.gate import check as run_gate
    from tcg.policy.load import load_policy

    data = sys.stdin.buffer.read()
    text = data.decode("utf-8", "replace")
    try:
        policy = load_policy()
    except PolicyError as exc:
        click.echo(exc.render(), err=True)
        return ExitCode.BLOCKED_CHECK
    outcome = run_gate(text, surface, policy=policy)
    verdict = {"verdict": "pass" if not outcome.flagged else
               ("error" if outcome.action == "error" else "flagged"),
               **outcome.event_fields(), "warning": outcome.warning}
    verdict.pop("decision", None)
    report = sys.stderr if output else sys.stdout
    if as_json:
        print(json.dumps(verdict, ensure_ascii=False, sort_keys=True), file=report)
    else:
        print(_summary(outcome), file=report)
    if output:
        sys.stdout.write(outcome.with_banner())
    if outcome.action == "error":
        return ExitCode.BLOCKED_CHECK
    return 1 if outcome.flagged else 0


def _summary(outcome: object) -> str:
    from tcg.inbound.gate import Outcome

    assert isinstance(outcome, Outcome)
    if not outcome.flagged:
        return f"pass ({outcome.surface}): nothing found"
    if outcome.action == "error":
        return f"error ({outcome.surface}): {outcome.text}"
    rules = ", ".join(f"{r}×{n}" for r, n in sorted(outcome.rules.items()))
    lines = [f"flagged ({outcome.surface}, action {outcome.action}): {rules}"]
    if outcome.cut:
        lines.append(f"cut: {outcome.cut} characters past the expensive-script budget")
    if outcome.warning:
        lines.append(f"warning: {outcome.warning}")
    return "\n".join(lines)
