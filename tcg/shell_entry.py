"""`tcg_shell`: the per-command entry point the shell hooks call.

This is the hot path — every mediated command line starts a Python process
here — so it never imports click, pexpect or anything a decision and a run do
not need. Subcommands are dispatched by hand and imported lazily.
"""

from __future__ import annotations

import sys

USAGE = """usage: tcg_shell init [zsh|bash|powershell|pwsh|cmd]
       tcg_shell session [--login] [SHELL]  (your shell on a terminal tcg masks and mediates)
       tcg_shell run-line LINE
       tcg_shell check [--actor human|agent] [--json] LINE
       tcg_shell run-argv CMD [ARG...]    (cmd.exe's reader macros; see docs/shells.md)
"""

SUBCOMMANDS = {
    "init": ("tcg.shells.generator", "init_main"),
    "session": ("tcg.runner.session", "session_main"),
    "run-line": ("tcg.runner.station", "run_line_main"),
    "check": ("tcg.cli.check", "check_main"),
    "run-argv": ("tcg.shells.readers", "run_argv_main"),
}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        sys.stderr.write(USAGE)
        return 2
    if args[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return 0
    target = SUBCOMMANDS.get(args[0])
    if target is None:
        sys.stderr.write(f"tcg_shell: unknown subcommand {args[0]!r}\n{USAGE}")
        return 2
    import gc

    # Start-up allocates tens of thousands of objects (imports) and frees few:
    # generational collections during it are pure cost (~1-2 ms per command).
    # The station turns the collector back on before it runs the command
    # (Station.mediate), whose output loop may run for hours.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _dispatch(args, target)
    finally:
        if collecting:  # in-process callers (tests) get their collector back
            gc.enable()


def _dispatch(args: list[str], target: tuple[str, str]) -> int:
    from tcg.errors import TcgError, run_with_error_handler

    def invoke() -> int:
        try:
            # __import__ + sys.modules: what importlib.import_module does, minus ~0.4 ms
            # of importing importlib itself
            __import__(target[0])
            module = sys.modules[target[0]]
        except ModuleNotFoundError as exc:
            if exc.name != target[0]:
                raise
            raise TcgError(
                f"`tcg_shell {args[0]}` is not available in this build",
                hint="update or reinstall tcg (tcg doctor checks the install)",
            ) from exc
        return int(getattr(module, target[1])(args[1:]) or 0)

    # Subcommands handle their own fail-closed paths; this only turns an escaped
    # TcgError into "message + hint" (no traceback unless TCG_DEBUG=1).
    return run_with_error_handler(invoke, prog="tcg_shell")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
