"""Streaming secret masking (docs/masking.md): ``Masker``, ``masker_for``, ``mask_text``.

Placeholders are ``<SECRET:rule-id:h8>`` / ``<PII:type:h8>`` with h8 the
install-keyed HMAC of the value; reference findings (names of variables or
files, no value) are left as they are. docs/masking.md has the guarantees.
"""

from __future__ import annotations

from tcg.mask.masker import DEFAULT_HOLD_MS, MODES, Masker, placeholder

TYPE_CHECKING = False  # typing costs ~9 ms of import before the first masked byte
if TYPE_CHECKING:
    from tcg.keyhash import KeyedHasher
    from tcg.policy.load import Policy

__all__ = ["DEFAULT_HOLD_MS", "MODES", "Masker", "mask_text", "masker_for", "placeholder"]


def hold_ms_of(policy: Policy | None) -> int:
    """The policy's ``mask.terminal-hold-ms`` (default 500)."""
    value = policy.model.surfaces.terminal_hold_ms if policy is not None else None
    return value if value is not None and value >= 0 else DEFAULT_HOLD_MS


def masker_for(policy: Policy | None, mode: str, *, hasher: KeyedHasher | None = None,
               cut_off_tails: bool = False) -> Masker:
    """A Masker for ``policy``'s detector, the install's keyed hasher and its hold time;
    ``cut_off_tails``: the stream is a live command's output (Masker.flush)."""
    from tcg.detect.engine import load_detector
    from tcg.keyhash import KeyedHasher

    return Masker(
        load_detector(policy),
        hasher if hasher is not None else KeyedHasher.for_install(),
        mode,
        hold_ms_of(policy),
        cut_off_tails=cut_off_tails,
    )


def mask_text(text: str, policy: Policy | None = None) -> str:
    """Mask a whole string (e.g. a command line going into an event)."""
    m = masker_for(policy, "strict")
    data = text.encode("utf-8", "surrogateescape")
    return (m.feed(data) + m.flush()).decode("utf-8", "surrogateescape")
