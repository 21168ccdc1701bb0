"""`tcg policy show|check|path`."""

from __future__ import annotations

import json
from pathlib import Path

import click

from tcg.errors import PolicyError
from tcg.paths import get_paths
from tcg.policy.load import default_layer, load_policy, merge_layers, read_layer, user_policy_path


@click.group()
def policy() -> None:
    """Show, check or locate the effective policy."""


@policy.command()
@click.option("--json", "as_json", is_flag=True, help="Print the effective policy as JSON.")
def show(as_json: bool) -> None:
    """Print the effective policy with its snapshot id and fingerprint."""
    pol = load_policy()
    if as_json:
        click.echo(
            json.dumps(
                {
                    "snapshot": pol.snapshot_id,
                    "fingerprint": pol.fingerprint,
                    "sources": list(pol.sources),
                    "notices": list(pol.notices),
                    "policy": pol.data,
                },
                indent=2,
                sort_keys=True,
            )
        )
        return
    click.echo(f"snapshot:    {pol.snapshot_id}")
    click.echo(f"fingerprint: {pol.fingerprint}")
    click.echo("sources:     " + ", ".join(pol.sources))
    for notice in pol.notices:
        click.echo(f"notice:      {notice}")
    click.echo("")
    click.echo(_to_toml(pol.data))


@policy.command()
@click.argument("file", required=False, type=click.Path(path_type=Path))
def check(file: Path | None) -> None:
    """Validate FILE (default: the effective policy). Exit 0 valid, 2 invalid."""
    if file is not None:
        layer = read_layer(file, "user")
        pol = merge_layers([default_layer(), layer])
    else:
        pol = load_policy()
    click.echo(f"ok: {pol.snapshot_id}")
    for notice in pol.notices:
        click.echo(f"notice: {notice}")


@policy.command()
def path() -> None:
    """Print where the user policy file lives (it may not exist yet)."""
    p, kind = user_policy_path(get_paths())
    click.echo(str(p))
    if kind == "env":
        click.echo("(from TCG_POLICY)", err=True)


def _to_toml(data: dict, prefix: str = "") -> str:
    """A readable TOML-ish rendering for `policy show` (json.dumps per value)."""
    lines: list[str] = []
    scalars = {k: v for k, v in data.items() if not isinstance(v, dict) and not _is_table_list(v)}
    if scalars:
        if prefix:
            lines.append(f"[{prefix}]")
        for k, v in scalars.items():
            lines.append(f"{k} = {json.dumps(v)}")
        lines.append("")
    for k, v in data.items():
        if isinstance(v, dict):
            lines.append(_to_toml(v, f"{prefix}.{k}" if prefix else k))
        elif _is_table_list(v):
            for entry in v:
                lines.append(f"[[{prefix + '.' if prefix else ''}{k}]]")
                for ek, ev in entry.items():
                    lines.append(f"{ek} = {json.dumps(ev)}")
                lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _is_table_list(v: object) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(e, dict) for e in v)


__all__ = ["policy", "PolicyError"]
