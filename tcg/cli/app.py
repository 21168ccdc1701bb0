"""The click application behind `tcg` (imported only by `tcg.cli.main`)."""

from __future__ import annotations

import importlib

import click

from tcg import __version__
from tcg.cli import COMMANDS


class LazyGroup(click.Group):
    """Commands from tcg.cli.COMMANDS, each module imported when its command runs."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        # A missing module is a broken install or a bug: the error handler reports it
        # as an internal error (it is never hidden from --help or skipped).
        command: click.Command = getattr(importlib.import_module(module_name), attr)
        return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tcg")
def cli() -> None:
    """tcg — guard station for workstations where AI coding agents run."""
