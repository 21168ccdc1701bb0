"""The click application behind `tcg` (imported only by `tcg.cli.main`)."""

from __future__ import annotations

import importlib

import click

from tcg import __version__
from tcg.cli import COMMANDS
from tcg.errors import TcgError


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        # Only commands whose module is present (parts land one issue at a time).
        import importlib.util  # help only: keep it off the per-command path

        return sorted(
            name for name, target in COMMANDS.items()
            if importlib.util.find_spec(target.split(":")[0]) is not None
        )

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise  # a real bug inside the command: the error handler reports it
            raise TcgError(
                f"`tcg {cmd_name}` is not available in this build",
                hint="update or reinstall tcg (tcg doctor checks the install)",
            ) from exc
        return getattr(module, attr)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tcg")
def cli() -> None:
    """tcg — guard station for workstations where AI coding agents run."""
