"""`tcg_shell run-argv CMD ARG…`: the entry of cmd.exe's content-reader macros.

cmd.exe has no session and no hook that sees a whole line: its DOSKEY macros
(docs/shells.md) can only prefix a command. A macro cannot gather its
arguments into one string, so the station decides on the argv as a quoted line
and runs it without a shell, masking its output.
"""

from __future__ import annotations

import sys

from tcg.errors import ExitCode, run_with_error_handler


def run_argv_main(argv: list[str]) -> int:
    if not argv:
        sys.stderr.write("usage: tcg_shell run-argv CMD [ARG...]\n")
        return ExitCode.USAGE

    def run() -> int:
        from tcg.runner.station import Station

        return int(Station().run_argv(argv))

    return run_with_error_handler(run, prog="tcg_shell")
