"""Start-up and exit of a short-lived tcg process (see tcg._lean): the two process-wide
shortcuts a process entry may take, both public interpreter APIs, kept here so there is
one place to read them and one to turn them off.

* ``fewer_collections()``: the cyclic garbage collector runs every 700 new container
  objects by default; loading the policy, the scanner and the detector's rules allocates
  tens of thousands, so a one-commit `tcg scan` ran ~15 collections that found next to
  nothing (~2 ms of CPU on this machine, A/B interleaved). Collection stays on, every
  ``START_GEN0_THRESHOLD`` allocations: the objects the scan builds are long-lived, and
  cyclic garbage is still collected.
* ``exit_now(code)``: leave without the interpreter's teardown. At exit CPython frees
  every loaded module, its objects and the interned strings; after `tcg scan` (the
  scanner, the detector's rules, the policy) that costs 3-6 ms of CPU, a tenth of a
  one-commit scan. Nothing on that path needs the teardown: reports are written to
  stdout/stderr (flushed here), events are appended with os.write on a descriptor closed
  right after (tcg.jsonl), caches are written atomically and closed (tcg.signed), git
  children are waited for, and no atexit work is registered there. When a stream cannot
  be flushed (a closed pipe), this returns and the caller takes the ordinary way out, so
  the interpreter reports the failure and exits as it always did.

Only a process's own entry calls these (tcg.cli.main without arguments), never a
function tests or other commands call in-process; tests/scan/test_startup.py holds the
command's output, exit code and event equal with and without them.
"""

from __future__ import annotations

import os
import sys

START_GEN0_THRESHOLD = 10_000


def fewer_collections() -> None:
    """Collect cyclic garbage every START_GEN0_THRESHOLD allocations, not every 700."""
    import gc  # built into the interpreter: no import cost

    _gen0, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(START_GEN0_THRESHOLD, gen1, gen2)


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
