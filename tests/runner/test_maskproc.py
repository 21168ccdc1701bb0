"""PTY mode masks in a process of its own (tcg.runner.maskproc): real processes,
real masker. It must mask like the in-process masker, refuse another policy,
and never let output through unmasked when it fails."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pexpect
import pytest

from tests.runner.helpers import BASH, station, station_env

TOKEN = "ghp_" + "Zq8Xw3Lk9Vb2Nm4Pr7Ts1Yu6Hj0Gf5Dc2Ea8"
AWS = "AKIA" + "Z7QH3KX9LM2PW4RT"

HARNESS = r"""
import json, os, sys
from tcg.policy.load import load_policy
from tcg.runner.maskproc import MaskerProcess
fp = sys.argv[1] if sys.argv[1] != "-" else load_policy().fingerprint
m = MaskerProcess("terminal", fp, dict(os.environ))
data = sys.stdin.buffer.read()
for i in range(0, len(data), 7000):  # several batches, secrets across their edges
    m.feed(data[i:i + 7000])
m.flush()
sys.stderr.write("\nRESULT " + json.dumps([m.error is None, type(m.error).__name__, str(m.error)]) + "\n")
"""


def _harness(fingerprint: str, data: bytes) -> tuple[bytes, list, bytes]:
    res = subprocess.run([sys.executable, "-c", HARNESS, fingerprint], input=data,
                         capture_output=True, timeout=120)
    line = [x for x in res.stderr.splitlines() if x.startswith(b"RESULT ")][-1]
    return res.stdout, json.loads(line[7:]), res.stderr


def test_masks_like_the_in_process_masker(tcg_home):
    data = (b"log line\n" * 3000 + f"token {TOKEN} and {AWS}\n".encode()) * 5
    out, (ok, _, why), _ = _harness("-", data)
    assert ok, why
    assert TOKEN.encode() not in out and AWS.encode() not in out
    assert out.count(b"<SECRET:github-pat") == 5 and out.count(b"<SECRET:aws-access-key-id:") == 5
    from tcg.mask import mask_text

    assert out == mask_text(data.decode()).encode()  # same bytes as the strict in-process masker


def test_refuses_another_policy_and_writes_nothing(tcg_home):
    out, (ok, kind, why), err = _harness("not-the-policy", f"x {TOKEN}\n".encode())
    assert not ok and kind == "MaskingProcessError" and "exited with 3" in why
    assert out == b"" and b"policy changed" in err


@pytest.mark.shell
def test_killed_masking_process_withholds_the_rest_and_exits_126(tmp_path, tcg_home):
    go = tmp_path / "go"
    line = (f"echo first; while [ ! -e '{go}' ]; do sleep 0.05; done; "
            f"echo 'after {TOKEN}'; echo done")
    argv = station(line, BASH)
    child = pexpect.spawn(argv[0], argv[1:], env=station_env(TERM="xterm"), timeout=60)
    child.expect("first")
    pids = subprocess.run(["pgrep", "-f", "tcg.mask.filter --worker"], capture_output=True,
                          text=True).stdout.split()
    assert pids, "no masking process while the command runs"
    for pid in pids:
        subprocess.run(["kill", "-9", pid], check=False)
    time.sleep(0.2)
    go.touch()
    child.expect(pexpect.EOF)
    out = child.before
    child.close()
    assert child.exitstatus == 126
    assert TOKEN.encode() not in out and b"after" not in out
    assert b"output withheld" in out
