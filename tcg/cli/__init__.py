"""The `tcg` command: a click group whose subcommands load lazily.

click is only used here (never on the `tcg_shell run-line` hot path). Each
command lives in its own module; COMMANDS maps the name to ``module:attribute``
so `tcg check` does not import the scanner, the MCP proxy, etc.
"""

from __future__ import annotations

import importlib
import sys

import click

from tcg import __version__
from tcg.errors import TcgError, run_with_error_handler

COMMANDS: dict[str, str] = {
    "check": "tcg.cli.check:check",
    "policy": "tcg.cli.policy:policy",
    "events": "tcg.cli.events:events",
    "doctor": "tcg.cli.doctor:doctor",
    "mask": "tcg.cli.mask:mask",
    "scan": "tcg.cli.scan:scan",
    "run": "tcg.cli.run:run",
    "shell-run-line": "tcg.cli.run:shell_run_line",
}


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


def main(argv: list[str] | None = None) -> int:
    def invoke() -> int:
        try:
            rv = cli.main(args=argv, prog_name="tcg", standalone_mode=False)
        except click.exceptions.Exit as exc:
            return int(exc.exit_code)
        except click.exceptions.Abort:
            return 130
        except click.ClickException as exc:
            exc.show()
            return 2 if isinstance(exc, click.UsageError) else int(exc.exit_code)
        return int(rv or 0)

    return run_with_error_handler(invoke, prog="tcg")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
