"""`tcg clipboard watch|service`: the clipboard watcher and its background-run files."""

from __future__ import annotations

import signal
import sys
import threading

import click

from tcg.clipboard.backends import ALIASES, BACKENDS
from tcg.clipboard.service import PLATFORMS


@click.group()
def clipboard() -> None:
    """Mask secrets copied to the clipboard (docs/clipboard.md)."""


@clipboard.command()
@click.option("--interval", type=click.FloatRange(min=0.05), default=None,
              help="Seconds between polls [default: policy clipboard.interval, 0.5].")
@click.option("--once", is_flag=True, help="Check the clipboard once, print the outcome, exit.")
@click.option("--backend", type=click.Choice(sorted([*BACKENDS, *ALIASES])), default=None,
              help="Clipboard tool to use [default: detected].")
@click.option("--no-hint", is_flag=True,
              help="X11: read the clipboard every poll instead of waiting for XFixes owner events.")
def watch(interval: float | None, once: bool, backend: str | None, no_hint: bool) -> int:
    """Watch the clipboard; replace secrets copied to it with placeholders.

    Masking is destructive: the clipboard is overwritten with the masked text
    and tcg keeps nothing of the original. Runs until interrupted (SIGINT or
    SIGTERM); `tcg clipboard service` prints a file to run it in the background.
    """
    from tcg.clipboard.detect import detect_backend
    from tcg.clipboard.watcher import ERROR, WRITE_FAILED, ClipboardWatcher, stderr_log
    from tcg.policy.load import load_policy

    # The watcher runs from any directory (often a service): a repository's
    # .tcg/policy.toml has no business here.
    policy = load_policy(include_repo=False)
    be = detect_backend(backend)
    watcher = ClipboardWatcher(be, policy=policy, interval=interval, use_hint=not (no_hint or once))
    if once:
        outcome = watcher.run(once=True)
        click.echo(outcome)
        return 1 if outcome in (ERROR, WRITE_FAILED) else 0
    stop = threading.Event()

    def _stop(_signum: int, _frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, _stop)
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, _stop)
    watcher.warm_up()
    stderr_log(f"watching the clipboard through {be.name} every {watcher.interval:g} s "
               f"(inspection cap {watcher.cap} bytes)")
    try:
        watcher.run(stop=stop)
    except KeyboardInterrupt:
        pass
    stderr_log(f"stopped after {watcher.stats.polls} polls, {watcher.stats.masked} masked")
    return 0


@clipboard.command()
@click.option("--platform", "platform_", type=click.Choice(PLATFORMS), default=None,
              help="Service manager [default: this machine's].")
@click.option("--interval", type=click.FloatRange(min=0.05), default=None,
              help="Poll interval to bake into the command line.")
def service(platform_: str | None, interval: float | None) -> int:
    """Print the file that runs the watcher in the background.

    systemd: a user unit (~/.config/systemd/user/tcg-clipboard.service);
    launchd: an agent plist (~/Library/LaunchAgents/dev.tcg.clipboard.plist);
    windows: a schtasks command creating a logon task. docs/clipboard.md has the steps.
    """
    from tcg.clipboard.service import default_platform, render, watch_command

    sys.stdout.write(render(platform_ or default_platform(), watch_command(interval)))
    return 0
