"""`python -m tcg …`: the same entry as `tcg`. The shell hook's agent functions run
`python -I -m tcg launch AGENT` and agent CLIs `python -m tcg hook …` per tool call;
tcg.cli.main serves both through the click-free router (tcg/router.py)."""

from tcg.cli import main

raise SystemExit(main())  # no argv: the process entry (tcg.cli.SHORT_PROCESS_VERBS)
