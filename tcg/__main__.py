"""`python -m tcg …`. `launch` goes straight to the launcher: the shell hook's
agent functions run `python -I -m tcg launch AGENT`, and its cache-hit path must
not pay for tcg.cli (click, typing)."""

import sys


def _main() -> int:
    args = sys.argv[1:]
    if args[:1] == ["launch"] and args[1:2] not in (["-h"], ["--help"]):
        import gc

        # A cache-hit launch allocates little and then execs: a collection pass
        # (~0.5 ms with everything runpy imported) is pure cost. The full path
        # turns the collector back on (tcg.launcher.fastpath.main).
        gc.disable()
        from tcg.launcher.fastpath import main

        return main(args[1:])
    from tcg.cli import main

    return main()


raise SystemExit(_main())
