"""`tcg events`: read the security-event log."""

from __future__ import annotations

import json
import time
from typing import Any

import click

from tcg.events import ReadStats, follow_records, iter_records
from tcg.paths import get_paths


@click.command()
@click.option("--follow", "-f", is_flag=True, help="Keep printing new events as they arrive.")
@click.option("--type", "types", multiple=True, metavar="T", help="Only events of type T (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def events(follow: bool, types: tuple[str, ...], as_json: bool) -> None:
    """Print security events (oldest first). Malformed lines are skipped and reported."""
    path = get_paths().events_file
    stats = ReadStats()
    reported = 0

    def report() -> None:
        nonlocal reported
        if stats.malformed > reported:
            click.echo(
                f"tcg: skipped {stats.malformed - reported} malformed line(s) in {path}", err=True
            )
            reported = stats.malformed

    source = follow_records(path, stats) if follow else iter_records(path, stats)
    for rec in source:
        if follow:
            report()  # a tail never ends: say so as it happens
        if types and rec.get("event") not in types:
            continue
        click.echo(json.dumps(rec, sort_keys=True) if as_json else render(rec))
    report()


def render(rec: dict[str, Any]) -> str:
    """One human-readable line per event."""
    ts = rec.get("ts")
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts)) if isinstance(ts, (int, float)) else "?"
    parts = [when, str(rec.get("event", "?")), f"{rec.get('surface')}/{rec.get('actor')}"]
    if rec.get("decision"):
        parts.append(f"{rec['decision']}:{rec.get('reason')}")
    if rec.get("rules"):
        parts.append("rules=" + ",".join(str(r) for r in rec["rules"]))
    for key in ("command", "exit_code", "agent", "status", "counts", "txid", "channel"):
        if key in rec and rec[key] is not None:
            parts.append(f"{key}={json.dumps(rec[key])}")
    return "  ".join(parts)
