"""`tcg_shell`: the per-command entry point the shell hooks call.

This is the hot path — every mediated command line starts a Python process
here — so it never imports click, pexpect or anything a decision and a run do
not need. Subcommands are dispatched by hand and imported lazily.
"""

from __future__ import annotations

import sys

from tcg.errors import ExitCode

USAGE = """usage: tcg_shell init [zsh|bash|powershell|pwsh|cmd]
       tcg_shell session [--login] [SHELL]  (your shell on a terminal tcg masks and mediates)
       tcg_shell run-line LINE
       tcg_shell check [--actor human|agent] [--json] LINE
       tcg_shell run-argv CMD [ARG...]    (cmd.exe's reader macros; see docs/shells.md)
       tcg_shell mask-server start|status|stop  (the masking fork server; docs/shells.md)
"""

def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        sys.stderr.write(USAGE)
        return int(ExitCode.USAGE)
    if args[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return 0
    from tcg.router import SHELL_VERBS

    target = SHELL_VERBS.get(args[0])
    if target is None:
        sys.stderr.write(f"tcg_shell: unknown subcommand {args[0]!r}\n{USAGE}")
        return int(ExitCode.USAGE)
    import gc

    # Start-up allocates tens of thousands of objects (imports) and frees few:
    # generational collections during it are pure cost (~1-2 ms per command).
    # The station turns the collector back on before it runs the command
    # (Station.mediate), whose output loop may run for hours.
    collecting = gc.isenabled()
    gc.disable()
    try:
        from tcg.router import run_verb

        return run_verb("tcg_shell", args[0], target, args[1:])
    finally:
        if collecting:  # in-process callers (tests) get their collector back
            gc.enable()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
