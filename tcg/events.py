"""The security-event log: the only writer of ``events.jsonl``.

One JSON object per line, appended through tcg.jsonl (one locked ``write`` on
an ``O_APPEND`` descriptor, torn tails isolated, rotated by size) so concurrent
tcg processes never interleave records and the log stays bounded. The file is
0600 inside a 0700 directory. Records carry rule ids, counts, lengths and keyed
hashes — never a matched value. Readers skip (and count) torn lines instead of
failing, so a crash mid-write cannot hide the records after it.
"""

from __future__ import annotations

import os
import time

from tcg import eventlimits, jsonl
from tcg._lean.jsonc import encode_basestring_ascii as _quote
from tcg.actors import actor_from_env  # noqa: F401 - re-exported: surfaces import it from here
from tcg.errors import EventLogError
from tcg.eventlimits import DEFAULT_KEEP, DEFAULT_MAX_BYTES, rotation, set_rotation  # noqa: F401 - re-exported
from tcg.paths import get_paths

TYPE_CHECKING = False  # typing, pathlib and dataclasses cost import time on every command
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping
    from enum import Enum
    from pathlib import Path
    from typing import Any

    from tcg.paths import Paths

SCHEMA_VERSION = 1
RECORD_START = b'{"v":'

EVENT_TYPES = frozenset(
    {
        "command_decision",
        "launch_gate",
        "scan_completed",
        "mcp_session_status",
        "mcp_request_blocked",
        "mcp_response_masked",
        "clipboard_masked",
        "clipboard_partially_inspected",
        "policy_error",
        "hook_decision",
        "entity_registry_changed",
        "inbound_flagged",
        "guard_relocate",
        "guard_snapshot",
        "guard_settle",
        "guard_restore",
        "guard_gc",
        "channel_decision",
        "approval",
        "internal_error",
    }
)

SURFACES = frozenset({"shell", "launch", "mcp", "clipboard", "scan", "cli", "claude-hooks", "qwen-hooks"})


def new_session_id() -> str:
    # os.urandom, not uuid: importing uuid costs ~5 ms on every tcg_shell start.
    return os.urandom(8).hex()


def record_policy_error(exc: BaseException, *, surface: str, actor: str, session: str | None = None,
                        **fields: Any) -> None:
    """Record a ``policy_error``: a policy that could not be loaded refused an action.

    Only the file's path, the line (when the parser named one) and the reason code are
    recorded, never the error's message: a parser's message can quote the file, and a
    policy may hold a value someone pasted by mistake. Best effort: the refusal stands
    whether or not the record could be written (the action's own event says so too).
    """
    try:
        EventLog().emit("policy_error", surface=surface, actor=actor, decision="block", reason="policy-invalid",
                        session=session, policy_path=getattr(exc, "path", None) or None,
                        policy_line=getattr(exc, "line", None) or None, **fields)
    except Exception:  # noqa: BLE001 - logging must not change the outcome
        pass


def current_session() -> str:
    """The session id inherited from a mediating parent, else a fresh one."""
    return os.environ.get("TCG_SESSION") or new_session_id()


def build_record(
    event: str,
    *,
    surface: str,
    actor: str = "human",
    decision: str | Enum | None = None,
    reason: str | None = None,
    rules: list[str] | tuple[str, ...] = (),
    policy: Mapping[str, str] | None = None,
    session: str | None = None,
    **fields: Any,
) -> dict[str, Any]:
    if event not in EVENT_TYPES:
        raise ValueError(f"unknown event type {event!r}")
    if surface not in SURFACES:
        raise ValueError(f"unknown surface {surface!r}")
    record: dict[str, Any] = {
        "v": SCHEMA_VERSION,
        "ts": round(time.time(), 6),
        "event": event,
        "surface": surface,
        "actor": actor,
        "decision": getattr(decision, "value", decision),
        "reason": reason,
        "rules": sorted(set(rules)),
        "policy": dict(policy) if policy else None,
        "session": session or current_session(),
    }
    for key, value in fields.items():
        if key in record:
            raise ValueError(f"field {key!r} is reserved")
        record[key] = value
    return record


def encode_record(record: Mapping[str, Any]) -> bytes:
    """One record as one line of ASCII JSON (ensure_ascii keeps it one physical
    line whatever the input).

    Exactly ``json.dumps(record, ensure_ascii=True, separators=(",", ":"),
    default=str)``, but for the plain types events hold it uses the json
    package's C string encoder directly: importing json costs ~1.5 ms of every
    mediated command. Anything else goes through json itself.
    """
    parts: list[str] = []
    try:
        _encode(record, parts.append)
    except _Unsupported:
        import json

        text = json.dumps(record, ensure_ascii=True, separators=(",", ":"), default=str)
    else:
        text = "".join(parts)
    return (text + "\n").encode("ascii")


class _Unsupported(Exception):
    pass


def _encode(value: Any, out: Callable[[str], Any]) -> None:
    if _quote is None:
        raise _Unsupported
    if isinstance(value, str):
        out(_quote(value))
    elif value is None:
        out("null")
    elif value is True:
        out("true")
    elif value is False:
        out("false")
    elif type(value) is int:
        out(int.__repr__(value))
    elif type(value) is float and value == value and value not in (float("inf"), float("-inf")):
        out(float.__repr__(value))
    elif type(value) is dict:
        out("{")
        first = True
        for key, item in value.items():
            if type(key) is not str:
                raise _Unsupported
            if not first:
                out(",")
            first = False
            out(_quote(key))
            out(":")
            _encode(item, out)
        out("}")
    elif type(value) in (list, tuple):
        out("[")
        for i, item in enumerate(value):
            if i:
                out(",")
            _encode(item, out)
        out("]")
    else:
        raise _Unsupported


# Rotation by size (policy ``[events]``, docs/events.md): the live file plus
# ``keep`` rotated ones, so the log is bounded at about (keep + 1) * max_bytes.
_limits = eventlimits.limits  # the policy's rotation settings (tcg.eventlimits)


class EventLog:
    """Appends records to one JSONL file (tcg.jsonl: torn-line safe, locked,
    rotated by size). Cheap to construct; opens per write."""

    def __init__(self, path: str | os.PathLike[str] | None = None, paths: Paths | None = None):
        self._path = os.fspath(path) if path is not None else (paths or get_paths()).events_path

    @property
    def path(self) -> Path:
        from pathlib import Path

        return Path(self._path)

    def append(self, record: Mapping[str, Any]) -> None:
        data = encode_record(record)
        try:
            jsonl.append(self._path, data, max_bytes=_limits[0], keep=_limits[1])
        except OSError as exc:
            raise _log_error(self._path, exc) from exc

    def check_writable(self) -> None:
        """Raise EventLogError when a record could not be appended now (full disk,
        file-size limit, unwritable): the caller refuses instead of acting unlogged."""
        try:
            jsonl.check_writable(self._path)
        except OSError as exc:
            raise _log_error(self._path, exc) from exc

    def emit(self, event: str, **kwargs: Any) -> dict[str, Any]:
        record = build_record(event, **kwargs)
        self.append(record)
        return record


def _log_error(path: str, exc: OSError) -> EventLogError:
    import errno

    if exc.errno in (errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC)):
        hint = "free space on the disk holding the tcg state directory (or raise `ulimit -f`)"
    else:
        hint = "check permissions of the tcg state directory (tcg doctor)"
    err = EventLogError(f"cannot write the event log {path}: {exc.strerror or exc}", hint=hint)
    err.errno = exc.errno
    return err


class ReadStats:
    """How many torn or non-JSON lines a reader skipped."""

    __slots__ = ("malformed",)

    def __init__(self, malformed: int = 0):
        self.malformed = malformed

    def __repr__(self) -> str:
        return f"ReadStats(malformed={self.malformed})"


def iter_records(path: str | os.PathLike[str], stats: ReadStats | None = None) -> Iterator[dict[str, Any]]:
    """Yield parsed records of ``path`` and its rotated files, oldest first;
    torn or non-JSON lines are skipped and counted."""
    for raw in jsonl.iter_lines(os.fspath(path)):
        garbage, rec = _split_line(raw)
        if garbage and stats is not None:
            stats.malformed += 1
        if rec is not None:
            yield rec


def _parse_line(raw: bytes) -> dict[str, Any] | None:
    if not raw.endswith(b"\n"):
        return None
    import json

    try:
        obj = json.loads(raw)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def _split_line(raw: bytes) -> tuple[bool, dict[str, Any] | None]:
    """Parse one physical line: (had_garbage, record).

    A torn fragment glued in front of a whole record (written by an older tcg,
    or by another tool) is reported as garbage and the record after it is kept.
    """
    rec = _parse_line(raw)
    if rec is not None or not raw.strip():
        return False, rec
    start = raw.find(RECORD_START, 1)
    while start != -1:
        rec = _parse_line(raw[start:])
        if rec is not None:
            return True, rec
        start = raw.find(RECORD_START, start + 1)
    return True, None


def follow_records(
    path: str | os.PathLike[str], stats: ReadStats | None = None, poll: float = 0.25, from_start: bool = True
) -> Iterator[dict[str, Any]]:
    """Like ``tail -F``: yield existing records (rotated files first), then new
    ones as they are appended, across rotations. Positioned when called (see
    tcg.jsonl.follow_lines), so nothing appended before the first ``next()`` is missed."""
    return _records(jsonl.follow_lines(os.fspath(path), poll=poll, from_start=from_start), stats)


def _records(lines: Iterator[bytes], stats: ReadStats | None) -> Iterator[dict[str, Any]]:
    for raw in lines:
        garbage, rec = _split_line(raw)
        if garbage and stats is not None:
            stats.malformed += 1
        if rec is not None:
            yield rec
