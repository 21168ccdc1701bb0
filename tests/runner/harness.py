"""Run the station with a stand-in policy decision while tcg.policy.engine is
being built in parallel (issue 2). Everything else — shell choice, PTY/pipe
runner, masker wiring, events, exit codes — is the real code path.

Usage: python harness.py [--shell PATH] [--] LINE
The stand-in allows every line except those containing ``TCG-TEST-BLOCK``.
Once the real engine exists, tests call `tcg_shell run-line` instead.
"""

from __future__ import annotations

import sys


def _install_stub() -> None:
    from tcg.policy.model import Decision, Reason, Verdict
    from tcg.runner import station

    def decide(self, line):  # noqa: ANN001
        from tcg.policy.load import load_policy

        self.policy = load_policy()
        if "TCG-TEST-BLOCK" in line:
            return Verdict(Decision.BLOCK, (Reason("secret-store-read", Decision.BLOCK, "stub block"),))
        return Verdict(Decision.ALLOW, ())

    station.Station.decide = decide


if __name__ == "__main__":
    try:
        import tcg.policy.engine  # noqa: F401
    except ModuleNotFoundError:
        _install_stub()
    from tcg.runner.station import run_line_main

    sys.exit(run_line_main(sys.argv[1:]))
