"""Outbound channels: the same bytes are judged by where they go.

A token in a prompt to the model can be masked and the request still makes
sense (SANITIZE); a token in a commit message or a push is published for good
and nothing downstream can take it back (BLOCK); a token printed to a shell,
written into a file by a redirection, put into an archive that is uploaded or
passed on a command line needs a person to say yes (ASK). A channel tcg does
not know is never assumed harmless: BLOCK ``output-unscannable``.

``decide(channel, payload)`` is the one entry point: `tcg check-span`, the git
checks of the delete-guard and the agents' Write/Edit hooks call it. Results
carry offsets, rule ids and placeholders (``<SECRET:rule:h8>``, the keyed hash
the masker prints) — never the matched bytes.
"""

from __future__ import annotations

from tcg.policy.model import Decision
from tcg.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# name -> default decision for a payload holding a secret (policy: [channels.decisions])
CHANNELS: dict[str, str] = {
    "llm-request": "sanitize",
    "file-write": "sanitize",
    "forge-comment": "sanitize",
    "forge-pr": "sanitize",
    "forge-issue": "sanitize",
    "git-commit-message": "block",
    "git-push-payload": "block",
    "shell-stdout": "ask",
    "shell-file-redirect": "ask",
    "archive-upload": "ask",
    "process-argv": "ask",
}
DEFAULT_CATEGORIES = ("secret",)


class Span(Record, fields="start end rule category placeholder"):
    """One finding in a payload: byte offsets, rule id, category and the
    placeholder that replaces it when the channel sanitizes."""

    __slots__ = ()
    start: int
    end: int
    rule: str
    category: str
    placeholder: str


class ChannelVerdict(Record, fields="channel decision reason spans"):
    """The decision for one payload on one channel, with every span that decided it."""

    __slots__ = ()
    channel: str
    decision: Decision
    reason: str
    spans: tuple[Span, ...]

    def as_json(self) -> dict[str, Any]:
        return {
            "channel": self.channel,
            "decision": self.decision.value,
            "reason": self.reason,
            "findings": [s._asdict() for s in self.spans],
        }


def channel_decision(channel: str, policy: Any = None) -> Decision | None:
    """The decision ``channel`` takes for a secret, or None for an unknown channel."""
    table = dict(CHANNELS)
    if policy is not None:
        table.update(policy.model.channels.decisions)
    value = table.get(channel)
    return Decision.parse(value) if value is not None else None


def categories(policy: Any = None) -> tuple[str, ...]:
    value = policy.model.channels.categories if policy is not None else None
    return value or DEFAULT_CATEGORIES


def scan(payload: bytes, policy: Any = None, *, hasher: Any = None) -> tuple[Span, ...]:
    """Every finding of the policy's channel categories in ``payload``."""
    from tcg.detect.engine import load_detector
    from tcg.mask.masker import placeholder

    if hasher is None:
        from tcg.keyhash import KeyedHasher

        hasher = KeyedHasher.for_install()
    wanted = categories(policy)
    out = []
    for f in load_detector(policy).find_bytes(payload, decode=True):
        if f.category not in wanted:
            continue
        tag = placeholder(f.category, f.rule_id, hasher.h8(payload[f.start:f.end])).decode("ascii")
        out.append(Span(f.start, f.end, f.rule_id, f.category, tag))
    return tuple(out)


def decide(channel: str, payload: bytes | str, policy: Any = None, *, hasher: Any = None) -> ChannelVerdict:
    """Decide ``payload`` bound for ``channel``. Unknown channel: BLOCK
    ``output-unscannable`` (not scanned: the decision does not depend on it)."""
    decision = channel_decision(channel, policy)
    if decision is None:
        return ChannelVerdict(channel, Decision.BLOCK, "output-unscannable", ())
    data = payload.encode("utf-8", "surrogateescape") if isinstance(payload, str) else bytes(payload)
    spans = scan(data, policy, hasher=hasher)
    if not spans:
        return ChannelVerdict(channel, Decision.ALLOW, "allowed", ())
    return ChannelVerdict(channel, decision, "outbound-secret", spans)


def sanitize(payload: bytes, spans: tuple[Span, ...]) -> bytes:
    """``payload`` with every span replaced by its placeholder."""
    out = []
    pos = 0
    for s in sorted(spans, key=lambda s: s.start):
        if s.start < pos:
            continue
        out.append(payload[pos:s.start])
        out.append(s.placeholder.encode("ascii"))
        pos = s.end
    out.append(payload[pos:])
    return b"".join(out)
