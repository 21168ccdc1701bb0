"""The click-free router: which function serves a verb, and how its errors exit.

Both entries use it. `tcg_shell` (the per-command entry the shell hooks and agent
prefixes call) serves only these verbs; `tcg` serves its hot verbs (``TCG_VERBS``)
here too and everything else, plus every ``--help``, through click
(tcg/cli/app.py). A verb's function takes the arguments after the verb and parses
them itself, so a verb has one grammar whichever entry reached it; click only
renders help around it. Every call ends in the one error handler
(tcg.errors.run_with_error_handler) with the verb's internal-error code.

Importing this module imports nothing but tcg.errors: a verb's module is imported
when the verb runs.
"""

from __future__ import annotations

import sys

from tcg.errors import ExitCode, run_with_error_handler

# verb -> (module, function taking the arguments after the verb, exit code of an
# unexpected error). A mediating verb fails closed: its crash reads as "blocked".
SHELL_VERBS: dict[str, tuple[str, str, int]] = {
    "init": ("tcg.shells.generator", "init_main", ExitCode.INTERNAL),
    "session": ("tcg.runner.session", "session_main", ExitCode.INTERNAL),
    "run-line": ("tcg.runner.station", "run_line_main", ExitCode.BLOCKED),
    "check": ("tcg.cli.check", "check_main", ExitCode.BLOCKED_CHECK),
    "run-argv": ("tcg.shells.readers", "run_argv_main", ExitCode.BLOCKED),
    "mask-server": ("tcg.runner.maskserver_cmd", "main", ExitCode.INTERNAL),
}

# The `tcg` verbs served without click (per tool call, per launch, per command check,
# per filter, per scan, per mediated argv): each parses its own arguments.
TCG_VERBS: dict[str, tuple[str, str, int]] = {
    "check": SHELL_VERBS["check"],
    "shell-run-line": SHELL_VERBS["run-line"],
    "run": ("tcg.runner.station", "run_argv_main", ExitCode.BLOCKED),
    "launch": ("tcg.launcher.launch", "main", ExitCode.BLOCKED),
    "hook": ("tcg.agents.entry", "main", ExitCode.INTERNAL),
    # filters and scanners started per pipe, per commit, per repository
    "mask": ("tcg.mask.filter", "mask_main", ExitCode.INTERNAL),
    "scan": ("tcg.scan.command", "scan_main", ExitCode.INTERNAL),
}

# Verbs whose 2 means BLOCK: a usage error there exits 1 (docs/cli.md), whichever
# parser (the verb's own or click's) found it.
USAGE_EXIT: dict[str, int] = {"check": ExitCode.ERROR, "check-span": ExitCode.ERROR}


def usage_exit(verb: str) -> int:
    """The exit code of a usage error of ``verb``."""
    return USAGE_EXIT.get(verb, ExitCode.USAGE)


def wants_help(args: list[str]) -> bool:
    """True when the first argument after the verb asks for help (click renders it)."""
    return bool(args[:1]) and args[0] in ("-h", "--help")


def run_verb(prog: str, verb: str, target: tuple[str, str, int], args: list[str]) -> int:
    """Import ``target``'s module, call its function with ``args``, map what escapes."""
    module_name, function, internal = target

    def invoke() -> int:
        # __import__ + sys.modules: what importlib.import_module does, minus importing
        # importlib itself. A missing module is a broken install: an internal error.
        __import__(module_name)
        return int(getattr(sys.modules[module_name], function)(args) or 0)

    return run_with_error_handler(invoke, prog=prog, command=verb, internal=internal)
