"""The security-event log: the only writer of ``events.jsonl``.

One JSON object per line, appended with a single ``write`` on an ``O_APPEND``
descriptor so concurrent tcg processes never interleave records. The file is
0600 inside a 0700 directory. Records carry rule ids, counts, lengths and keyed
hashes — never a matched value. Readers skip (and count) torn lines instead of
failing, so a crash mid-write cannot hide the records after it.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tcg.errors import EventLogError
from tcg.paths import Paths, ensure_private_dir, get_paths

SCHEMA_VERSION = 1

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
    }
)

SURFACES = frozenset({"shell", "launch", "mcp", "clipboard", "scan", "cli"})


def new_session_id() -> str:
    return uuid.uuid4().hex[:16]


def current_session() -> str:
    """The session id inherited from a mediating parent, else a fresh one."""
    return os.environ.get("TCG_SESSION") or new_session_id()


def build_record(
    event: str,
    *,
    surface: str,
    actor: str = "human",
    decision: str | None = None,
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
        "decision": decision,
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
    # ensure_ascii keeps every record one physical line whatever the input.
    return (json.dumps(record, ensure_ascii=True, separators=(",", ":"), default=str) + "\n").encode(
        "ascii"
    )


class EventLog:
    """Appends records to one JSONL file. Cheap to construct; opens per write."""

    def __init__(self, path: Path | None = None, paths: Paths | None = None):
        self.path = path if path is not None else (paths or get_paths()).events_file

    def append(self, record: Mapping[str, Any]) -> None:
        data = encode_record(record)
        try:
            ensure_private_dir(self.path.parent)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        except OSError as exc:
            raise EventLogError(
                f"cannot open the event log {self.path}: {exc.strerror}",
                hint="check permissions of the tcg state directory (tcg doctor)",
            ) from exc
        try:
            written = os.write(fd, data)
            if written != len(data):
                raise EventLogError(
                    f"short write to the event log {self.path} ({written}/{len(data)} bytes)",
                    hint="is the disk full?",
                )
        finally:
            os.close(fd)

    def emit(self, event: str, **kwargs: Any) -> dict[str, Any]:
        record = build_record(event, **kwargs)
        self.append(record)
        return record


@dataclass
class ReadStats:
    malformed: int = 0


def iter_records(path: Path, stats: ReadStats | None = None) -> Iterator[dict[str, Any]]:
    """Yield parsed records; torn or non-JSON lines are skipped and counted."""
    try:
        fh = open(path, "rb")  # noqa: SIM115
    except FileNotFoundError:
        return
    with fh:
        for raw in fh:
            rec = _parse_line(raw)
            if rec is None:
                if raw.strip() and stats is not None:
                    stats.malformed += 1
                continue
            yield rec


def _parse_line(raw: bytes) -> dict[str, Any] | None:
    if not raw.endswith(b"\n"):
        return None
    try:
        obj = json.loads(raw)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def follow_records(
    path: Path, stats: ReadStats | None = None, poll: float = 0.25, from_start: bool = True
) -> Iterator[dict[str, Any]]:
    """Like ``tail -f``: yield existing records, then new ones as they are appended."""
    pos = 0
    if not from_start:
        try:
            pos = path.stat().st_size
        except FileNotFoundError:
            pos = 0
    pending = b""
    while True:
        try:
            with open(path, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                if size < pos:  # truncated/rotated
                    pos = 0
                    pending = b""
                fh.seek(pos)
                chunk = fh.read()
                pos = fh.tell()
        except FileNotFoundError:
            chunk = b""
        if chunk:
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                rec = _parse_line(line + b"\n")
                if rec is None:
                    if line.strip() and stats is not None:
                        stats.malformed += 1
                    continue
                yield rec
        else:
            time.sleep(poll)
