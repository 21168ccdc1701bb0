"""The `tcg` command: a click group whose subcommands load lazily.

click is imported only by `main` (tcg/cli/app.py), so modules under tcg.cli that
the `tcg_shell` hot path reuses (e.g. tcg.cli.check) do not pull it in. Each
command lives in its own module; COMMANDS maps the name to ``module:attribute``
so `tcg check` does not import the scanner, the MCP proxy, etc.
"""

from __future__ import annotations

import sys

from tcg.errors import ExitCode, run_with_error_handler

TYPE_CHECKING = False  # typing costs ~8 ms of import on every `tcg` command
if TYPE_CHECKING:
    from typing import Any

COMMANDS: dict[str, str] = {
    "check": "tcg.cli.check:check",
    "policy": "tcg.cli.policy:policy",
    "events": "tcg.cli.events:events",
    "doctor": "tcg.cli.doctor:doctor",
    "mask": "tcg.cli.mask:mask",
    "scan": "tcg.cli.scan:scan",
    "run": "tcg.cli.run:run",
    "shell-run-line": "tcg.cli.run:shell_run_line",
    "mcp-proxy": "tcg.cli.mcp:mcp_proxy",
    "clipboard": "tcg.cli.clipboard:clipboard",
    "launch": "tcg.cli.launch:launch",
    "hook": "tcg.cli.hook:hook",
    "agents": "tcg.cli.agents:agents",
    "entity": "tcg.cli.entity:entity",
    "verify": "tcg.cli.verify:verify",
    "scan-transcript": "tcg.cli.transcript:scan_transcript",
    "inbound": "tcg.cli.inbound:inbound",
    "trash": "tcg.cli.trash:trash",
    "restore": "tcg.cli.trash:restore",
    "gc": "tcg.cli.trash:gc",
    "approve": "tcg.cli.approve:approve",
    "check-span": "tcg.cli.check_span:check_span",
}


# Verbs whose process collects garbage less often and leaves without the interpreter's
# teardown (tcg._lean.entry): started once per repository by pre-commit hooks, CI and
# the launch gate.
SHORT_PROCESS_VERBS = frozenset({"scan"})


def __getattr__(name: str) -> Any:
    if name in ("cli", "LazyGroup"):
        from tcg.cli import app

        return getattr(app, name)
    raise AttributeError(name)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    from tcg.router import TCG_VERBS, run_verb, usage_exit, wants_help

    verb = args[0] if args else ""
    if verb in TCG_VERBS and not wants_help(args[1:]):
        # Per command check, per launch, per tool call, per filter or scan: no click. The verb's own
        # function parses its arguments (the click command only renders --help).
        if argv is None and verb in SHORT_PROCESS_VERBS:  # the process's own entry (console script)
            from tcg._lean import entry

            entry.fewer_collections()
            code = run_verb("tcg", verb, TCG_VERBS[verb], args[1:])
            entry.exit_now(code)  # returns only when stdout/stderr could not be flushed
            return code
        return run_verb("tcg", verb, TCG_VERBS[verb], args[1:])

    import click

    from tcg.cli.app import cli

    def invoke() -> int:
        try:
            rv = cli.main(args=argv, prog_name="tcg", standalone_mode=False)
        except click.exceptions.Exit as exc:
            return int(exc.exit_code)
        except click.exceptions.Abort:
            return int(ExitCode.INTERRUPTED)
        except click.ClickException as exc:
            exc.show()
            return usage_exit(verb) if isinstance(exc, click.UsageError) else int(exc.exit_code)
        return int(rv or 0)

    return run_with_error_handler(invoke, prog="tcg", command=args[0] if args else None)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
