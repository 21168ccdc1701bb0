"""`tcg entity add|list|remove`: the project's business-entity aliases.

No command prints a registered value: ``list`` shows the alias, type, hint and
a keyed hash (HMAC under the install key: equal values compare equal, nothing
can be read back). The value to add is read from standard input by default, so
it lands in neither the shell history nor the process list.
"""

from __future__ import annotations

import json
import os
import sys

import click

from tcg.entities.locate import project_root
from tcg.entities.registry import (
    TYPES,
    RegistryError,
    Store,
    add_entity,
    remove_entity,
)


def _store(project: str | None) -> Store:
    return Store(project_root(project))


def _event(action: str, alias: str, kind: str, **fields: object) -> None:
    """Record the change (best effort: the registry change already happened)."""
    from tcg.events import EventLog, actor_from_env

    try:
        EventLog().emit("entity_registry_changed", surface="cli", actor=actor_from_env(os.environ),
                        action=action, alias=alias, type=kind, **fields)
    except Exception as exc:  # noqa: BLE001 - logging must not undo the change
        click.echo(f"tcg: warning: the security event was not recorded ({type(exc).__name__})", err=True)


def _refuse_agent(what: str) -> None:
    from tcg.events import actor_from_env

    if actor_from_env(os.environ) == "agent":
        raise RegistryError(f"an agent may not {what}",
                            hint="run it yourself in a terminal outside the agent's session")


def _compile(store: Store) -> None:
    """Compile now, so the agent's next command does not pay for it."""
    from tcg.entities.runtime import compile_store

    compile_store(store)


@click.group()
def entity() -> None:
    """Register business entities whose names the model must not see."""


@entity.command()
@click.argument("kind", metavar="TYPE", type=click.Choice(sorted(TYPES)))
@click.argument("value", required=False)
@click.option("--hint", default="", help="What the model may know about it (e.g. 'retail client').")
@click.option("--gender", type=click.Choice(["m", "f"]), help="A person's gender (else guessed; "
              "unknown: forms of both).")
@click.option("--case", "case", type=click.Choice(["auto", "capital", "any"]), default="auto",
              show_default=True, help="capital: match only with a capital first letter "
              "(auto: persons, and names that are also ordinary words).")
@click.option("--also", multiple=True, metavar="SPELLING",
              help="Another spelling to mask as the same entity (repeatable).")
@click.option("--no-decline", is_flag=True, help="Match the value as written only (no case forms).")
@click.option("--project", type=click.Path(file_okay=False), help="Project directory (default: "
              "$TCG_PROJECT, else the git work tree around the current directory).")
def add(kind: str, value: str | None, hint: str, gender: str | None, case: str,
        also: tuple[str, ...], no_decline: bool, project: str | None) -> None:
    """Register an entity; VALUE is read from stdin when omitted or '-'."""
    if value in (None, "-"):
        if sys.stdin.isatty():
            value = click.prompt("value (not echoed back)", hide_input=True)
        else:
            value = sys.stdin.readline()
    store = _store(project)
    with store.locked() as reg:
        ent, warnings = add_entity(reg, value or "", kind, hint, gender=gender, case=case,
                                   also=list(also), decline=not no_decline)
    for w in warnings:
        click.echo(f"tcg: warning: {w}", err=True)
    _compile(store)
    _event("add", ent.alias, ent.type, forms=len(ent.forms))
    click.echo(f"{ent.alias}  {ent.type}  {len(ent.forms)} forms"
               + (f"  ({', '.join(ent.sources)})" if ent.sources else ""))


@entity.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per entity.")
@click.option("--project", type=click.Path(file_okay=False), help="Project directory.")
def list_(as_json: bool, project: str | None) -> None:
    """Show the registered entities: alias, type, hint, keyed hash (never the value)."""
    from tcg.keyhash import KeyedHasher

    store = _store(project)
    reg = store.load()
    hasher = KeyedHasher.for_install()
    rows = [{"alias": e.alias, "type": e.type, "hint": e.hint, "hash": hasher.h8(e.value),
             "forms": len(e.forms), "gender": e.gender, "capital": e.capital}
            for e in reg.entities]
    if as_json:
        for row in rows:
            click.echo(json.dumps(row, ensure_ascii=False, sort_keys=True))
        return
    if not rows:
        click.echo(f"no entities registered for {store.root}")
        return
    width = max(len(r["alias"]) for r in rows)  # type: ignore[arg-type]
    for r in rows:
        click.echo(f"{r['alias']:<{width}}  {r['type']:<8}  {r['hash']}  {r['forms']:>4} forms  {r['hint']}")


@entity.command()
@click.argument("alias")
@click.option("--project", type=click.Path(file_okay=False), help="Project directory.")
def remove(alias: str, project: str | None) -> None:
    """Unregister ALIAS (its alias is retired, never given to another entity)."""
    _refuse_agent("remove a registered entity")
    store = _store(project)
    with store.locked() as reg:
        ent = remove_entity(reg, alias)
    _compile(store)
    _event("remove", ent.alias, ent.type)
    click.echo(f"removed {ent.alias}")
