"""`tcg run -- CMD ARG…` and `tcg shell-run-line LINE`: the station agent from the
full CLI (the shell hooks use the lighter `tcg_shell run-line`)."""

from __future__ import annotations

import click

_PASS_THROUGH = {"ignore_unknown_options": True, "allow_interspersed_args": False}


@click.command(context_settings=_PASS_THROUGH)
@click.argument("argv", nargs=-1, required=True, type=click.UNPROCESSED)
def run(argv: tuple[str, ...]) -> int:
    """Evaluate CMD ARG… (an argv, no shell parsing) with the policy, then run it.

    Exit code: the command's own; 126 when the policy blocks; 128+N on signal N.
    """
    from tcg.runner.station import Station, guarded

    args = list(argv)
    if args and args[0] == "--":
        args = args[1:]
    if not args:
        raise click.UsageError("missing CMD (usage: tcg run -- CMD ARG…)")
    return guarded(lambda: Station().run_argv(args))


def _shell_run_line_command() -> click.Command:
    from tcg.cli.passthrough import PassThroughCommand
    from tcg.runner.station import run_line_main

    return PassThroughCommand(
        "shell-run-line",
        run_line_main,
        params=[
            click.Option(["--shell"], metavar="PATH",
                         help="Shell to run LINE with (default: $TCG_SHELL, the calling shell)."),
            click.Argument(["line"], nargs=-1, required=True),
        ],
        help="Alias of `tcg_shell run-line LINE`: LINE is ONE argument.",
    )


# One grammar: `tcg_shell run-line`'s own parser (tcg.runner.invocation.parse_args).
shell_run_line = _shell_run_line_command()
