"""`tcg check [--actor human|agent] [--json] LINE`: evaluate a line, run nothing.

A dry run: it prints the decision, every reason with its fix, and exits
0 ALLOW/SANITIZE/RELOCATE/SNAPSHOT · 2 BLOCK (also an invalid policy or an internal
error: fail closed) · 3 ASK · 1 usage error. RELOCATE and
SNAPSHOT only say what a run would save first: check moves and copies nothing. It records no event:
events record what tcg *mediated*, and a check mediates nothing (an agent
probing the policy would otherwise fill the log with decisions that never ran).

An invalid policy is not an "error" here: mediation fails closed on it, so
`check` reports BLOCK ``policy-invalid`` with the file, line and hint, exit 2.

``check_main`` parses the arguments for every entry (`tcg check`, `tcg_shell check`
and the click command, which only renders ``--help``), so there is one grammar and
one usage exit code. The actor defaults as for a mediated run
(tcg.events.actor_from_env). The click command is built on first attribute access
so importing this module for the hot path does not import click.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, TextIO

from tcg.errors import ExitCode, PolicyError, debug_enabled
from tcg.events import actor_from_env
from tcg.policy.model import ACTORS, Decision, Verdict

USAGE = "usage: tcg check [--actor human|agent] [--json] LINE\n"


def exit_code_for(decision: Decision) -> int:
    if decision is Decision.BLOCK:
        return int(ExitCode.BLOCKED_CHECK)
    if decision is Decision.ASK:
        return int(ExitCode.ASK)
    return int(ExitCode.OK)  # ALLOW, SANITIZE, RELOCATE, SNAPSHOT: the action runs (made reversible)


def run_check(line: str, actor: str, as_json: bool, out: TextIO | None = None) -> int:
    """Evaluate ``line`` for ``actor`` with the effective policy and print the result."""
    from tcg.decide.line import evaluate_line
    from tcg.policy.load import load_policy
    from tcg.policy.model import Reason

    out = out or sys.stdout
    policy: Any = None
    try:
        policy = load_policy()
    except PolicyError as exc:
        verdict = Verdict.combine([Reason("policy-invalid", Decision.BLOCK, exc.message)])
        _render(verdict, line, actor, None, as_json, out, hint_override=exc.hint)
        return exit_code_for(verdict.decision)

    def on_error(exc: BaseException) -> None:
        if debug_enabled():
            import traceback

            traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)

    verdict = evaluate_line(policy, line, actor, cwd=os.getcwd(), on_error=on_error)
    _render(verdict, line, actor, policy, as_json, out)
    return exit_code_for(verdict.decision)


def _render(
    verdict: Verdict,
    line: str,
    actor: str,
    policy: Any,
    as_json: bool,
    out: TextIO,
    hint_override: str | None = None,
) -> None:
    from tcg.policy.reasons import REASONS

    def fix(code: str) -> str:
        if code == "policy-invalid" and hint_override:
            return hint_override
        info = REASONS.get(code)
        return info.fix if info else ""

    if as_json:
        doc = {
            "decision": verdict.decision.value,
            "reason": verdict.reason,
            "actor": actor,
            "reasons": [
                {
                    "code": r.code,
                    "decision": r.decision.value,
                    "detail": r.detail,
                    "rule": r.rule,
                    "fix": fix(r.code),
                }
                for r in verdict.reasons
            ],
            "rules": list(verdict.rules),
            "policy": policy.ref() if policy is not None else None,
            # what a run would save first (RELOCATE/SNAPSHOT; docs/guard.md)
            "actions": [{"type": type(a).__name__.lower(), **a._asdict()} for a in verdict.actions],
        }
        out.write(json.dumps(doc, sort_keys=True) + "\n")
        return
    head = verdict.decision.value.upper()
    if not verdict.reasons:
        out.write(f"{head}  allowed ({actor})\n")
        return
    # Reasons that decide first, then the rest (an ALLOW reason explains nothing).
    ordered = sorted(verdict.reasons, key=lambda r: -r.decision.rank)
    # An ALLOW that still carries reasons (decided allow for this actor) says so below.
    code = verdict.reason if verdict.decision is not Decision.ALLOW else "allowed"
    out.write(f"{head}  {code} ({actor})\n")
    hints: list[str] = []
    for r in ordered:
        out.write(f"  {r.decision.value:<8} {r.code}: {r.detail}\n")
        h = fix(r.code)
        if h and h not in hints and r.decision is not Decision.ALLOW:
            hints.append(h)
    for h in hints:
        out.write(f"hint: {h}\n")


def check_main(argv: list[str]) -> int:
    """`tcg_shell check …`: hand-parsed arguments, no click. Exit codes as `tcg check`."""
    actor: str | None = None
    as_json = False
    positional: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if positional or a == "--":
            positional.extend(argv[i + 1 :] if a == "--" else argv[i:])
            break
        if a in ("-h", "--help"):
            sys.stdout.write(USAGE)
            return 0
        if a == "--json":
            as_json = True
        elif a == "--actor":
            if i + 1 >= len(argv):
                return _usage_error("--actor needs a value")
            actor = argv[i + 1]
            i += 1
        elif a.startswith("--actor="):
            actor = a.split("=", 1)[1]
        elif a.startswith("-") and a != "-":
            return _usage_error(f"unknown option {a!r}")
        else:
            positional.append(a)
        i += 1
    return _dispatch(actor, as_json, positional)


def _dispatch(actor: str | None, as_json: bool, positional: list[str]) -> int:
    if len(positional) != 1:
        return _usage_error("give the command line as ONE argument (quote it)")
    actor = (actor or actor_from_env(os.environ)).lower()
    if actor not in ACTORS:
        return _usage_error(f"unknown actor {actor!r} (expected human or agent)")
    try:
        return run_check(positional[0], actor, as_json)
    except BrokenPipeError:
        return 0


def _usage_error(message: str) -> int:
    sys.stderr.write(f"tcg check: {message}\n{USAGE}hint: e.g. tcg check --actor agent 'cat .env'\n")
    return int(ExitCode.ERROR)  # not 2: that is BLOCK here


def _build_click_command() -> Any:
    import click

    from tcg.cli.passthrough import PassThroughCommand

    return PassThroughCommand(
        "check",
        check_main,
        params=[
            click.Option(["--actor"], metavar="human|agent",
                         help="Who would run the line (default: agent when TCG_ACTOR=agent "
                              "or TCG_AGENT is set, as for a mediated run; else human)."),
            click.Option(["--json", "as_json"], is_flag=True, help="Print the verdict as JSON."),
            click.Argument(["line"], nargs=-1),
        ],
        help="""Evaluate LINE against the policy without running it.

        Exit 0 ALLOW/SANITIZE/RELOCATE/SNAPSHOT, 2 BLOCK (also an invalid policy or an
        internal error), 3 ASK, 1 usage error. Records no event and changes nothing (a
        RELOCATE line is not moved to the trash here).
        """,
    )


def __getattr__(name: str) -> Any:
    # `tcg check` reaches the click command as tcg.cli.check:check; building it on
    # first access keeps click out of `tcg_shell check`.
    if name == "check":
        cmd = _build_click_command()
        globals()["check"] = cmd
        return cmd
    raise AttributeError(name)
