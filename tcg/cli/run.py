"""`tcg run -- CMD ARG…` and `tcg shell-run-line LINE`: the station agent from the
full CLI (the shell hooks use the lighter `tcg_shell run-line`). Both are served by
tcg/router.py with the station's own parsers; these commands render --help only."""

from __future__ import annotations

import click

from tcg.cli.passthrough import PassThroughCommand
from tcg.runner.station import run_argv_main, run_line_main

# One grammar each: tcg.runner.station's parsers (click renders the help only).
run = PassThroughCommand(
    "run",
    run_argv_main,
    params=[click.Argument(["argv"], nargs=-1, required=True, type=click.UNPROCESSED)],
    help="Evaluate CMD ARG… (an argv, no shell parsing) with the policy, then run it.\n\n"
         "Exit code: the command's own; 126 when the policy blocks; 128+N on signal N.",
)

shell_run_line = PassThroughCommand(
    "shell-run-line",
    run_line_main,
    params=[
        click.Option(["--shell"], metavar="PATH",
                     help="Shell to run LINE with (default: $TCG_SHELL, the calling shell)."),
        click.Argument(["line"], nargs=-1, required=True),
    ],
    help="Alias of `tcg_shell run-line LINE`: LINE is ONE argument.",
)
