"""`tcg launch [--accept-findings] AGENT [ARG…]`: the whole launch, without click.

One path, every time: policy (through its signed snapshot) → known agent →
binary on PATH (tcg.launcher.resolve) → gate (tcg.launcher.gate: state key with
git, cache, scan on a miss) → decision → wiring (tcg.launcher.wiring) → one
``launch_gate`` event → exec (tcg.launcher.exec). Every exit path records its
event. Parsing is by hand (options only before AGENT; everything after AGENT
is the agent's own, untouched) so a launch imports neither click nor the
scanner unless it scans.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any

from tcg.errors import ExitCode, PolicyError, TcgError, run_with_error_handler
from tcg.events import EventLog, actor_from_env, new_session_id
from tcg.launcher.exec import exec_agent
from tcg.launcher.resolve import interpreter, resolve_agent
from tcg.osutil import ask_on_tty
from tcg.paths import get_paths
from tcg.policy.load import Policy, load_policy
from tcg.policy.model import Decision

USAGE = "usage: tcg launch [--accept-findings] AGENT [ARG…]\n"

STATUS_REASON = {
    "findings": ("repo-findings", "on_findings"),
    "partial": ("repo-scan-partial", "on_partial"),
    "error": ("repo-scan-error", "on_error"),
}


def parse_args(argv: list[str]) -> tuple[bool, str, list[str]]:
    """(accept_findings, agent, agent_args). Raises ValueError on bad usage."""
    accept = False
    args = list(argv)
    while args and args[0].startswith("-"):
        opt = args.pop(0)
        if opt == "--":
            break
        if opt == "--accept-findings":
            accept = True
        else:
            raise ValueError(f"unknown option {opt!r} (options go before AGENT; the agent's own go after it)")
    if not args:
        raise ValueError("missing AGENT")
    return accept, args[0], args[1:]


def main(argv: list[str]) -> int:
    """Entry point of `tcg launch` (``python -m tcg launch …`` and the `tcg` script come here).

    Exit: the agent's own (exec); 126 refused — also for an unexpected error,
    which must never read as the agent's success; 127 agent not found; 2 usage.
    """
    try:
        accept, agent, agent_args = parse_args(argv)
    except ValueError as exc:
        sys.stderr.write(f"tcg launch: {exc}\n{USAGE}")
        return ExitCode.BLOCKED_CHECK

    def run() -> int:
        try:
            return launch(agent, agent_args, accept_findings=accept)
        except TcgError:
            raise
        except Exception as exc:  # noqa: BLE001 - fail closed: an internal error refuses the launch
            raise TcgError(f"launch of {agent} refused: internal error ({type(exc).__name__})",
                           hint="rerun with TCG_DEBUG=1 for a traceback and report it",
                           exit_code=ExitCode.BLOCKED) from exc

    return run_with_error_handler(run, prog="tcg")


def emit(policy: Policy | None, session: str, actor: str, decision: str, reason: str, rules: list[str],
         **fields: Any) -> None:
    """One ``launch_gate`` event; a failure to record it is said once, the decision stands."""
    try:
        EventLog().emit(
            "launch_gate", surface="launch", actor=actor, decision=decision, reason=reason, rules=rules,
            policy=policy.ref() if policy is not None else None, session=session, **fields,
        )
    except (TcgError, OSError) as exc:
        sys.stderr.write(f"tcg: warning: the launch decision was not recorded: {getattr(exc, 'message', exc)}\n")


def _refuse(message: str, hint: str | None = None) -> None:
    sys.stderr.write(f"tcg: {message}\n" + (f"hint: {hint}\n" if hint else ""))
    sys.stderr.flush()


def _findings_summary(agent: str, gate: Any, root_display: str) -> str:
    width = max((len(r) for r in gate.counts_by_rule), default=0)
    lines = [
        f"tcg: launch of {agent} refused: the repository holds {gate.findings} secret finding(s) "
        f"(working tree and history, {gate.blobs} blobs and {gate.files} files scanned)",
    ]
    lines += [f"  {rule.ljust(width)}  {count}" for rule, count in sorted(gate.counts_by_rule.items())]
    lines += [
        f"hint: see where: tcg scan --history {root_display}",
        "hint: to proceed: remove the secret and rotate it (history keeps it until rewritten); or allow-list it "
        "(`tcg:allow` on its line, or scan.allow_paths in your policy); or launch this once anyway with "
        f"`tcg launch --accept-findings {agent} …` (recorded in the event log)",
    ]
    if "secret-store-in-git" in gate.counts_by_rule:
        lines.append("hint: git holds a secret store (.env, a key file …): git diff, log -p and grep would show "
                     "it to the agent; untrack it (`git rm --cached FILE`, then add it to .gitignore) and, if it "
                     "was ever committed, rewrite the history (git filter-repo) and rotate what it held; a "
                     "template that holds no secret: scan.allow_paths in your policy")
    return "\n".join(lines) + "\n"


def _decide(gate: Any, policy: Policy, actor: str, agent: str, accept_findings: bool) -> tuple[Decision, str, bool]:
    """(decision, reason, accepted) for a gate result."""
    if gate.status == "none":
        return Decision.ALLOW, "no-repository", False
    if gate.status == "clean":
        return Decision.ALLOW, "allowed", False
    reason, key = STATUS_REASON.get(gate.status, STATUS_REASON["error"])
    value = getattr(policy.model.launch, key)
    decision = Decision.parse(value) if isinstance(value, str) else Decision.BLOCK
    if decision in (Decision.ASK, Decision.BLOCK) and accept_findings and gate.status in ("findings", "partial"):
        return Decision.ALLOW, "findings-accepted", True
    if decision == Decision.ASK:
        question = f"the repository scan says {gate.status} ({gate.findings} finding(s)); launch {agent} anyway?"
        allowed = actor == "human" and ask_on_tty(question)
        return (Decision.ALLOW if allowed else Decision.BLOCK), reason, allowed
    return decision, reason, False


def launch(agent: str, agent_args: list[str], *, accept_findings: bool = False,
           env: Mapping[str, str] | None = None, cwd: str | os.PathLike[str] | None = None) -> int:
    """Gate, wire and exec ``agent``. Returns only when the agent does not start (or on Windows)."""
    environ = dict(os.environ if env is None else env)
    here = os.fspath(cwd) if cwd is not None else os.getcwd()
    session = new_session_id()
    actor = actor_from_env(environ)
    base: dict[str, Any] = {"agent": agent}
    paths = get_paths(environ)

    try:
        policy = load_policy(cwd=here, paths=paths, environ=environ)
    except PolicyError as exc:
        emit(None, session, actor, "block", "policy-invalid", [], **base, exit_code=ExitCode.BLOCKED)
        _refuse(f"launch of {agent} refused: the policy is invalid: {exc.message}",
                exc.hint or "run `tcg policy check` and fix the file and line it names")
        return ExitCode.BLOCKED

    known = list(policy.model.launch.known_agents)
    if agent not in known:
        emit(policy, session, actor, "block", "unknown-agent", [], **base, exit_code=ExitCode.BLOCKED)
        _refuse(f"{agent!r} is not a known agent (known: {', '.join(sorted(known))})",
                "add it to agents.known in your policy (`tcg policy path`), or run it directly")
        return ExitCode.BLOCKED

    path = resolve_agent(agent, environ.get("PATH"))
    if path is None:
        emit(policy, session, actor, "block", "agent-not-found", [], **base, exit_code=ExitCode.NOT_FOUND)
        _refuse(f"{agent}: command not found on PATH", f"install {agent}, or fix PATH")
        return ExitCode.NOT_FOUND

    if accept_findings and actor == "agent":
        emit(policy, session, actor, "block", "findings-accepted", [], **base, exit_code=ExitCode.BLOCKED,
             accepted=False)
        _refuse("--accept-findings is a human decision; an agent cannot take it", "ask the user to launch the agent")
        return ExitCode.BLOCKED

    from tcg.launcher.gate import run_gate

    gate = run_gate(agent, here, policy, paths=paths, progress=sys.stderr.isatty())
    fields = {**base, **gate.fields()}
    rules = sorted(gate.counts_by_rule)
    decision, reason, accepted = _decide(gate, policy, actor, agent, accept_findings)

    root_display = gate.root or here
    if decision == Decision.BLOCK:
        emit(policy, session, actor, "block", reason, rules, **fields, accepted=False, exit_code=ExitCode.BLOCKED)
        if gate.status == "findings":
            sys.stderr.write(_findings_summary(agent, gate, root_display))
        elif gate.status == "partial":
            _refuse(f"launch of {agent} refused: the repository scan was partial (a budget stopped it)",
                    f"scan it fully with `tcg scan --history {root_display}`, or launch once with --accept-findings")
        else:
            _refuse(f"launch of {agent} refused: the repository scan failed ({gate.error or 'unknown error'})",
                    f"see why with `tcg scan --history {root_display}`; launch.on-error in your policy decides this")
        return ExitCode.BLOCKED

    from tcg.launcher.wiring import (
        WARMED_AGENTS,
        OwnSandboxError,
        UnmediatedError,
        WiringError,
        warm_station_caches,
        wire,
    )

    try:
        try:
            wiring = wire(agent, session, environ, agent_args, interpreter(), paths, cwd=here)
        except UnmediatedError as exc:
            value = policy.model.launch.on_unmediated
            allowed = Decision.parse(value) if isinstance(value, str) else Decision.BLOCK
            if allowed == Decision.ASK:
                allowed = Decision.ALLOW if actor == "human" and ask_on_tty(f"{exc.message}; launch anyway?") \
                    else Decision.BLOCK
            if allowed == Decision.BLOCK:
                emit(policy, session, actor, "block", "agent-unmediated", rules, **fields, exit_code=ExitCode.BLOCKED)
                _refuse(f"launch of {agent} refused: {exc.message}", exc.hint)
                return ExitCode.BLOCKED
            sys.stderr.write(f"tcg: warning: {exc.message} (launch.on-unmediated allows it)\n")
            wiring = wire(agent, session, environ, agent_args, interpreter(), paths, cwd=here, unmediated_ok=True)
    except OwnSandboxError as exc:
        emit(policy, session, actor, "block", "agent-sandbox-conflict", rules, **fields, exit_code=ExitCode.BLOCKED)
        _refuse(f"launch of {agent} refused: {exc.message}", exc.hint)
        return ExitCode.BLOCKED
    except WiringError as exc:
        emit(policy, session, actor, "block", "internal-error", rules, **fields, exit_code=ExitCode.BLOCKED)
        _refuse(f"launch of {agent} refused: {exc.message}", exc.hint)
        return ExitCode.BLOCKED

    if agent in WARMED_AGENTS:
        warm_station_caches(policy, paths)
    emit(policy, session, actor, decision.value, reason, rules, **fields, accepted=accepted, wired=wiring.wired,
         exit_code=None)
    if accepted:
        sys.stderr.write(f"tcg: launching {agent} despite {gate.findings} finding(s) (recorded)\n")
    return exec_agent(path, [agent, *wiring.args], wiring.env)
