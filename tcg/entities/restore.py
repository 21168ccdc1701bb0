"""Alias -> real value, on what an agent writes: exact, token-bounded, never guessed.

A token is restored only when it is exactly a registered alias
(``CTXG_COMPANY_A``), standing alone (no letter, digit or ``_`` touching it),
optionally followed by a Russian case ending that picks the form
(«у CTXG_PERSON_3а» → «у Петрова»). Everything else that looks like an alias
is a *problem* the caller must refuse or ask about, never a guess:
``CTXG_COMPANY_AB`` (unknown), ``ctxg_company_a`` (case), an alias inside an
identifier, a retired alias, an ending that fits several forms or none.

Secret placeholders (``<SECRET:rule:h8>``, ``<PII:rule:h8>``) are never turned
back into values; writing one is a problem too unless the policy says keep.

The value is written with the escaping its place needs (tcg.entities.contexts):
inside a JSON string, a YAML scalar, a shell word, a quoted string literal in
code, or plain text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tcg.entities.contexts import escape_for

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tcg.entities.runtime import Entities

# a candidate: anything starting with ctxg_ (any case) at a word start, with the
# Cyrillic letters right after it
_CANDIDATE = re.compile(r"(?<![A-Za-z0-9_])((?i:ctxg)_[A-Za-z0-9_]*)([А-Яа-яЁё]*)")
_ANY = re.compile(r"(?i)ctxg_")
ALIAS_SHAPE = re.compile(r"CTXG_[A-Z]+_[A-Z0-9]+\Z")
PLACEHOLDER = re.compile(r"<(?:SECRET|PII):[A-Za-z0-9_.-]+:[0-9a-f]{8}>")
_ENDING = re.compile(r"[а-яё]{1,3}\Z")

REASONS = {
    "unknown-alias": "is not an alias registered in this project",
    "alias-case": "differs in letter case from a registered alias (aliases are exact)",
    "retired-alias": "belongs to an entity that was removed",
    "alias-in-word": "is glued to other letters or digits (an alias must stand alone)",
    "ambiguous-ending": "carries an ending that fits several case forms",
    "unknown-ending": "carries an ending that is not a case ending of this entity",
    "escaping": "cannot be written safely at this place (the value needs quoting there)",
    "placeholder": "is a masked secret: its value is never written back",
}


@dataclass(frozen=True)
class Problem:
    """Something that was not restored. ``token`` is what the agent wrote (an alias
    or a placeholder: never a value)."""

    token: str
    reason: str

    def message(self) -> str:
        return f"{self.token} {REASONS.get(self.reason, self.reason)}"


@dataclass
class Restored:
    text: str
    problems: list[Problem] = field(default_factory=list)
    count: int = 0  # aliases restored

    @property
    def ok(self) -> bool:
        return not self.problems


def restore_text(text: str, ents: Entities | None, *, context: str = "plain", prefix: str = "",
                 placeholders: str = "refuse", spellings: dict[str, list[str]] | None = None
                 ) -> Restored:
    """Restore every alias in ``text``.

    ``context``: plain | json | yaml | shell | code — how a value is escaped where
    it lands; ``prefix``: the text before ``text`` in its file (the escaping
    context of a fragment depends on it). ``spellings``: token -> raw spellings to
    use, in order, instead of the canonical form (the bytes an edited file already
    holds at that place). ``placeholders``: "refuse" or "keep".
    """
    out: list[str] = []
    problems: list[Problem] = []
    count = 0
    pos = 0
    used: dict[str, int] = {}
    aliases = ents.inflections if ents is not None else {}
    retired = ents.retired if ents is not None else frozenset()
    starts = set()
    for m in _CANDIDATE.finditer(text):
        base, tail = m.group(1), m.group(2)
        s, e = m.span()
        starts.add(s)
        after = text[e : e + 1]
        token = base + tail
        if after and (after.isalnum() or after == "_"):
            problems.append(Problem(_shown(token), "alias-in-word"))
            continue
        if base not in aliases:
            if base.upper() in aliases or base.upper() in retired:
                reason = "alias-case" if base != base.upper() else "retired-alias"
            elif base in retired:
                reason = "retired-alias"
            elif not ALIAS_SHAPE.match(base.upper()) and base.upper().startswith("CTXG_") and any(
                    base.upper().startswith(a + "_") for a in aliases):
                reason = "alias-in-word"
            else:
                reason = "unknown-alias"
            problems.append(Problem(_shown(token), reason))
            continue
        if tail and not _ENDING.match(tail):
            problems.append(Problem(_shown(token), "unknown-ending"))
            continue
        value, why = aliases[base].restore(tail)
        if value is None:
            problems.append(Problem(_shown(token), "ambiguous-ending" if why == "ambiguous"
                                    else "unknown-ending"))
            continue
        spelled = spellings.get(token) if spellings else None
        if spelled:
            i = used.get(token, 0)
            if i < len(spelled):
                used[token] = i + 1
                out.append(text[pos:s])
                out.append(spelled[i])
                pos = e
                count += 1
                continue
        written = escape_for(context, prefix + text[:s] if context != "plain" else "", value,
                             text[e : text.find("\n", e) if "\n" in text[e:] else len(text)])
        if written is None:
            problems.append(Problem(_shown(token), "escaping"))
            continue
        out.append(text[pos:s])
        out.append(written)
        pos = e
        count += 1
    out.append(text[pos:])
    result = "".join(out)
    for m in _ANY.finditer(text):  # glued on the left (xCTXG_…, client_CTXG_…)
        if m.start() not in starts:
            problems.append(Problem(_shown(text[m.start() : m.start() + 40].split()[0]), "alias-in-word"))
    if placeholders != "keep":
        for ph in PLACEHOLDER.finditer(result):
            problems.append(Problem(ph.group(), "placeholder"))
    return Restored(result, problems, count)


def _shown(token: str) -> str:
    """What a problem may quote: the alias-like token, cut short (never a value:
    the agent wrote it, and it starts with ctxg_)."""
    return token[:48]


def has_alias_like(text: str) -> bool:
    return "ctxg_" in text.lower() or "<SECRET:" in text or "<PII:" in text
