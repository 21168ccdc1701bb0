"""`tcg events`: read the security-event log."""

from __future__ import annotations

import json

import click

from tcg.events import ReadStats, follow_records, iter_records
from tcg.paths import get_paths


@click.command()
@click.option("--follow", "-f", is_flag=True, help="Keep printing new events as they arrive.")
@click.option("--type", "types", multiple=True, help="Only events of this type (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def events(follow: bool, types: tuple[str, ...], as_json: bool) -> None:
    """Print security events (newest last)."""
    path = get_paths().events_file
    stats = ReadStats()
    source = follow_records(path, stats) if follow else iter_records(path, stats)
    for rec in source:
        if types and rec.get("event") not in types:
            continue
        click.echo(json.dumps(rec, sort_keys=True) if as_json else _render(rec))
    if stats.malformed:
        click.echo(f"tcg: skipped {stats.malformed} malformed line(s) in {path}", err=True)


def _render(rec: dict) -> str:
    import time

    ts = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(rec.get("ts", 0)))
    parts = [ts, rec.get("event", "?"), f"{rec.get('surface')}/{rec.get('actor')}"]
    if rec.get("decision"):
        parts.append(f"{rec['decision']}:{rec.get('reason')}")
    if rec.get("rules"):
        parts.append("rules=" + ",".join(rec["rules"]))
    for key in ("command", "exit_code", "agent", "status", "counts"):
        if key in rec and rec[key] is not None:
            parts.append(f"{key}={json.dumps(rec[key])}")
    return "  ".join(str(p) for p in parts)
