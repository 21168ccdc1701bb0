"""A served session's start (tcg.runner.session): the station confirms the masking
worker the fork server forked by the key of the policy files it read
(tcg.policy.sources) instead of loading the policy before the first prompt. The
worker and the station must still agree on the policy, and a policy that cannot
be used must still refuse the session before anything is shown. Real server,
real worker, real station code in a fresh interpreter (what the hook starts)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tcg.policy.sources import read_sources
from tcg.runner.maskproc import MaskerProcess
from tests.runner.test_maskserver import _start_server

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")

ROOT = str(Path(__file__).resolve().parents[2])
# What the first prompt's path must not load in a served station: the policy
# engine and the decision code come after it (tcg.runner.session_hello).
NOT_BEFORE_THE_PROMPT = ("tcg.policy.load", "tcg.policy.merge", "tcg.policy.snapshots",
                         "tcg.runner.session_decide", "tcg.runner.station", "tcg.events")

# The station's step after it started the shell (Session._start_rest), in the
# interpreter the hook starts (-I -S: no site-packages yet), with a served worker.
# A request the server misses under load (REPLY_WAIT) is asked again.
STATION = r"""
import os, sys
sys.path.append(sys.argv.pop(1))
from tcg.runner.session import Options, PolicyUnusable, Session, start_masker
s = Session(Options())
for _ in range(200):
    s.masker = start_masker(s.env, serve=True)
    if s.masker.served is not None:
        break
    s.discard_masker()
else:
    sys.exit("no served worker")
try:
    out = s._start_rest("/bin/sh")
    print("started", getattr(out.proc, "confirmed", False), s.policy is not None,
          ",".join(m for m in sys.argv[1].split(",") if m in sys.modules))
    out.proc.discard()
except PolicyUnusable as exc:
    s.discard_masker()
    print("refused:", exc.reason)
"""


def _station(env: dict[str, str]) -> str:
    res = subprocess.run([sys.executable, "-I", "-S", "-c", STATION, ROOT, ",".join(NOT_BEFORE_THE_PROMPT)],
                         env=env, capture_output=True, text=True, timeout=180)
    assert res.returncode == 0, res.stderr
    return res.stdout


@pytest.fixture
def server() -> int:
    return _start_server()


def test_a_served_station_confirms_its_worker_without_loading_the_policy(server, tmp_path):
    policy = tmp_path / "policy.toml"
    policy.write_text('[decisions.human]\nsecret-store-read = "ask"\n')
    out = _station(dict(os.environ, TCG_POLICY=str(policy)))
    assert out == "started True False \n"  # confirmed; no policy loaded, none of the engine imported


def test_a_worker_that_loaded_other_policy_files_than_the_station_read_is_replaced(server, tmp_path,
                                                                                    monkeypatch):
    """The policy file changed between the station's read and the worker's: another
    policy. The worker refuses the station's key and the station masks with a fresh
    process of its own (which loads the policy as it is now)."""
    policy = tmp_path / "policy.toml"
    policy.write_text('[decisions.human]\nsecret-store-read = "ask"\n')
    monkeypatch.setenv("TCG_POLICY", str(policy))
    station_read = read_sources().key
    policy.write_text('[decisions.human]\nsecret-store-read = "block"\n')
    assert read_sources().key != station_read
    proc = MaskerProcess("terminal", None, dict(os.environ), serve=True)
    proc.start()
    assert proc.served is not None
    proc.confirm_policy(station_read)
    assert proc.served is None and not proc.confirmed and proc.pid is not None
    assert os.waitpid(proc.pid, os.WNOHANG) == (0, 0)  # our own child: the fresh path
    proc.discard()


def test_a_worker_confirmed_with_the_same_files_is_kept(server, tmp_path, monkeypatch):
    policy = tmp_path / "policy.toml"
    policy.write_text('[decisions.human]\nsecret-store-read = "ask"\n')
    monkeypatch.setenv("TCG_POLICY", str(policy))
    proc = MaskerProcess("terminal", None, dict(os.environ), serve=True)
    proc.start()
    assert proc.served is not None
    proc.confirm_policy(read_sources().key)
    assert proc.confirmed and proc.served is not None
    proc.discard()


@pytest.mark.parametrize("text, reason", [
    (None, "policy file not found"),  # named by TCG_POLICY, absent: the station's own read fails
    ("[decisions.human\n", "invalid TOML"),  # the worker's load fails, then the station's
])
def test_a_served_station_still_refuses_a_policy_it_cannot_use(server, tmp_path, text, reason):
    policy = tmp_path / "policy.toml"
    if text is not None:
        policy.write_text(text)
    out = _station(dict(os.environ, TCG_POLICY=str(policy)))
    # one line: the masking process (on this stdout) wrote nothing
    assert out.startswith("refused: the policy cannot be used: ") and reason in out and out.count("\n") == 1, out
