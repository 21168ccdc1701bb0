"""The security-event log: the only writer of ``events.jsonl``.

One JSON object per line, appended with a single ``write`` on an ``O_APPEND``
descriptor so concurrent tcg processes never interleave records. The file is
0600 inside a 0700 directory. Records carry rule ids, counts, lengths and keyed
hashes — never a matched value. Readers skip (and count) torn lines instead of
failing, so a crash mid-write cannot hide the records after it.
"""

from __future__ import annotations

import os
import time

from tcg.errors import EventLogError
from tcg.paths import ensure_private_dir, get_paths

TYPE_CHECKING = False  # typing, pathlib and dataclasses cost import time on every command
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping
    from enum import Enum
    from pathlib import Path
    from typing import Any

    from tcg.paths import Paths

SCHEMA_VERSION = 1
RECORD_START = b'{"v":'
LOCK_WAIT = 0.25  # seconds a writer waits for the append lock before writing without it

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


def actor_from_env(env: Mapping[str, str]) -> str:
    """``agent`` when the environment says so (TCG_ACTOR, or the launcher's mark
    TCG_AGENT), else ``human``: the actor of every event a surface records."""
    if env.get("TCG_ACTOR", "").strip().lower() == "agent" or env.get("TCG_AGENT"):
        return "agent"
    return "human"


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


try:
    from _json import encode_basestring_ascii as _quote
except ImportError:  # pragma: no cover - CPython always has the accelerator
    _quote = None  # type: ignore[assignment]


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


class EventLog:
    """Appends records to one JSONL file. Cheap to construct; opens per write."""

    def __init__(self, path: str | os.PathLike[str] | None = None, paths: Paths | None = None):
        self._path = os.fspath(path) if path is not None else (paths or get_paths()).events_path

    @property
    def path(self) -> Path:
        from pathlib import Path

        return Path(self._path)

    def append(self, record: Mapping[str, Any]) -> None:
        data = encode_record(record)
        try:
            ensure_private_dir(os.path.dirname(self._path))
            fd = os.open(self._path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        except OSError as exc:
            raise EventLogError(
                f"cannot open the event log {self._path}: {exc.strerror}",
                hint="check permissions of the tcg state directory (tcg doctor)",
            ) from exc
        try:
            st = os.fstat(fd)
            if os.name == "posix" and st.st_mode & 0o077:
                os.fchmod(fd, 0o600)  # created by something else: make it private again
            if _lock(fd):
                # A record torn by a crash (no trailing newline) must not swallow
                # ours: start on a fresh line. The lock (held only for this check
                # and the write, released by close) keeps a concurrent writer's
                # half-copied record from looking torn. Readers resync anyway.
                size = os.fstat(fd).st_size
                if size and _last_byte(fd, size) != b"\n":
                    data = b"\n" + data
            written = os.write(fd, data)
            if written != len(data):
                raise EventLogError(
                    f"short write to the event log {self._path} ({written}/{len(data)} bytes)",
                    hint="is the disk full?",
                )
        finally:
            os.close(fd)

    def emit(self, event: str, **kwargs: Any) -> dict[str, Any]:
        record = build_record(event, **kwargs)
        self.append(record)
        return record


def _lock(fd: int) -> bool:
    """Exclusive advisory lock on the log (POSIX); False where there is none."""
    try:
        import fcntl
    except ImportError:  # Windows: appends stay whole; readers resync torn lines
        return False
    # Bounded wait: a writer stopped (Ctrl-Z) while holding the lock must not hang
    # every other mediated command. Without the lock we only skip the repair.
    deadline = time.monotonic() + LOCK_WAIT
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.0005)
        except OSError:  # e.g. a filesystem without flock
            return False


def _last_byte(fd: int, size: int) -> bytes:
    return os.pread(fd, 1, size - 1)


class ReadStats:
    """How many torn or non-JSON lines a reader skipped."""

    __slots__ = ("malformed",)

    def __init__(self, malformed: int = 0):
        self.malformed = malformed

    def __repr__(self) -> str:
        return f"ReadStats(malformed={self.malformed})"


def iter_records(path: str | os.PathLike[str], stats: ReadStats | None = None) -> Iterator[dict[str, Any]]:
    """Yield parsed records; torn or non-JSON lines are skipped and counted."""
    try:
        fh = open(path, "rb")  # noqa: SIM115
    except FileNotFoundError:
        return
    with fh:
        for raw in fh:
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
    """Like ``tail -f``: yield existing records, then new ones as they are appended."""
    pos = 0
    if not from_start:
        try:
            pos = os.stat(path).st_size
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
                garbage, rec = _split_line(line + b"\n")
                if garbage and stats is not None:
                    stats.malformed += 1
                if rec is not None:
                    yield rec
        else:
            time.sleep(poll)
