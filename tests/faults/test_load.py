"""Load: the station agent mediates 1,000 agent command lines back to back in
one process (the whole decide → sandbox → run → mask → record path each time);
afterwards it holds the same open fds and no child processes, and every line
was recorded (docs/reliability.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tcg.events import iter_records
from tests.faults.helpers import TIMEOUT

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="counts fds and children in /proc")

N = 1000

DRIVER = textwrap.dedent(
    """
    import json, os, sys
    from tcg.runner.station import run_line_main

    def state():
        children = []
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children") as fh:
                children += fh.read().split()
        return sorted(os.listdir("/proc/self/fd"), key=int), children

    codes = [run_line_main(["echo run0"])]  # warm: caches, lazy imports, the detector
    before = state()
    for i in range(1, int(sys.argv[1])):
        codes.append(run_line_main([f"echo run{i}; exit {i % 3}"]))
    after = state()
    sys.stderr.write(json.dumps({"before": before, "after": after, "codes": codes}) + "\\n")
    """
)


def test_a_thousand_agent_commands_leak_no_fd_and_no_process(tmp_path, tcg_home):
    res = subprocess.run([sys.executable, "-c", DRIVER, str(N)], capture_output=True, timeout=TIMEOUT * 10,
                         stdin=subprocess.DEVNULL, env={**os.environ, "TCG_ACTOR": "agent"})
    assert res.returncode == 0, res.stderr[-2000:]
    out = json.loads(res.stderr.decode().strip().splitlines()[-1])
    assert out["codes"] == [0] + [i % 3 for i in range(1, N)]
    assert res.stdout == b"".join(b"run%d\n" % i for i in range(N))
    assert out["after"] == out["before"], "file descriptors or child processes leaked"
    assert out["after"][1] == []
    recorded = [r for r in iter_records(tcg_home / "state" / "events.jsonl") if r["event"] == "command_decision"]
    assert len(recorded) == N and {r["actor"] for r in recorded} == {"agent"}
