"""`tcg launch AGENT [ARG…]`: the agent gate (tcg/launcher/launch.py does the work).

The agent's own options must reach it untouched: click stops parsing at AGENT
(allow_interspersed_args=False) and passes everything after it UNPROCESSED.
"""

from __future__ import annotations

import click


@click.command(
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False,
                      "help_option_names": ["--help"]},
)
@click.option("--accept-findings", is_flag=True,
              help="Launch even though the repository scan found secrets (recorded in the event log).")
@click.argument("agent")
@click.argument("agent_args", nargs=-1, type=click.UNPROCESSED)
def launch(accept_findings: bool, agent: str, agent_args: tuple[str, ...]) -> int:
    """Scan the repository, record the decision, then exec AGENT wired through tcg.

    Exit: the agent's own; 126 when the gate refuses; 127 when AGENT is not on PATH.
    """
    from tcg.launcher.launch import launch as run_launch

    if agent.startswith("-"):
        raise click.UsageError(f"unknown option {agent!r} (tcg's options go before AGENT, the agent's after it)")

    return run_launch(agent, list(agent_args), accept_findings=accept_findings)
