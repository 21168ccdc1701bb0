"""Per-surface policy of the inbound gate: what a flagged text's kind does where.

Kinds: ``injection`` (a phrase rule matched), ``invisible`` (a flood of invisible
characters, or text smuggled in tag characters, variation selectors or bidi
controls), ``drain`` (more than 50 characters of scripts that are expensive to
tokenize). Actions, weakest first: ``allow`` (record an event only), ``warn``
(deliver the text with a warning the model sees), ``block`` (replace the text
with a note). The built-in default is in tcg/policy/default.toml; docs/inbound.md
has the table.
"""

from __future__ import annotations

from typing import Any

from tcg.policy.load import INBOUND_ACTIONS as ACTIONS
from tcg.policy.load import INBOUND_KINDS as KINDS
from tcg.policy.load import INBOUND_SURFACES as SURFACES

#: what a surface does when the policy says nothing (the built-in default's values)
DEFAULTS: dict[str, dict[str, str]] = {
    "web": dict.fromkeys(KINDS, "warn"),
    "mcp-result": dict.fromkeys(KINDS, "warn"),
    "file-read": dict.fromkeys(KINDS, "warn"),
    "user-prompt": {"injection": "allow", "invisible": "block", "drain": "block"},
    "clipboard": dict.fromkeys(KINDS, "warn"),
}


def stricter(a: str, b: str) -> str:
    """The stricter of two actions."""
    return a if ACTIONS.index(a) >= ACTIONS.index(b) else b


def actions_for(policy: Any, surface: str) -> dict[str, str]:
    """kind -> action for ``surface`` under ``policy`` (None: the defaults)."""
    if surface not in SURFACES:
        raise ValueError(f"unknown inbound surface {surface!r}")
    out = dict(DEFAULTS[surface])
    if policy is not None:
        table = dict(policy.model.inbound.surface(surface))
        for kind in KINDS:
            value = table.get(kind)
            if isinstance(value, str) and value.lower() in ACTIONS:
                out[kind] = value.lower()
    return out


def action_for(actions: dict[str, str], kinds: frozenset[str] | set[str]) -> str:
    """The action for a text flagged with ``kinds`` (the strictest of theirs)."""
    act = "allow"
    for kind in kinds:
        act = stricter(act, actions.get(kind, "warn"))
    return act
