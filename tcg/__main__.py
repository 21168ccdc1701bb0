"""`python -m tcg …`. `launch` goes straight to the launcher: the shell hook's
agent functions run `python -I -m tcg launch AGENT`, and a launch needs no
click (tcg.launcher.launch parses its own arguments); `hook` likewise (an agent
CLI runs it for every tool call)."""

import sys


def _main() -> int:
    args = sys.argv[1:]
    if args[:1] == ["launch"] and args[1:2] not in (["-h"], ["--help"]):
        from tcg.launcher.launch import main

        return main(args[1:])
    if args[:1] == ["hook"] and args[1:2] not in (["-h"], ["--help"]):
        from tcg.agents.entry import main as hook_main

        return hook_main(args[1:])
    from tcg.cli import main

    return main()


raise SystemExit(_main())
