"""`tcg scan-transcript [PATH…]`: count registered values and secrets in agent transcripts."""

from __future__ import annotations

import json

import click


@click.command(name="scan-transcript")
@click.argument("paths", nargs=-1, type=click.Path(exists=True))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per file.")
def scan_transcript(paths: tuple[str, ...], as_json: bool) -> None:
    """Scan Claude Code transcripts (default ~/.claude/projects/*/*.jsonl) for registered
    entity values and secrets; print counts by type and file, never values. Exit 1 when
    anything is found."""
    from tcg.entities.transcript import default_paths, expand, render, scan

    files = expand(list(paths)) if paths else default_paths()
    results = scan(files)
    if as_json:
        for r in results:
            click.echo(json.dumps({"path": r.path, "lines": r.lines, "malformed": r.malformed,
                                   "entities": r.entities, "secrets": r.secrets}, sort_keys=True))
    else:
        click.echo(render(results))
    if any(r.total for r in results):
        raise click.exceptions.Exit(1)
