"""Who acts, from the environment: a person (``human``) or an agent (``agent``).

Every event names its actor, and a session station needs it for the hook's
hello before anything else is loaded: this module imports nothing.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


def actor_from_env(env: Mapping[str, str]) -> str:
    """``agent`` when the environment says so (TCG_ACTOR, or the launcher's mark
    TCG_AGENT), else ``human``: the actor of every event a surface records."""
    if env.get("TCG_ACTOR", "").strip().lower() == "agent" or env.get("TCG_AGENT"):
        return "agent"
    return "human"
