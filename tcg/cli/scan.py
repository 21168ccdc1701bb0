"""`tcg scan`: the --help of the verb. `tcg scan` is served by tcg/router.py
(tcg.scan.command.scan_main parses its own arguments: one grammar); this command
declares the parameters for --help only.

Exit codes (docs/cli.md): 0 clean, 1 findings, 2 error, 3 partial without findings.
"""

from __future__ import annotations

import click

from tcg.cli.passthrough import PassThroughCommand
from tcg.scan.command import (
    BASELINE_KIND,
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDINGS,
    EXIT_PARTIAL,
    FORMATS,
    BaselineError,
    exit_code_for,
    load_baseline,
    scan_main,
    write_baseline,
)
from tcg.scan.progress import Progress

__all__ = ["BASELINE_KIND", "EXIT_CLEAN", "EXIT_ERROR", "EXIT_FINDINGS", "EXIT_PARTIAL",
           "BaselineError", "Progress", "exit_code_for", "load_baseline", "scan", "write_baseline"]


scan = PassThroughCommand(
    "scan",
    scan_main,
    params=[
        click.Argument(["paths"], nargs=-1),
        click.Option(["--history/--no-history"], default=True, show_default=True,
                     help="Also scan every blob reachable from every ref (repositories only)."),
        click.Option(["--staged"], is_flag=True,
                     help="Only what the next commit adds or changes (the index against HEAD): "
                          "for pre-commit hooks."),
        click.Option(["--format", "fmt"], type=click.Choice(list(FORMATS)), default="text",
                     show_default=True, help="Output format (stdout)."),
        click.Option(["--all-occurrences"], is_flag=True,
                     help="List every place each secret was seen, not only its first location."),
        click.Option(["--max-objects"], type=click.IntRange(min=1), metavar="N",
                     help="Stop after N blobs/files; the scan is then 'partial'."),
        click.Option(["--max-bytes"], type=click.IntRange(min=1), metavar="N",
                     help="Stop after N bytes of content; the scan is then 'partial'."),
        click.Option(["--baseline", "baseline_file"], metavar="FILE",
                     help="Ignore secrets listed in FILE (rule id + keyed hash)."),
        click.Option(["--write-baseline", "write_file"], metavar="FILE",
                     help="Write all current secrets (plus --baseline's) to FILE as a baseline."),
        click.Option(["--jobs", "-j"], type=click.IntRange(min=1), metavar="N",
                     help="Worker processes (default: all cores)."),
    ],
    help="Scan repositories (working tree + full history) and directories for secrets.\n\n"
         "One finding per distinct secret, at its first location, with how many places hold "
         "it; reports rule, path, line, commit and a keyed hash — never a value. "
         "Exit: 0 clean, 1 findings, 2 error, 3 partial without findings.",
)
