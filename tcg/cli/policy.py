"""`tcg policy show|check|path`."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

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
        # A repository file is checked as one: what it may not loosen shows as notices.
        kind = "repo" if file.parent.name == ".tcg" else "user"
        pol = merge_layers([default_layer(), read_layer(file, kind)])
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


def _to_toml(data: dict[str, Any], prefix: str = "") -> str:
    """Render the effective policy as TOML (tomllib reads it back to the same data)."""
    lines: list[str] = []
    scalars = {k: v for k, v in data.items() if not isinstance(v, dict) and not _is_table_list(v)}
    if scalars:
        if prefix:
            lines.append(f"[{prefix}]")
        for k, v in scalars.items():
            lines.append(f"{_toml_key(k)} = {_toml_value(v)}")
        lines.append("")
    for k, v in data.items():
        name = f"{prefix}.{_toml_key(k)}" if prefix else _toml_key(k)
        if isinstance(v, dict):
            lines.append(_to_toml(v, name))
        elif _is_table_list(v):
            for entry in v:
                lines.append(f"[[{name}]]")
                for ek, ev in entry.items():
                    lines.append(f"{_toml_key(ek)} = {_toml_value(ev)}")
                lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else _toml_value(key)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        # JSON string escapes are valid TOML basic-string escapes (not surrogate pairs,
        # hence ensure_ascii=False; TOML also wants DEL escaped).
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot render {type(value).__name__} as TOML")


def _is_table_list(v: object) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(e, dict) for e in v)


__all__ = ["policy", "PolicyError"]
