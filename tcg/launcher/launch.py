"""`tcg launch [--accept-findings] AGENT [ARG…]`: the whole launch, without click.

Order: known agent? → binary on PATH? → gate (repo scan, cached) → decision →
wiring → one ``launch_gate`` event → exec. Every exit path records its event.
Parsing is by hand (options only before AGENT; everything after AGENT is the
agent's own, untouched) so a launch imports neither click nor the scanner
unless it scans. A cache hit never gets here: tcg.launcher.fastpath handles it
and hands everything else to ``launch(..., fast=False)``.
"""

from __future__ import annotations

import os
import sys

from tcg.launcher import fastpath
from tcg.launcher.fastpath import (
    EXIT_NOT_FOUND,
    EXIT_REFUSED,
    EXIT_USAGE,
    USAGE,
    fast_launch,
    parse_args,
)

TYPE_CHECKING = False  # typing costs ~3 ms of import
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

__all__ = ["EXIT_NOT_FOUND", "EXIT_REFUSED", "EXIT_USAGE", "USAGE", "fast_launch", "launch", "launch_main",
           "parse_args"]

launch_main = fastpath.main  # `tcg launch` (tcg/__main__.py, tcg.cli) starts there: cache-hit path first

STATUS_REASON = {
    "findings": ("repo-findings", "launch.on-findings"),
    "partial": ("repo-scan-partial", "launch.on-partial"),
    "error": ("repo-scan-error", "launch.on-error"),
}


def _emit(policy: Any, session: str, actor: str, decision: str, reason: str, rules: list[str],
          **fields: Any) -> None:
    fastpath.emit(policy.ref() if policy is not None else None, session, actor, decision, reason, rules, **fields)


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


def launch(agent: str, agent_args: list[str], *, accept_findings: bool = False,
           env: Mapping[str, str] | None = None, cwd: str | os.PathLike[str] | None = None,
           fast: bool = True) -> int:
    """Gate, wire and exec ``agent``. Returns only when the agent does not start (or on Windows)."""
    environ = dict(os.environ if env is None else env)
    here = os.fspath(cwd) if cwd is not None else os.getcwd()
    if fast and not accept_findings:
        done = fast_launch(agent, agent_args, environ, here)
        if done is not None:
            return done

    from tcg.errors import PolicyError, TcgError
    from tcg.events import new_session_id
    from tcg.launcher import cache
    from tcg.paths import get_paths
    from tcg.policy.load import load_policy

    session = new_session_id()
    actor = fastpath.actor(environ)
    base: dict[str, Any] = {"agent": agent}
    paths = get_paths(environ)
    # Stamped before loading: a layer edited meanwhile then misses next time, never hits stale.
    stamp = None if environ.get("TCG_POLICY") else cache.policy_stamp(here, paths.policy_path)

    try:
        policy = load_policy(cwd=here, environ=environ)
    except PolicyError as exc:
        _emit(None, session, actor, "block", "policy-invalid", [], **base, exit_code=EXIT_REFUSED)
        _refuse(f"launch of {agent} refused: the policy is invalid: {exc.message}",
                exc.hint or "run `tcg policy check` and fix the file and line it names")
        return EXIT_REFUSED

    if stamp is not None:
        from tcg.keyhash import load_or_create_key

        try:
            cache.store_stamp(paths.cache_dir, stamp, policy, load_or_create_key(paths))
        except TcgError:
            pass  # no key, no stamp: the next launch takes the full path again

    known = [str(a) for a in policy.get("agents.known", []) or []]
    if agent not in known:
        _emit(policy, session, actor, "block", "unknown-agent", [], **base, exit_code=EXIT_REFUSED)
        _refuse(f"{agent!r} is not a known agent (known: {', '.join(sorted(known))})",
                "add it to agents.known in your policy (`tcg policy path`), or run it directly")
        return EXIT_REFUSED

    path = fastpath.resolve_agent(agent, environ.get("PATH"))
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

    root_display = gate.root or here
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
        child_env, wired = agent_env(agent, session, environ, fastpath.interpreter(), paths)
    except WiringError as exc:
        _emit(policy, session, actor, "block", "internal-error", rules, **fields, exit_code=EXIT_REFUSED)
        _refuse(f"launch of {agent} refused: {exc.message}", exc.hint)
        return EXIT_REFUSED

    _emit(policy, session, actor, decision.value, reason, rules, **fields, accepted=accepted, wired=wired,
          exit_code=None)
    if accepted:
        sys.stderr.write(f"tcg: launching {agent} despite {gate.findings} finding(s) (recorded)\n")

    return fastpath.exec_agent(path, [agent, *agent_args], child_env)
