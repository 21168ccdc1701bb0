"""Masking for a terminal session: a masker that follows policy changes.

A one-line command is masked with the policy that decided it (the masking
process checks the fingerprint). A session lasts hours, and the user may edit
the policy meanwhile: its masking process (``tcg.mask.filter --worker
--follow-policy``) re-reads the effective policy at most once a second and,
when it changed, finishes the old masker's stream and continues with a new
one. An unreadable or invalid new policy keeps the last valid one (the
session's decisions meanwhile refuse every line with ``policy-invalid``).
"""

from __future__ import annotations

import time

from tcg.mask import masker_for

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

RECHECK = 1.0  # seconds between two looks at the policy files


def _load() -> Any:
    from tcg.policy.load import load_policy

    return load_policy()


class FollowingMasker:
    """The OutputFilter interface of tcg.mask.Masker over a replaceable masker."""

    def __init__(self, mode: str, load: Callable[[], Any] = _load, recheck: float = RECHECK):
        self.mode = mode
        self._load = load
        self._recheck = recheck
        policy = load()
        self.fingerprint = policy.fingerprint
        self._masker = masker_for(policy, mode)
        self._next_check = time.monotonic() + recheck

    def _maybe_reload(self) -> bytes:
        now = time.monotonic()
        if now < self._next_check:
            return b""
        self._next_check = now + self._recheck
        try:
            policy = self._load()
        except Exception:  # noqa: BLE001 - keep masking with the last valid policy
            return b""
        if policy.fingerprint == self.fingerprint:
            return b""
        try:
            new = masker_for(policy, self.mode)
        except Exception:  # noqa: BLE001 - same: never drop to no masking
            return b""
        out = self._masker.flush()
        self._masker = new
        self.fingerprint = policy.fingerprint
        return out

    def feed(self, data: bytes) -> bytes:
        head = self._maybe_reload()
        return head + self._masker.feed(data)

    def flush(self) -> bytes:
        return self._masker.flush()

    def release_idle(self) -> bytes:
        return self._masker.release_idle()

    def idle_deadline(self) -> float | None:
        return self._masker.idle_deadline()
