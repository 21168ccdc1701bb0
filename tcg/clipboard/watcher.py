"""The clipboard watcher: poll, detect a change by hash, mask in place, record.

One poll = one tool call when nothing changed (the content is read and hashed
with an in-memory, per-process key) — or none on X11, where XFixes owner-change
events (tcg.clipboard.x11) say nothing changed; then the clipboard is still read
every VERIFY_EVERY seconds. On a change the owner's TARGETS decide
whether it is text (images and other binary formats are left alone), then the
first ``inspect-cap`` bytes (cut on a UTF-8 boundary, widened so a secret that
starts before the cap is masked whole — see ``inspection_end``) go through the
masker. Secrets found → the clipboard is overwritten with the masked text, the
masked text's hash is remembered so the watcher's own write never re-triggers,
and a ``clipboard_masked`` event records rule ids, lengths and keyed hashes.

Robustness: every tool call has a timeout; failures are values, logged once
per problem until it clears; a write is all-or-nothing over stdin and is
skipped if the clipboard changed since it was read.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tcg.clipboard.backends import Backend, is_rewritable_text

if TYPE_CHECKING:
    from tcg.detect.engine import Detector
    from tcg.events import EventLog
    from tcg.keyhash import KeyedHasher
    from tcg.policy.load import Policy

DEFAULT_INTERVAL = 0.5
DEFAULT_CAP = 256 * 1024
OWN_WRITES_KEPT = 8
CONFIRM_TIMEOUT = 2.0  # seconds a write-back may take to become the clipboard's content
CONFIRM_STEP = 0.02
TOO_LARGE_BACKOFF = 10.0  # seconds between reads of a clipboard over the read limit
VERIFY_EVERY = 2.0  # seconds: with a change hint, still read at least this often
NUDGE = 64  # bytes: how far past a cut the watcher looks for whitespace to cut at
_SPACE = re.compile(rb"\s")

#: poll outcomes
UNCHANGED, EMPTY, OWN_WRITE, NOT_TEXT, CLEAN, MASKED = (
    "unchanged", "empty", "own-write", "not-text", "clean", "masked")
ERROR, WRITE_FAILED, RACED = "error", "write-failed", "raced"


def utf8_floor(data: bytes, n: int) -> int:
    """Largest index <= n that does not split a UTF-8 character."""
    if n >= len(data):
        return len(data)
    i = n
    while i > 0 and n - i < 3 and (data[i] & 0xC0) == 0x80:
        i -= 1
    return i


def utf8_ceil(data: bytes, n: int) -> int:
    """Smallest index >= n that does not split a UTF-8 character."""
    i = n
    while i < len(data) and i - n < 3 and (data[i] & 0xC0) == 0x80:
        i += 1
    return min(i, len(data))


def inspection_end(detector: Detector, data: bytes, cap: int, window: int) -> int:
    """Where inspection stops for ``data`` under ``cap`` (== len(data) when it fits).

    The cut is the cap floored to a UTF-8 boundary, then moved *forward* so it
    never lands inside a match: the detector scans a lookahead of ``2*window``
    bytes past the cut (``window`` bounds any single match, base64 runs
    included), and a finding that starts before the cut and ends after it pulls
    the cut to its end. A private-key block whose END line lies beyond the
    lookahead pulls it to that END line, or to the end of the content when
    there is none (fail closed). Finally the cut moves to the next whitespace
    (within NUDGE bytes) so the masker sees the same right context the
    lookahead scan saw. Secrets that *start* after the cut are not inspected;
    the event says how much was.
    """
    if len(data) <= cap:
        return len(data)
    cut = utf8_floor(data, cap)
    look_end = utf8_ceil(data, min(len(data), cut + 2 * window))
    findings = detector.find_bytes(data[:look_end], decode=True)
    blocks = getattr(detector, "block_rules", {}) or {}
    end = cut
    while True:
        moved = False
        for f in findings:
            if f.start < end < f.end:
                if f.rule_id in blocks and f.end >= look_end:
                    m = blocks[f.rule_id].search(data, f.start)
                    new = m.end() if m is not None else len(data)
                else:
                    new = f.end
                if new > end:
                    end, moved = new, True
        if end < len(data) and not _SPACE.match(data, end):
            m = _SPACE.search(data, end, min(len(data), end + NUDGE))
            if m is not None and m.start() > end:
                end, moved = m.start(), True
        if not moved or end >= len(data):
            break
    return utf8_ceil(data, min(end, len(data)))


@dataclass
class Problems:
    """Log each problem once while it lasts, and once when it clears."""

    log: Callable[[str], None]
    active: dict[str, str] = field(default_factory=dict)

    def report(self, key: str, message: str) -> None:
        if key not in self.active:
            self.active[key] = message
            self.log(message)

    def clear(self, prefix: str) -> None:
        """The problems whose key starts with ``prefix`` are over."""
        for key in [k for k in self.active if k.startswith(prefix)]:
            del self.active[key]
            self.log(f"recovered: {key}")


def stderr_log(message: str) -> None:
    print(f"tcg clipboard: {message}", file=sys.stderr, flush=True)


@dataclass
class Stats:
    polls: int = 0
    reads: int = 0
    writes: int = 0
    masked: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)


class ClipboardWatcher:
    """Polls one backend and masks secrets in place. ``poll()`` never raises."""

    def __init__(self, backend: Backend, *, policy: Policy | None = None,
                 interval: float | None = None, cap: int | None = None,
                 events: EventLog | None = None, hasher: KeyedHasher | None = None,
                 log: Callable[[str], None] = stderr_log, use_hint: bool = True):
        self.backend = backend
        self.policy = policy
        surfaces = policy.model.surfaces if policy is not None else None
        self.interval = float(interval if interval is not None else _positive(
            surfaces.clipboard_interval if surfaces else None, DEFAULT_INTERVAL))
        if not self.interval > 0:
            raise ValueError("interval must be > 0")
        self.cap = int(cap if cap is not None else _positive(
            surfaces.clipboard_inspect_cap if surfaces else None, DEFAULT_CAP))
        self._events = events
        self._hasher = hasher
        self.problems = Problems(log)
        self.log = log
        self.stats = Stats()
        # change detection: an in-memory key, so these digests mean nothing outside
        self._salt = os.urandom(32)
        self._last: bytes | None = None
        self._own: deque[bytes] = deque(maxlen=OWN_WRITES_KEPT)
        # X11: XFixes owner-change events let an idle poll skip the tool call
        self._hint = backend.change_hint() if use_hint else None
        self._last_read = 0.0
        self._backoff_until = 0.0

    # ------------------------------------------------------------------ helpers
    def _digest(self, data: bytes) -> bytes:
        return hashlib.blake2b(data, digest_size=16, key=self._salt).digest()

    @property
    def hasher(self) -> KeyedHasher:
        if self._hasher is None:
            from tcg.keyhash import KeyedHasher

            self._hasher = KeyedHasher.for_install()
        return self._hasher

    @property
    def events(self) -> EventLog:
        if self._events is None:
            from tcg.events import EventLog

            self._events = EventLog()
        return self._events

    def _emit(self, event: str, **fields: Any) -> None:
        try:
            self.events.emit(event, surface="clipboard", actor="human",
                             policy=self.policy.ref() if self.policy is not None else None,
                             backend=self.backend.name, **fields)
            self.problems.clear("event-log")
        except Exception as exc:  # noqa: BLE001 - the watcher keeps masking without its log
            self.problems.report("event-log", f"cannot write the event log: {type(exc).__name__}: "
                                              f"{getattr(exc, 'message', exc)}")

    def _count(self, outcome: str) -> str:
        self.stats.outcomes[outcome] = self.stats.outcomes.get(outcome, 0) + 1
        return outcome

    def warm_up(self) -> None:
        """Load the detector, masker and key now, so the first secret is not slower."""
        from tcg.mask import masker_for

        m = masker_for(self.policy, "strict", hasher=self.hasher)
        m.feed(b"warm-up")
        m.flush()

    # ------------------------------------------------------------------ the poll
    def poll(self) -> str:
        """Check the clipboard once; returns the outcome (never raises)."""
        self.stats.polls += 1
        try:
            return self._count(self._poll())
        except Exception as exc:  # noqa: BLE001 - never crash the loop; log once per kind
            self.problems.report(f"internal:{type(exc).__name__}",
                                 f"internal error while checking the clipboard: {type(exc).__name__}"
                                 " (set TCG_DEBUG=1 for details)")
            if os.environ.get("TCG_DEBUG", "") not in ("", "0"):
                import traceback

                traceback.print_exc()
            self._last = None
            return self._count(ERROR)

    def _poll(self) -> str:
        hinted = self._hint.changed() if self._hint is not None else None  # drained every poll
        if (hinted is False and self._last is not None
                and time.monotonic() - self._last_read < VERIFY_EVERY):
            return UNCHANGED
        if hinted is not True and time.monotonic() < self._backoff_until:
            return ERROR  # still the same oversized content, as far as anyone can tell
        self._last_read = time.monotonic()
        res = self.backend.read()
        self.stats.reads += 1
        if res.kind == "error":
            self._last = None  # whatever is there once it works again gets examined
            if res.problem == "too-large":  # do not pull 64 MB through a pipe every poll
                self._backoff_until = time.monotonic() + TOO_LARGE_BACKOFF
            self.problems.report(f"read:{res.problem}", _read_problem(self.backend, res.problem,
                                                                      res.detail))
            return ERROR
        self.problems.clear("read:")
        data = res.data if res.kind == "text" else b""
        digest = self._digest(data)
        if digest == self._last:
            return UNCHANGED
        if res.kind == "empty":
            self._last = digest
            return EMPTY
        if digest in self._own:
            self._last = digest
            return OWN_WRITE
        self._last = digest  # decided below, one way or another
        targets = self.backend.targets()
        if targets:
            if not is_rewritable_text(targets):
                return NOT_TEXT
        elif b"\x00" in data[: self.cap]:  # no TARGETS to go by: binary content is not text
            return NOT_TEXT
        return self._inspect(data, digest)

    def _inspect(self, data: bytes, digest: bytes) -> str:
        from tcg.detect.engine import load_detector
        from tcg.mask import masker_for

        masker = masker_for(self.policy, "strict", hasher=self.hasher)
        end = inspection_end(load_detector(self.policy), data, self.cap, masker.window)
        self._flag_inbound(data[:end])
        masked_head = masker.feed(data[:end]) + masker.flush()
        partial = end < len(data)
        content_h16 = None
        if partial or masker.count:
            content_h16 = self.hasher.h16(data)
        if partial:
            self._emit("clipboard_partially_inspected", decision="allow", reason="clipboard-over-cap",
                       total_bytes=len(data), inspected_bytes=end, cap=self.cap,
                       beyond_cap_bytes=max(0, end - utf8_floor(data, self.cap)),
                       content_h16=content_h16)
        if not masker.count:
            return CLEAN
        masked = masked_head + data[end:]
        del masked_head
        # Rapid changes: never overwrite something newer than what was inspected.
        again = self.backend.read()
        self.stats.reads += 1
        if again.kind != "text" or self._digest(again.data) != digest:
            self._last = None
            return RACED
        del again
        wres = self.backend.write(masked)
        self.stats.writes += 1
        if wres.problem is not None:
            self._last = None  # try again next poll: the secret is still there
            self.problems.report(f"write:{wres.problem}",
                                 f"could not write the masked clipboard ({wres.problem}: "
                                 f"{(wres.stderr.splitlines() or [''])[0][:160]}); retrying")
            return WRITE_FAILED
        own = self._digest(masked)
        self._own.append(own)
        # The next poll must recognise the write-back by its hash (OWN_WRITE);
        # anything else there is a new change.
        self._last = None
        self.stats.masked += 1
        self._emit("clipboard_masked", decision="sanitize", reason="clipboard-secret",
                   rules=sorted(masker.rules_seen), count=masker.count,
                   original_bytes=len(data), masked_bytes=len(masked), inspected_bytes=end,
                   content_h16=content_h16, masked_h16=self.hasher.h16(masked))
        del masked, data
        if not self._landed(own, digest):
            self.problems.report("write:unconfirmed", "the masked clipboard did not take effect "
                                 f"within {CONFIRM_TIMEOUT:g} s; retrying")
            return WRITE_FAILED
        self.problems.clear("write:")
        return MASKED

    def _flag_inbound(self, head: bytes) -> None:
        """The inbound gate on copied text, flag only: a clipboard about to be pasted
        into an agent that holds a prompt injection, hidden characters or an
        expensive-script flood is recorded (``inbound_flagged``) and noted on
        stderr. The content is never changed for it (docs/inbound.md)."""
        from tcg.inbound.gate import check

        outcome = check(head.decode("utf-8", "replace"), "clipboard", policy=self.policy,
                        cut_budget=False)
        if not outcome.flagged:
            return
        self._emit("inbound_flagged", **outcome.event_fields())
        rules = ", ".join(sorted(outcome.rules)) or outcome.error or "?"
        self.log(f"the copied text looks unsafe to paste into an agent ({outcome.reason()}: {rules})")

    def _landed(self, own: bytes, original: bytes) -> bool:
        """Wait until the write-back is what the clipboard holds.

        Tools that fork (xclip -i, wl-copy) return before their child has taken
        the selection, so a read right after the write may still see the
        original. Anything other than the original also counts: a newer copy
        is examined by the next poll.
        """
        deadline = time.monotonic() + CONFIRM_TIMEOUT
        while True:
            res = self.backend.read()
            self.stats.reads += 1
            if res.kind != "error" and self._digest(res.data if res.kind == "text" else b"") != original:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(CONFIRM_STEP)

    # ------------------------------------------------------------------ the loop
    def run(self, *, once: bool = False, stop: threading.Event | None = None,
            max_polls: int | None = None) -> str:
        """Poll every ``interval`` seconds until ``stop`` is set (or once)."""
        stop = stop or threading.Event()
        outcome = UNCHANGED
        while not stop.is_set():
            started = time.monotonic()
            outcome = self.poll()
            if once or (max_polls is not None and self.stats.polls >= max_polls):
                break
            stop.wait(max(0.0, self.interval - (time.monotonic() - started)))
        return outcome


def _positive(value: float | None, default: Any) -> Any:
    """The policy's setting (its compiled model), or ``default`` when unset."""
    ok = value is not None and value > 0
    return value if ok else default  # a nonsensical setting must not stop the watcher


def _read_problem(backend: Backend, problem: str | None, detail: str) -> str:
    what = {
        "display": "the display went away (or cannot be opened)",
        "timeout": "the clipboard tool did not answer in time (the owning app may hang)",
        "missing": f"{backend.tool} is no longer installed",
        "too-large": "the clipboard holds more than the read limit; left alone",
        "failed": "the clipboard tool failed",
        "os-error": "the clipboard tool could not be started",
    }.get(problem or "", f"clipboard read problem: {problem}")
    tail = f" ({detail})" if detail and problem not in ("timeout", "too-large") else ""
    return f"{what}{tail}; still watching"
