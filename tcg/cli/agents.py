"""`tcg agents install|uninstall AGENT`: tcg's hooks in an agent's user settings
(tcg/agents/install.py does the work)."""

from __future__ import annotations

import os

import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def agents() -> None:
    """Wire tcg into an agent you start directly (`tcg launch AGENT` needs none of this)."""


@agents.command()
@click.argument("agent", type=click.Choice(["claude"]))
def install(agent: str) -> None:
    """Merge tcg's hooks into the agent's user settings (a backup is kept; idempotent)."""
    from tcg.agents.install import install_claude
    from tcg.launcher.resolve import interpreter

    path, changed = install_claude(os.environ, interpreter())
    if changed:
        click.echo(f"tcg: hooks installed in {path} (the previous file is {path.name}.tcg-bak)")
        click.echo("tcg: Bash-tool commands are decided and masked by the hooks; for the OS view as well, "
                   "start the agent with `tcg launch claude`")
    else:
        click.echo(f"tcg: hooks already installed in {path}")


@agents.command()
@click.argument("agent", type=click.Choice(["claude"]))
def uninstall(agent: str) -> None:
    """Remove exactly tcg's hooks from the agent's user settings."""
    from tcg.agents.install import uninstall_claude

    path, changed = uninstall_claude(os.environ)
    click.echo(f"tcg: hooks removed from {path}" if changed else f"tcg: no tcg hooks in {path}")
