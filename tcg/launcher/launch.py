"""`tcg launch [--accept-findings] AGENT [ARG…]`: the whole launch, without click.

Order: known agent? → binary on PATH? → gate (repo scan, cached) → decision →
wiring → one ``launch_gate`` event → exec. Every exit path records its event.
Parsing is by hand (options only before AGENT; everything after AGENT is the
agent's own, untouched) so a cache-hit launch imports neither click nor the
scanner.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

EXIT_REFUSED = 126
EXIT_NOT_FOUND = 127
EXIT_USAGE = 2

USAGE = "usage: tcg launch [--accept-findings] AGENT [ARG…]\n"

STATUS_REASON = {
    "findings": ("repo-findings", "launch.on-findings"),
    "partial": ("repo-scan-partial", "launch.on-partial"),
    "error": ("repo-scan-error", "launch.on-error"),
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


def launch_main(argv: list[str]) -> int:
    """Entry point of `tcg launch` (also used by the click command)."""
    try:
        accept, agent, agent_args = parse_args(argv)
    except ValueError as exc:
        sys.stderr.write(f"tcg launch: {exc}\n{USAGE}")
        return EXIT_USAGE
    return launch(agent, agent_args, accept_findings=accept)


def _actor(env: Mapping[str, str]) -> str:
    if env.get("TCG_ACTOR", "").strip().lower() == "agent" or env.get("TCG_AGENT"):
        return "agent"
    return "human"


def _emit(policy: Any, session: str, actor: str, decision: str, reason: str, rules: list[str],
          **fields: Any) -> None:
    from tcg.errors import TcgError
    from tcg.events import EventLog

    try:
        EventLog().emit(
            "launch_gate", surface="launch", actor=actor, decision=decision, reason=reason, rules=rules,
            policy=policy.ref() if policy is not None else None, session=session, **fields,
        )
    except (TcgError, OSError) as exc:
        # The decision stands either way; say once that it was not recorded.
        sys.stderr.write(f"tcg: warning: the launch decision was not recorded: {getattr(exc, 'message', exc)}\n")


def _refuse(message: str, hint: str | None = None) -> None:
    sys.stderr.write(f"tcg: {message}\n" + (f"hint: {hint}\n" if hint else ""))
    sys.stderr.flush()


def _confirm(question: str) -> bool:
    try:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return False
    try:
        os.write(fd, f"tcg: {question} [y/N] ".encode())
        return os.read(fd, 64).decode(errors="replace").strip().lower() in ("y", "yes")
    except OSError:
        return False
    finally:
        os.close(fd)


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
    return "\n".join(lines) + "\n"


def fast_launch(agent: str, agent_args: list[str], environ: dict[str, str], here: Path) -> int | None:
    """The cache-hit launch: no TOML, no click, no scanner. None = take the full path.

    Taken only when everything is already known and clean: the policy stamp
    matches (same layer files), the agent is known and on PATH, and the gate
    cache holds "clean" for this exact repository state (or there is no
    repository). Anything else — findings, a miss, an error — goes the full way,
    which explains itself and records its own event.
    """
    if environ.get("TCG_POLICY"):
        return None
    from tcg.launcher import cache
    from tcg.paths import get_paths

    paths = get_paths(environ)
    stamp = cache.load_stamp(paths.cache, cache.policy_stamp(str(here), str(paths.policy_file)))
    if stamp is None or agent not in stamp["known"]:
        return None
    from tcg.launcher.resolve import interpreter, resolve_agent

    path = resolve_agent(agent, environ.get("PATH"))
    if path is None:
        return None
    from tcg.launcher.gate import lookup

    gate, _ = lookup(here, stamp["fingerprint"], paths)
    if gate is None or gate.status not in ("clean", "none"):
        return None
    from tcg.events import new_session_id
    from tcg.launcher.wiring import WiringError, agent_env

    session = new_session_id()
    try:
        child_env, wired = agent_env(agent, session, environ, interpreter(), paths)
    except WiringError:
        return None
    policy_ref = {"snapshot": stamp["snapshot"], "fingerprint": stamp["fingerprint"]}
    _emit(_Ref(policy_ref), session, _actor(environ), "allow", "allowed" if gate.status == "clean" else "no-repository",
          [], agent=agent, **gate.fields(), accepted=False, wired=wired, exit_code=None)
    from tcg.launcher.exec import exec_agent

    return exec_agent(path, [agent, *agent_args], child_env)


class _Ref:
    """A policy reference from the stamp (what events need: ``ref()``)."""

    def __init__(self, ref: dict[str, str]):
        self._ref = ref

    def ref(self) -> dict[str, str]:
        return dict(self._ref)


def launch(agent: str, agent_args: list[str], *, accept_findings: bool = False,
           env: Mapping[str, str] | None = None, cwd: Path | None = None) -> int:
    """Gate, wire and exec ``agent``. Returns only when the agent does not start (or on Windows)."""
    environ = dict(os.environ if env is None else env)
    here = cwd or Path.cwd()
    if not accept_findings:
        fast = fast_launch(agent, agent_args, environ, here)
        if fast is not None:
            return fast

    from tcg.errors import PolicyError
    from tcg.events import new_session_id
    from tcg.launcher import cache
    from tcg.paths import get_paths
    from tcg.policy.load import load_policy

    session = new_session_id()
    actor = _actor(environ)
    base: dict[str, Any] = {"agent": agent}
    paths = get_paths(environ)
    # Stamped before loading: a layer edited meanwhile then misses next time, never hits stale.
    stamp = None if environ.get("TCG_POLICY") else cache.policy_stamp(str(here), str(paths.policy_file))

    try:
        policy = load_policy(cwd=here, environ=environ)
    except PolicyError as exc:
        _emit(None, session, actor, "block", "policy-invalid", [], **base, exit_code=EXIT_REFUSED)
        _refuse(f"launch of {agent} refused: the policy is invalid: {exc.message}",
                exc.hint or "run `tcg policy check` and fix the file and line it names")
        return EXIT_REFUSED

    if stamp is not None:
        cache.store_stamp(paths.cache, stamp, policy)

    known = [str(a) for a in policy.get("agents.known", []) or []]
    if agent not in known:
        _emit(policy, session, actor, "block", "unknown-agent", [], **base, exit_code=EXIT_REFUSED)
        _refuse(f"{agent!r} is not a known agent (known: {', '.join(sorted(known))})",
                "add it to agents.known in your policy (`tcg policy path`), or run it directly")
        return EXIT_REFUSED

    from tcg.launcher.resolve import interpreter, resolve_agent

    path = resolve_agent(agent, environ.get("PATH"))
    if path is None:
        _emit(policy, session, actor, "block", "agent-not-found", [], **base, exit_code=EXIT_NOT_FOUND)
        _refuse(f"{agent}: command not found on PATH", f"install {agent}, or fix PATH")
        return EXIT_NOT_FOUND

    if accept_findings and actor == "agent":
        _emit(policy, session, actor, "block", "findings-accepted", [], **base, exit_code=EXIT_REFUSED,
              accepted=False)
        _refuse("--accept-findings is a human decision; an agent cannot take it",
                "ask the user to launch the agent")
        return EXIT_REFUSED

    from tcg.launcher.gate import run_gate

    gate = run_gate(agent, here, policy, paths=paths, progress=sys.stderr.isatty())
    fields = {**base, **gate.fields()}
    rules = sorted(gate.counts_by_rule)

    from tcg.policy.model import Decision

    accepted = False
    if gate.status == "none":
        decision, reason = Decision.ALLOW, "no-repository"
    elif gate.status == "clean":
        decision, reason = Decision.ALLOW, "allowed"
    else:
        reason, key = STATUS_REASON.get(gate.status, STATUS_REASON["error"])
        value = policy.get(key)
        decision = Decision.parse(value) if isinstance(value, str) else Decision.BLOCK
        if decision in (Decision.ASK, Decision.BLOCK) and accept_findings and gate.status in ("findings", "partial"):
            decision, reason, accepted = Decision.ALLOW, "findings-accepted", True
        elif decision == Decision.ASK:
            question = f"the repository scan says {gate.status} ({gate.findings} finding(s)); launch {agent} anyway?"
            decision = Decision.ALLOW if (actor == "human" and _confirm(question)) else Decision.BLOCK
            accepted = decision == Decision.ALLOW

    root_display = str(gate.root or here)
    if decision == Decision.BLOCK:
        _emit(policy, session, actor, "block", reason, rules, **fields, accepted=False, exit_code=EXIT_REFUSED)
        if gate.status == "findings":
            sys.stderr.write(_findings_summary(agent, gate, root_display))
        elif gate.status == "partial":
            _refuse(f"launch of {agent} refused: the repository scan was partial (a budget stopped it)",
                    f"scan it fully with `tcg scan --history {root_display}`, or launch once with --accept-findings")
        else:
            _refuse(f"launch of {agent} refused: the repository scan failed ({gate.error or 'unknown error'})",
                    f"see why with `tcg scan --history {root_display}`; launch.on-error in your policy decides this")
        return EXIT_REFUSED

    from tcg.launcher.wiring import WiringError, agent_env

    try:
        child_env, wired = agent_env(agent, session, environ, interpreter(), paths)
    except WiringError as exc:
        _emit(policy, session, actor, "block", "internal-error", rules, **fields, exit_code=EXIT_REFUSED)
        _refuse(f"launch of {agent} refused: {exc.message}", exc.hint)
        return EXIT_REFUSED

    _emit(policy, session, actor, decision.value, reason, rules, **fields, accepted=accepted, wired=wired,
          exit_code=None)
    if accepted:
        sys.stderr.write(f"tcg: launching {agent} despite {gate.findings} finding(s) (recorded)\n")

    from tcg.launcher.exec import exec_agent

    return exec_agent(path, [agent, *agent_args], child_env)
