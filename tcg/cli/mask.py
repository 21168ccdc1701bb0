"""`tcg mask [FILE] [--mode strict|terminal]`: the click command (docs, --help, errors).

The work is in tcg.mask.filter, which `tcg mask` reaches without loading click.
"""

from __future__ import annotations

import click

from tcg.mask.filter import READ_SIZE, MaskInputError, pump, run

__all__ = ["READ_SIZE", "MaskInputError", "mask", "pump"]


@click.command()
@click.argument("file", required=False, type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--mode", type=click.Choice(["strict", "terminal"]), default="strict", show_default=True,
              help="strict: never release a byte that could be part of a secret until decided; "
                   "terminal: release at once unless the tail could begin a secret (held <= hold time).")
def mask(file: str | None, mode: str) -> int:
    """Mask secrets in FILE (or stdin) and write the result to stdout, streaming."""
    return run(file, mode)
