"""`tcg mask [FILE] [--mode strict|terminal]`: the --help of the verb.

`tcg mask` is served by tcg/router.py (tcg.mask.filter.mask_main parses its own
arguments: one grammar); this command declares the parameters for --help only.
"""

from __future__ import annotations

import click

from tcg.cli.passthrough import PassThroughCommand
from tcg.mask.filter import READ_SIZE, MaskInputError, mask_main, pump

__all__ = ["READ_SIZE", "MaskInputError", "mask", "pump"]

mask = PassThroughCommand(
    "mask",
    mask_main,
    params=[
        click.Argument(["file"], required=False),
        click.Option(["--mode"], type=click.Choice(["strict", "terminal"]), default="strict", show_default=True,
                     help="strict: never release a byte that could be part of a secret until decided; "
                          "terminal: release at once unless the tail could begin a secret (held <= hold time)."),
    ],
    help="Mask secrets in FILE (or stdin) and write the result to stdout, streaming.",
)
