"""Decisions and verdicts: what the engine answers to every surface."""

from __future__ import annotations

from tcg.record import Record

TYPE_CHECKING = False  # typing and dataclasses cost ~10 ms of import on every command
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any


class _DecisionType(type):
    """Enum-like class behaviour (``Decision("block")``, iteration, ``len``) without
    importing enum: enum pulls in functools and collections, ~4.5 ms on every
    mediated command."""

    _members: tuple[Decision, ...]
    _by_value: dict[str, Decision]

    def __call__(cls, value: object) -> Decision:  # lookup by value, as Enum does
        if isinstance(value, Decision):
            return value
        try:
            return cls._by_value[value]  # type: ignore[index]
        except (KeyError, TypeError):
            raise ValueError(f"{value!r} is not a valid Decision") from None

    def __iter__(cls) -> Iterator[Decision]:
        return iter(cls._members)

    def __len__(cls) -> int:
        return len(cls._members)


class Decision(metaclass=_DecisionType):
    """Ordered from most to least permissive; combine with :func:`worst`.

    One instance per value (compare with ``is``), with ``name``, ``value`` and
    ``rank``, like an Enum member. RELOCATE (move the targets into the trash)
    and SNAPSHOT (save the state first) let the action run, made reversible
    (docs/guard.md): they rank above SANITIZE, which changes nothing on disk,
    and below ASK, which needs a human before anything runs.
    """

    __slots__ = ("name", "value", "rank")
    name: str
    value: str
    rank: int

    ALLOW: Decision
    SANITIZE: Decision
    RELOCATE: Decision
    SNAPSHOT: Decision
    ASK: Decision
    BLOCK: Decision

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError("Decision members are read-only")

    def __repr__(self) -> str:
        return f"<Decision.{self.name}: {self.value!r}>"

    def __str__(self) -> str:
        return f"Decision.{self.name}"

    def __reduce__(self) -> tuple[Any, tuple[str]]:  # pickle/copy give back the same member
        return Decision, (self.value,)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Decision):
            return NotImplemented
        return self.rank < other.rank

    def __le__(self, other: object) -> bool:
        if not isinstance(other, Decision):
            return NotImplemented
        return self.rank <= other.rank

    def __gt__(self, other: object) -> bool:
        if not isinstance(other, Decision):
            return NotImplemented
        return self.rank > other.rank

    def __ge__(self, other: object) -> bool:
        if not isinstance(other, Decision):
            return NotImplemented
        return self.rank >= other.rank

    @classmethod
    def parse(cls, value: str) -> Decision:
        try:
            return cls._by_value[value.lower()]
        except KeyError:
            raise ValueError(
                f"unknown decision {value!r} (expected one of: "
                + ", ".join(d.value for d in cls)
                + ")"
            ) from None


def _make_members() -> None:
    members = []
    for rank, name in enumerate(("ALLOW", "SANITIZE", "RELOCATE", "SNAPSHOT", "ASK", "BLOCK")):
        member = object.__new__(Decision)
        for attr, value in (("name", name), ("value", name.lower()), ("rank", rank)):
            object.__setattr__(member, attr, value)
        type.__setattr__(Decision, name, member)
        members.append(member)
    Decision._members = tuple(members)
    Decision._by_value = {m.value: m for m in members}


_make_members()


def worst(decisions: Iterable[Decision]) -> Decision:
    """The most restrictive of ``decisions`` (ALLOW when empty)."""
    result = Decision.ALLOW
    for d in decisions:
        if d.rank > result.rank:
            result = d
    return result


ACTORS = ("human", "agent")
SURFACES = ("shell", "mcp", "clipboard", "launch")


class Reason(Record, fields="code decision detail rule action", defaults=(None, None)):
    """One reason contributing to a verdict. ``code`` is a stable kebab-case id;
    ``detail`` is one line and never contains a secret value; ``rule`` is optional.
    ``action`` is what a RELOCATE or SNAPSHOT reason needs done before the command
    runs (a tuple of tcg.guard.plan records), None for every other reason.

    Records here are tcg.record.Record tuples, not dataclasses: importing
    dataclasses costs ~7 ms, paid by every mediated command.
    """

    __slots__ = ()
    code: str
    decision: Decision
    detail: str
    rule: str | None
    action: tuple[Any, ...] | None


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

    @property
    def actions(self) -> tuple[Any, ...]:
        """What must be done before the command runs: the actions of every reason
        decided RELOCATE or SNAPSHOT (under a worse decision too: an ASK the user
        approves still runs the line, and its deletes must still be reversible)."""
        out: list[Any] = []
        for r in self.reasons:
            if r.action and (r.decision is Decision.RELOCATE or r.decision is Decision.SNAPSHOT):
                out.extend(r.action)
        return tuple(out)

    @classmethod
    def combine(cls, reasons: Iterable[Reason]) -> Verdict:
        rs = tuple(reasons)
        return cls(decision=worst(r.decision for r in rs), reasons=rs)
