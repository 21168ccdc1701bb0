"""Byte tap for tests: ``python tap.py LOG -- CMD ARG…`` runs CMD and relays stdio
unchanged, appending every byte CMD writes to stdout (what the MCP client
receives) to LOG, so a leak check can grep all of it."""

from __future__ import annotations

import os
import subprocess
import sys
import threading


def main() -> int:
    log_path, sep, *argv = sys.argv[1:]
    assert sep == "--"
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)

    def up() -> None:
        while chunk := os.read(0, 1 << 16):
            try:
                proc.stdin.write(chunk)
            except OSError:
                break
        proc.stdin.close()

    threading.Thread(target=up, daemon=True).start()
    with open(log_path, "ab", buffering=0) as log:
        while chunk := os.read(proc.stdout.fileno(), 1 << 16):
            log.write(chunk)
            try:
                os.write(1, chunk)
            except OSError:
                break
    return proc.wait()


if __name__ == "__main__":
    sys.exit(main())
