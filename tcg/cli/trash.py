"""`tcg trash -- PATH…`, `tcg trash list`, `tcg restore TXID [--to DIR]`, `tcg gc`.

`tcg trash` is the explicit, reversible delete the guard's hints point to: the
shell expands ``*.log`` or ``"$DIR"`` before tcg sees them, so every name is
known and moved into one transaction (same filesystem: a rename; another one:
a verified copy, then the original is removed). docs/guard.md has the layout.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import click

from tcg.errors import TcgError


def _trash() -> Any:
    from tcg.guard.trash import Trash

    return Trash.for_install()


def _emit(event: str, **fields: Any) -> None:
    """Record a trash event; a log failure is a warning, never a failed command."""
    from tcg.events import EventLog, actor_from_env

    try:
        EventLog().emit(event, surface="cli", actor=actor_from_env(os.environ), **fields)
    except TcgError as exc:
        click.echo(f"tcg: warning: the security event was not recorded: {exc.message}", err=True)


class _RawArgs(click.Command):
    """Keeps the arguments as typed: `tcg trash -- list` trashes a file called
    list, `tcg trash list` lists (click would drop the ``--``)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["tcg.raw"] = list(args)
        return super().parse_args(ctx, args)


@click.command("trash", cls=_RawArgs, context_settings={"ignore_unknown_options": True,
                                                         "help_option_names": ["-h", "--help"]})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def trash(ctx: click.Context, args: tuple[str, ...]) -> int:
    """Move PATH… into the trash (`tcg trash -- PATH…`), or list it (`tcg trash list [--json]`).

    Exit 0; 1 when a path is missing or refused (the others are still moved).
    """
    raw: list[str] = ctx.meta.get("tcg.raw", list(args))
    if raw[:1] == ["list"]:
        extra = raw[1:]
        if extra not in ([], ["--json"]):
            raise click.UsageError("tcg trash list takes only --json")
        return _list(bool(extra))
    paths = raw[1:] if raw[:1] == ["--"] else raw
    if not paths:
        raise click.UsageError("give the paths to move: tcg trash -- PATH…")
    return _move(paths)


def _move(paths: list[str]) -> int:
    from tcg.guard import fsops
    from tcg.guard.trash import copy_budget
    from tcg.keyhash import KeyedHasher
    from tcg.policy.load import load_policy

    policy = load_policy()
    cwd = os.getcwd()
    home = os.path.realpath(os.path.expanduser("~"))
    store = _trash()
    store.recover()
    tx = store.begin(cwd=cwd, actor=_actor(), command_hash=KeyedHasher.for_install().h16("\0".join(paths)),
                     copy_budget=copy_budget(policy))
    status = 0
    root = os.path.realpath(os.path.dirname(store.root))
    for p in paths:
        path = os.path.normpath(os.path.join(cwd, p))
        real = os.path.realpath(os.path.dirname(path))
        why = None
        if path in ("/", home) or cwd == path or cwd.startswith(path.rstrip("/") + "/"):
            why = "it is /, your home directory or the working directory (or above it)"
        elif real == root or real.startswith(root + "/") or root.startswith(os.path.realpath(path) + "/"):
            why = "it is tcg's own state"
        elif os.path.ismount(path):
            why = "it is a mount point"
        if why:
            click.echo(f"tcg: refusing {p}: {why}", err=True)
            status = 1
            continue
        if not tx.add(path, kind="move", placeholder=False):
            click.echo(f"tcg: {p}: no such file or directory", err=True)
            status = 1
    if not tx:
        return status or 1
    tx.execute()
    for e in tx.entries:
        if e["method"] == "copy" and os.path.lexists(e["path"]):
            fsops.remove_tree(e["path"])  # verified copy in the trash: the original may go
    tx.finish()
    moved = len(tx.entries)
    _emit("guard_relocate", decision="relocate", reason="delete-relocate", txid=tx.txid, entries=moved,
          dirs=sum(1 for e in tx.entries if e["type"] == "dir"),
          bytes=sum(int(e["size"] or 0) for e in tx.entries),
          renamed=sum(1 for e in tx.entries if e["method"] == "rename"),
          copied=sum(1 for e in tx.entries if e["method"] == "copy"))
    click.echo(f"moved {moved} entr{'y' if moved == 1 else 'ies'} to the trash: {tx.txid}")
    click.echo(f"restore with: tcg restore {tx.txid}")
    return status


def _actor() -> str:
    from tcg.events import actor_from_env

    return actor_from_env(os.environ)


def _list(as_json: bool) -> int:
    from tcg.guard.restore import rows

    items = rows(_trash())
    if as_json:
        for r in items:
            click.echo(json.dumps(r, sort_keys=True))
        return 0
    if not items:
        click.echo("the trash is empty")
        return 0
    for r in items:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(r["created"])) if r.get("created") else "?"
        head = f"{r['txid']}  {when}  {r['state']}"
        if r.get("actor"):
            head += f"  ({r['actor']})"
        click.echo(head + (f"  in {r['cwd']}" if r.get("cwd") else ""))
        for e in r["entries"][:20]:
            size = f"  {e['size']} bytes" if isinstance(e.get("size"), int) else ""
            kind = "/" if e.get("type") == "dir" else ""
            note = "  (copy of an overwritten file)" if e.get("role") == "overwrite" else ""
            click.echo(f"    {_printable(e['path'])}{kind}{size}{note}")
        if len(r["entries"]) > 20:
            click.echo(f"    … and {len(r['entries']) - 20} more")
        for g in r["git"]:
            name = f" {g['name']}" if g.get("name") else ""
            click.echo(f"    git {g['kind']}{name} -> {g['ref']} ({str(g['sha'])[:12]})")
    return 0


def _printable(text: str) -> str:
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 256 else "?" for c in text)


@click.command("restore")
@click.argument("txid")
@click.option("--to", "to", metavar="DIR", default=None,
              help="Restore under DIR (same relative layout) instead of the original places.")
def restore(txid: str, to: str | None) -> int:
    """Put back what transaction TXID holds (`tcg trash list` shows the ids).

    Never overwrites: an existing destination (file, directory or dangling symlink)
    refuses the restore. Exit 0; 1 when refused.
    """
    from tcg.guard.restore import restore as do_restore

    done = do_restore(_trash(), txid, to)
    if done.already:
        click.echo(f"{txid} was already restored; nothing to do")
        return 0
    _emit("guard_restore", decision=None, reason=None, txid=txid, entries=len(done.paths), bytes=done.bytes,
          refs=len(done.git), elsewhere=to is not None)
    if done.paths or not done.git:
        click.echo(f"restored {len(done.paths)} entr{'y' if len(done.paths) == 1 else 'ies'} from {txid}"
                   + (f" under {to}" if to else ""))
    else:
        click.echo(f"restored {len(done.git)} git snapshot{'s' if len(done.git) > 1 else ''} from {txid}")
    for line in done.git:
        click.echo(f"  git: {line}")
    if done.skipped_git:
        click.echo(f"  {done.skipped_git} git snapshot(s) not restored with --to; run `tcg restore {txid}` "
                   "in the repository")
    return 0


@click.command("gc")
@click.option("--older-than", "older_than", default="30d", metavar="AGE", show_default=True,
              help="Transactions older than AGE (s, m, h, d, w).")
@click.option("--apply", "apply", is_flag=True, help="Delete them for good (default: only list them).")
def gc(older_than: str, apply: bool) -> int:
    """Expire old trash transactions. A dry run unless --apply. Exit 0; 1 on error."""
    from tcg.guard.restore import expired, parse_age, purge

    store = _trash()
    items = expired(store, parse_age(older_than))
    if not items:
        click.echo(f"nothing in the trash is older than {older_than}")
        return 0
    freed = 0
    for txid, manifest in items:
        entries = len(manifest.get("entries", [])) if manifest else 0
        refs = len(manifest.get("git", [])) if manifest else 0
        if apply:
            freed += purge(store, txid, manifest)
            click.echo(f"deleted {txid} ({entries} entries, {refs} git refs)")
        else:
            click.echo(f"would delete {txid} ({entries} entries, {refs} git refs)")
    if apply:
        _emit("guard_gc", decision=None, reason=None, transactions=len(items), bytes=freed)
    else:
        click.echo("dry run: nothing deleted (add --apply)")
    return 0
