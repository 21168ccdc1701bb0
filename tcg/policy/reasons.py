"""Stable reason codes: every code tcg can emit, with its meaning and fix.

Codes are data users and tools rely on: never rename or reuse one. Each must be
documented in docs/reason-codes.md (a test enforces it).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ReasonInfo:
    meaning: str
    fix: str


REASONS: dict[str, ReasonInfo] = {
    "allowed": ReasonInfo("no rule matched; the action runs (output still masked)", "none needed"),
    "secret-store-read": ReasonInfo(
        "the command reads a protected secret store (.env*, *.pem, id_rsa*, ~/.ssh, ~/.aws, …)",
        "read the value through your app's config loader, or ask the user to provide it",
    ),
    "credential-dump": ReasonInfo(
        "the command prints credentials (env, printenv, gh auth token, aws configure get, …)",
        "name the single non-secret variable you need (echo $HOME), or ask the user",
    ),
    "secret-store-write": ReasonInfo(
        "the command writes into a protected secret store (.env*, ~/.ssh/authorized_keys, …)",
        "ask the user to change the secret store; do not edit credentials from an agent",
    ),
    "guard-tamper": ReasonInfo(
        "the command changes how tcg is wired in: shell rc files, agent settings, TCG_* variables",
        "edit rc files and agent settings yourself, outside the agent session",
    ),
    "unresolved-command": ReasonInfo(
        "the command runs code tcg cannot see before running (eval \"$X\", bash -c \"$X\", $CMD)",
        "spell the command out literally so the policy can check it",
    ),
    "self-protection": ReasonInfo(
        "the command writes tcg's own policy, state, key or hook files",
        "change tcg's configuration yourself with `tcg policy path` and an editor",
    ),
    "unresolved-path": ReasonInfo(
        "a file argument depends on a variable or expansion tcg cannot resolve before running",
        "spell out the path literally so the policy can check it",
    ),
    "unparsable-line": ReasonInfo(
        "the command line could not be parsed, so what it would run is unknown",
        "fix the syntax, or split the line into simpler commands",
    ),
    "policy-invalid": ReasonInfo(
        "the policy file is unreadable or invalid; mediated commands fail closed",
        "run `tcg policy check` and fix the file and line it names",
    ),
    "clipboard-secret": ReasonInfo(
        "a secret was copied to the clipboard; the watcher overwrote it with a masked copy",
        "copy the secret again only where it is needed, and paste it at once (the watcher "
        "masks it within two polls); never paste secrets into an agent",
    ),
    "clipboard-over-cap": ReasonInfo(
        "the clipboard held more than clipboard.inspect-cap bytes; only the start was inspected",
        "copy smaller pieces, or raise clipboard.inspect-cap in your policy",
    ),
    "internal-error": ReasonInfo(
        "tcg failed while deciding; the action was refused rather than run unchecked",
        "rerun with TCG_DEBUG=1 to see the traceback and report it",
    ),
}


def describe(code: str) -> ReasonInfo:
    return REASONS[code]
