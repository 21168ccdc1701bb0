"""How the delete-guard names a path or word in a reason's detail.

Details are shown on the terminal and kept (masked) in the event log, so a word
is made printable and bounded in length, and a part known only at run time is
shown as "…". Shared by the line review (tcg.guard.rules) and the modules that
review parts of it (tcg.guard.copies, tcg.guard.gitrules).
"""

from __future__ import annotations

from tcg.policy.cmdline import DYN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tcg.policy.cmdline import Word


def show(value: str) -> str:
    """``value`` printable and at most 60 characters, run-time parts as "…"."""
    text = value.replace(DYN, "…")
    text = "".join(c if c.isprintable() else "?" for c in text)
    return text if len(text) <= 60 else text[:57] + "..."


def from_vars(w: Word) -> str:
    """" (from $A, $B)": the variables a run-time word comes from (up to three)."""
    if w.vars:
        return " (from " + ", ".join("$" + v for v in w.vars[:3]) + ")"
    return ""
