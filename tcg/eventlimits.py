"""The event log's rotation limits for this process.

Set when a policy is loaded (tcg.policy.load), read by every append of the event
log (tcg.events, which re-exports these names). A module of its own so that
loading a policy does not import the event log: a session's masking process
loads a policy before it can mask the first prompt and never writes an event.
"""

from __future__ import annotations

DEFAULT_MAX_BYTES = 8 * 1024 * 1024
DEFAULT_KEEP = 5
limits: list[int] = [DEFAULT_MAX_BYTES, DEFAULT_KEEP]


def set_rotation(max_bytes: int, keep: int) -> None:
    """Rotation limits for this process's appends (set when a policy is loaded;
    a process that loads none uses the defaults)."""
    limits[:] = [int(max_bytes), int(keep)]


def rotation() -> tuple[int, int]:
    return limits[0], limits[1]
