"""`tcg verify`: canary entities and a canary secret through the real entry points."""

from __future__ import annotations

import click


@click.command()
def verify() -> None:
    """Prove entity aliasing end to end (PASS/FAIL table; exit 1 on any FAIL)."""
    from tcg.entities.verify import render, run

    checks = run()
    click.echo(render(checks))
    if not all(c.ok for c in checks):
        raise click.exceptions.Exit(1)
