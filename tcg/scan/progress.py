"""The one-line scan counter both `tcg scan` and the launch gate show on stderr."""

from __future__ import annotations

import sys
import time


class Progress:
    """A one-line counter on stderr: only on a terminal, only once the scan passed ~1 s."""

    def __init__(self, enabled: bool, delay: float = 1.0, every: float = 0.25,
                 label: str = "tcg scan"):
        self.enabled = enabled
        self.start = time.monotonic()
        self.delay = delay
        self.every = every
        self.label = label
        self.last = 0.0
        self.shown = False

    def __call__(self, stats: dict[str, int]) -> None:
        now = time.monotonic()
        if not self.enabled or now - self.start < self.delay or now - self.last < self.every:
            return
        self.last = now
        self.shown = True
        sys.stderr.write(
            f"\r{self.label}: {stats.get('blobs_scanned', 0)} blobs, "
            f"{stats.get('files_scanned', 0)} files, {stats.get('bytes_scanned', 0) / 1e6:.1f} MB …"
        )
        sys.stderr.flush()

    def done(self) -> None:
        if self.shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
