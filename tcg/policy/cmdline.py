"""Parse one shell command line into every simple command that would run.

The policy must judge what a line *does*, not what its text looks like, so this
module walks a real bash syntax tree (tree-sitter-bash, see docs/parser.md) and
flattens it: pipelines, lists, subshells, groups, if/while/for/case/function
bodies, command and process substitutions, redirections, env-assignment
prefixes, wrappers (``sudo``, ``env``, ``timeout``, ``xargs``…), ``eval`` strings
and ``bash -c``/``sh -c`` strings (recursively, depth-limited).

Words are evaluated as far as is safe without running anything: quote removal,
backslash and ``$'…'`` escapes, ``~``/``$HOME`` and a few non-secret path
variables, variables assigned earlier in the same line, and ``for`` loop values.
Everything else (``$VAR``, ``$(…)``, ``$((…))``) is a dynamic part, marked with
:data:`DYN` in :attr:`Word.value` and making the word non-static.

Pure: no filesystem access, no environment lookups beyond the mapping passed in.
"""

from __future__ import annotations

from tcg.paths import RESOLVABLE_VARS
from tcg.policy.walker import _Walker
from tcg.policy.words import (  # noqa: F401 - re-exported: the parser's result types
    DYN,
    MAX_DEPTH,
    Assignment,
    ParsedLine,
    Part,
    Redirect,
    SimpleCommand,
    Word,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


def parse_line(
    line: str, home: str | None = None, env: Mapping[str, str] | None = None
) -> ParsedLine:
    """Parse ``line`` into the commands it would run.

    ``home`` resolves ``~`` and ``$HOME`` (default: ``env["HOME"]``); ``env``
    supplies values only for :data:`RESOLVABLE_VARS` (never secrets).
    """
    variables: dict[str, str | None] = {}
    if env:
        for name in RESOLVABLE_VARS:
            if name in env:
                variables[name] = env[name]
    if home is None:
        home = variables.get("HOME")
    if home is not None:
        variables["HOME"] = home
    walker = _Walker(home=home, variables=variables)
    walker.parse_script(line, depth=0)
    return ParsedLine(
        commands=tuple(walker.commands),
        redirects=tuple(walker.redirects),
        unparsable=walker.unparsable,
        problems=tuple(walker.problems),
    )


