"""`tcg scan`: the click command (help, option checks, messages). The work is in
tcg.scan.command, which the plain forms reach without loading click (tcg/cli/__init__.py).

Exit codes (docs/cli.md): 0 clean, 1 findings, 2 error, 3 partial without findings.
"""

from __future__ import annotations

from pathlib import Path

import click

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
    run,
    write_baseline,
)
from tcg.scan.progress import Progress

__all__ = ["BASELINE_KIND", "EXIT_CLEAN", "EXIT_ERROR", "EXIT_FINDINGS", "EXIT_PARTIAL",
           "BaselineError", "Progress", "exit_code_for", "load_baseline", "scan", "write_baseline"]


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--history/--no-history", default=True, show_default=True,
              help="Also scan every blob reachable from every ref (repositories only).")
@click.option("--staged", is_flag=True,
              help="Only what the next commit adds or changes (the index against HEAD): "
                   "for pre-commit hooks.")
@click.option("--format", "fmt", type=click.Choice(list(FORMATS)), default="text",
              show_default=True, help="Output format (stdout).")
@click.option("--all-occurrences", is_flag=True,
              help="List every place each secret was seen, not only its first location.")
@click.option("--max-objects", type=click.IntRange(min=1), metavar="N",
              help="Stop after N blobs/files; the scan is then 'partial'.")
@click.option("--max-bytes", type=click.IntRange(min=1), metavar="N",
              help="Stop after N bytes of content; the scan is then 'partial'.")
@click.option("--baseline", "baseline_file", type=click.Path(path_type=Path), metavar="FILE",
              help="Ignore secrets listed in FILE (rule id + keyed hash).")
@click.option("--write-baseline", "write_file", type=click.Path(path_type=Path), metavar="FILE",
              help="Write all current secrets (plus --baseline's) to FILE as a baseline.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), metavar="N", help="Worker processes (default: all cores).")
def scan(
    paths: tuple[Path, ...],
    history: bool,
    staged: bool,
    fmt: str,
    all_occurrences: bool,
    max_objects: int | None,
    max_bytes: int | None,
    baseline_file: Path | None,
    write_file: Path | None,
    jobs: int | None,
) -> int:
    """Scan repositories (working tree + full history) and directories for secrets.

    One finding per distinct secret, at its first location, with how many places hold
    it; reports rule, path, line, commit and a keyed hash — never a value.
    Exit: 0 clean, 1 findings, 2 error, 3 partial without findings.
    """
    return run(paths, history=history, staged=staged, fmt=fmt, max_objects=max_objects,
               max_bytes=max_bytes, baseline_file=baseline_file, write_file=write_file,
               jobs=jobs, all_occurrences=all_occurrences)
