"""`tcg hook AGENT EVENT`: route a hook call to its agent's adapter, without click.

An agent CLI starts this once per event (for every tool call), so it is
dispatched before the `tcg` command loads click; tcg/cli/hook.py only renders
`--help`.
"""

from __future__ import annotations

import sys

from tcg.errors import ExitCode

ADAPTERS = {"claude": "tcg.agents.claude", "qwen": "tcg.agents.qwen"}
USAGE = "usage: tcg hook AGENT EVENT   (AGENT: " + ", ".join(ADAPTERS) + "; the agent CLI sends the event's JSON on stdin)\n"


def main(argv: list[str]) -> int:
    """Exit 2 for a usage error (and for an agent's hook, 2 means: block)."""
    if len(argv) != 2 or argv[0] not in ADAPTERS:
        sys.stderr.write(f"tcg hook: expected AGENT EVENT, got {' '.join(argv) or 'nothing'}\n{USAGE}")
        return ExitCode.USAGE
    __import__(ADAPTERS[argv[0]])
    return int(sys.modules[ADAPTERS[argv[0]]].main(argv[1:]))
