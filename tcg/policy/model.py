"""Decisions and verdicts: what the engine answers to every surface."""

from __future__ import annotations

import enum

from tcg.record import Record

TYPE_CHECKING = False  # typing and dataclasses cost ~10 ms of import on every command
if TYPE_CHECKING:
    from collections.abc import Iterable


class Decision(enum.Enum):
    """Ordered from most to least permissive; combine with :func:`worst`.

    RELOCATE and SNAPSHOT are reserved for the delete guard (a later issue) and
    rank between ASK and BLOCK: they let the action happen in a changed form.
    """

    ALLOW = "allow"
    SANITIZE = "sanitize"
    ASK = "ask"
    RELOCATE = "relocate"
    SNAPSHOT = "snapshot"
    BLOCK = "block"

    @property
    def rank(self) -> int:
        return _RANK[self]

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Decision):
            return NotImplemented
        return self.rank < other.rank

    def __le__(self, other: object) -> bool:
        if not isinstance(other, Decision):
            return NotImplemented
        return self.rank <= other.rank

    @classmethod
    def parse(cls, value: str) -> Decision:
        try:
            return cls(value.lower())
        except ValueError:
            raise ValueError(
                f"unknown decision {value!r} (expected one of: "
                + ", ".join(d.value for d in cls)
                + ")"
            ) from None


_RANK = {
    Decision.ALLOW: 0,
    Decision.SANITIZE: 1,
    Decision.ASK: 2,
    Decision.RELOCATE: 3,
    Decision.SNAPSHOT: 4,
    Decision.BLOCK: 5,
}


def worst(decisions: Iterable[Decision]) -> Decision:
    """The most restrictive of ``decisions`` (ALLOW when empty)."""
    result = Decision.ALLOW
    for d in decisions:
        if d.rank > result.rank:
            result = d
    return result


ACTORS = ("human", "agent")
SURFACES = ("shell", "mcp", "clipboard", "launch")


class Reason(Record, fields="code decision detail rule", defaults=(None,)):
    """One reason contributing to a verdict. ``code`` is a stable kebab-case id;
    ``detail`` is one line and never contains a secret value; ``rule`` is optional.

    Records here are tcg.record.Record tuples, not dataclasses: importing
    dataclasses costs ~7 ms, paid by every mediated command.
    """

    __slots__ = ()
    code: str
    decision: Decision
    detail: str
    rule: str | None


class Verdict(Record, fields="decision reasons", defaults=((),)):
    """The engine's answer for one action: the worst decision and every reason."""

    __slots__ = ()
    decision: Decision
    reasons: tuple[Reason, ...]

    @property
    def reason(self) -> str:
        """The code of the reason that decided (the first with the worst decision)."""
        for r in self.reasons:
            if r.decision == self.decision:
                return r.code
        return "allowed"

    @property
    def rules(self) -> tuple[str, ...]:
        return tuple(sorted({r.rule for r in self.reasons if r.rule}))

    @property
    def deciding(self) -> Reason | None:
        for r in self.reasons:
            if r.decision == self.decision:
                return r
        return None

    @classmethod
    def combine(cls, reasons: Iterable[Reason]) -> Verdict:
        rs = tuple(reasons)
        return cls(decision=worst(r.decision for r in rs), reasons=rs)
