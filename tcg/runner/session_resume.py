"""What a session shows after its masking process was replaced.

A masking process that dies (killed, crashed) takes with it what it held:
``k=AKIAQWER`` waiting for the rest of the key. Its replacement starts with no
context, so the rest of that key, arriving after the restart, would look like
ordinary text and be shown. Since the dead process's held bytes are lost (the
user is told output was withheld), the replacement's output is withheld too
until the line that was being written ends, or until ``WITHHOLD_MAX`` bytes
have passed: a secret that began before the restart ends within the masker's
hold window (its longest match), which this bound covers, and a single-line
secret ends with its line. (A key block that spans many lines is not covered:
docs/masking.md.)
"""

from __future__ import annotations

#: bytes withheld at most after a restart: at least the masker's hold window for the
#: built-in rules (the longest match plus context; a test checks the bound)
WITHHOLD_MAX = 8192


class Withhold:
    """Drops output up to and including the next line feed, at most ``limit`` bytes."""

    def __init__(self, limit: int = WITHHOLD_MAX) -> None:
        self.left = limit

    def take(self, data: bytes) -> tuple[bytes, Withhold | None]:
        """The part of ``data`` that may be shown, and this object while it still
        withholds (None once the line has ended or the bound has passed)."""
        i = data.find(b"\n", 0, self.left)
        if i >= 0:
            self.left = 0
            return data[i + 1 :], None
        n = min(len(data), self.left)
        self.left -= n
        return data[n:], (self if self.left > 0 else None)
