"""Test double for the policy ENGINE only, used by the hook-mechanics tests.

Everything else is real: the rendered hook, tcg_shell's dispatcher, hook-run,
the station agent's PTY/pipe runner. Only `Station.decide` is replaced, with a
fixed rule (a line containing BLOCKME is blocked, everything else allowed), so
the hook mechanics (history, multi-line units, cd, Ctrl-C…) are tested
independently of the policy engine being built in parallel, and of its rules.
Events are not recorded (the hermetic TCG_HOME stays empty of test noise).
"""

from __future__ import annotations

import sys

import tcg.runner.station as station
from tcg.policy.model import Decision, Reason, Verdict


def _decide(self, line):  # noqa: ANN001
    if "BLOCKME" in line:
        return Verdict(Decision.BLOCK, (Reason("internal-error", Decision.BLOCK, "test stub blocks BLOCKME"),))
    return Verdict(Decision.ALLOW, ())


station.Station.decide = _decide
station.Station.record = lambda self, *a, **k: None

from tcg.shell_entry import main  # noqa: E402

sys.exit(main(sys.argv[1:]))
