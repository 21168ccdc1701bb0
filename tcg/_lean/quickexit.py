"""Leave the process without the interpreter's teardown (see tcg._lean).

At exit CPython frees every loaded module, its objects and the interned
strings; after `tcg scan` (the scanner, the detector's rules, the policy) that
costs 3-6 ms of CPU on this machine, a tenth of a one-commit scan. Nothing on
that path needs the teardown: reports are written to stdout/stderr (flushed
here), events are appended with os.write on a descriptor closed right after
(tcg.jsonl), caches are written atomically and closed (tcg.signed), git
children are waited for, and no atexit work is registered there.

Only a process's own entry calls this, never a function tests or other
commands call in-process. When a stream cannot be flushed (a closed pipe),
this returns and the caller takes the ordinary way out, so the interpreter
reports the failure and exits as it always did.
"""

from __future__ import annotations

import os
import sys


def exit_now(code: int) -> None:
    """Flush stdout and stderr, then end the process with ``code`` (os._exit).
    Returns (without exiting) only when a flush failed."""
    for stream in (sys.stdout, sys.stderr):
        if stream is None:
            continue
        try:
            stream.flush()
        except (OSError, ValueError):
            return
    os._exit(code)
