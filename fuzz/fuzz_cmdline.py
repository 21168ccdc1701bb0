"""Fuzz target: the command-line policy (tcg.decide.line.evaluate_line).

Any line, either actor: a verdict with a known decision and reason codes,
never an exception (an exception would refuse the line as internal-error:
safe, but a bug)."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402,F401 - sets TCG_HOME first

with _common.instrumented():
    from tcg.decide.line import evaluate_line
    from tcg.policy.load import load_policy
    from tcg.policy.model import Decision
    from tcg.policy.reasons import REASONS

POLICY = load_policy(include_repo=False)
CWD = os.environ["TCG_HOME"]
ENV = {"HOME": CWD, "PATH": "/usr/bin:/bin"}


def test_one_input(data: bytes) -> None:
    line = data.decode("utf-8", "surrogateescape")
    for actor in ("agent", "human"):
        verdict = evaluate_line(POLICY, line, actor, cwd=CWD, env=dict(ENV))
        assert isinstance(verdict.decision, Decision)
        for reason in verdict.reasons:
            assert reason.code in REASONS, reason.code


SEEDS = [b"ls -la", b"cat .env", b"env | grep KEY", b"bash -c \"$X\"", b"rm -rf ~/", b"echo $(cat ~/.ssh/id_rsa)",
         b"git push --force", b"a='b\\", b"$((1+", b"cat <<EOF\n.env\nEOF", b"sudo -u x env", b"\xff\xfe; printenv",
         b"for f in *; do cat \"$f\"; done", b"x=1 y=2 command env -i printenv"]

if __name__ == "__main__":
    _common.run(test_one_input)
