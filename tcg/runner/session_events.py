"""The session station's event writer: one background thread.

A verdict goes back to the shell before its ``command_decision`` event is
written, so neither the masked copy of the line (the strict masker) nor the
append to the log delays the command. The thread also loads the policy engine
and the masker shortly after the session starts, so the first line typed does
not wait for those imports. At the end of the session ``close`` writes what is
still queued (bounded wait): a decision is never silently left unrecorded.
"""

from __future__ import annotations

import time

from tcg._lean.queues import Empty, SimpleQueue
from tcg._lean.threads import allocate_lock, start_new_thread
from tcg.runner.station import Station

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

WARMUP_DELAY = 0.5  # seconds after start: the first prompt is out by then
CLOSE_WAIT = 10.0
RECORD_DELAY = 0.05  # seconds between a verdict and the writing of its event


class EventRecorder:
    """Callable ``(line, verdict, policy, actor, fields)``: queue one event."""

    def __init__(self, env: Mapping[str, str], *, warmup_delay: float | None = WARMUP_DELAY):
        self.station = Station(dict(env))
        self._jobs: SimpleQueue[Any] = SimpleQueue()
        self._done = allocate_lock()
        self._done.acquire()
        self._warmup = warmup_delay
        start_new_thread(self._run, ())

    def __call__(self, line: str, verdict: Any, policy: Any, actor: str, fields: dict[str, Any]) -> None:
        self._jobs.put((line, verdict, policy, actor, fields))

    def close(self, wait: float = CLOSE_WAIT) -> bool:
        """Write what is queued, then stop; False when that took longer than ``wait``."""
        self._jobs.put(None)
        ok = self._done.acquire(timeout=wait)
        return bool(ok)

    def _run(self) -> None:
        try:
            if self._warmup is not None:
                try:
                    job = self._jobs.get(timeout=self._warmup)
                except Empty:
                    job = ()
                    _warm_up(self.station)
                if job is None:
                    return
                if job:
                    self._write(job)
            while True:
                job = self._jobs.get()
                if job is None:
                    return
                # Let the command the verdict was for start first: its output goes
                # out while this thread sleeps instead of waiting for the GIL.
                time.sleep(RECORD_DELAY)
                self._write(job)
        finally:
            self._done.release()

    def _write(self, job: tuple[Any, ...]) -> None:
        line, verdict, policy, actor, fields = job
        st = self.station
        st.policy = policy
        st.actor = actor
        st.record(line, verdict, **fields)  # never raises; warns once on failure


def _warm_up(station: Station) -> None:
    """Import and build what deciding and recording need (the first line then
    costs what every other line costs). Failures are left for the real call,
    which fails closed and reports them."""
    start = time.monotonic()
    try:
        verdict = station.decide("true")
        station.masked_line("true")
        del verdict
    except Exception:  # noqa: BLE001 - only a warm-up
        pass
    station.warmup_seconds = time.monotonic() - start  # type: ignore[attr-defined]
