"""Clipboard watcher (docs/clipboard.md): ``tcg clipboard watch``.

backends.py — one class per platform tool (content over stdio only, timeouts);
detect.py — which backend this machine has, with install hints;
watcher.py — the poll loop: hash-based change detection, inspection cap, masking;
service.py — background-run files per platform (systemd, launchd, Task Scheduler).
docs/clipboard.md describes the behaviour and its limits.
"""

from __future__ import annotations
