"""`tcg hook AGENT EVENT`: an agent CLI's hook entry (tcg/agents/entry.py does the work).

The `tcg` command dispatches `hook` before click loads (it runs once per tool
call); this click command exists for `tcg hook --help`.
"""

from __future__ import annotations

import click


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("agent", type=click.Choice(["claude", "qwen"]))
@click.argument("event")
def hook(agent: str, event: str) -> int:
    """Decide one hook event of AGENT (JSON on stdin, JSON reply on stdout).

    Wired by `tcg launch AGENT` (or `tcg agents install claude`); not meant to be
    typed. Exit 0 with the decision in the reply; 2 = block.
    """
    from tcg.agents.entry import main

    return main([agent, event])
