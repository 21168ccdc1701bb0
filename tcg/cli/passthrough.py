"""A click command that renders help but leaves parsing to the verb's own function.

The hot verbs parse their arguments without click (tcg/router.py). Declaring the
same options to click as well would give a verb two grammars that drift apart
(one exit code for ``tcg check a b``, another for ``tcg check --bogus``). A
:class:`PassThroughCommand` declares its parameters for ``--help`` and completion
only: any other invocation hands the raw arguments to the verb's function.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click


class PassThroughCommand(click.Command):
    """``--help`` from ``params``; everything else is ``function(raw_args)``."""

    def __init__(self, name: str, function: Callable[[list[str]], int], **kwargs: Any) -> None:
        kwargs.setdefault("context_settings", {"help_option_names": ["-h", "--help"]})
        super().__init__(name, **kwargs)
        self.function = function

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args[:1] and args[0] in self.get_help_option_names(ctx):
            return super().parse_args(ctx, args)  # prints the help and exits
        ctx.meta["tcg.raw_args"] = list(args)
        return []

    def invoke(self, ctx: click.Context) -> int:
        return int(self.function(list(ctx.meta.get("tcg.raw_args", []))) or 0)
