"""A repository of 100,000 files for the launch gate and `tcg scan`
(docs/reliability.md): the gate scans it to the end, shows its progress line on
a terminal, finds the one secret planted in the last file and caches the
result; `tcg scan` under an object budget stops at the budget and says
`partial` (exit 3). About 30 s on 2 cores, most of it writing the files and
`git add`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.faults.helpers import fresh_token
from tests.helpers.leaks import assert_no_secret_written

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(sys.platform != "linux", reason="100k files: timed for Linux CI only")]

DIRS, PER_DIR = 100, 1000
FILES = DIRS * PER_DIR
BUDGET = 20_000
TCG = str(Path(sys.executable).with_name("tcg"))


@pytest.fixture(scope="module")
def big_repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("big") / "repo"
    token = fresh_token()
    for d in range(DIRS):
        sub = root / f"d{d:03d}"
        sub.mkdir(parents=True)
        for f in range(PER_DIR):
            (sub / f"f{f:04d}.txt").write_text(f"line {d} {f}: nothing to see here\n")
    (root / f"d{DIRS - 1:03d}" / f"f{PER_DIR - 1:04d}.txt").write_text(f"deploy_token = {token}\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([*git, "-C", str(root), "add", "-A"], check=True, timeout=600)
    subprocess.run([*git, "-C", str(root), "commit", "-qm", "100k files"], check=True, timeout=600)
    assert len(subprocess.run(["git", "-C", str(root), "ls-files"], capture_output=True, text=True,
                              check=True).stdout.splitlines()) == FILES
    return root, token


def test_the_gate_scans_all_100k_files_with_progress_and_caches_the_result(big_repo, tcg_home, capsys,
                                                                          monkeypatch):
    from tcg.launcher import gate as gate_mod
    from tcg.paths import get_paths
    from tcg.policy.load import load_policy
    from tcg.scan import progress

    class Eager(progress.Progress):
        """The real counter without its one-second grace (what it shows does not
        depend on how fast this machine scans)."""

        def __init__(self, enabled: bool, **kw) -> None:
            super().__init__(enabled, **{**kw, "delay": 0.0})

    monkeypatch.setattr(progress, "Progress", Eager)

    root, token = big_repo
    policy = load_policy(str(root))
    runs = gate_mod.SCAN_RUNS[0]
    result = gate_mod.run_gate("claude", root, policy, paths=get_paths(), progress=True)
    err = capsys.readouterr().err
    assert gate_mod.SCAN_RUNS[0] == runs + 1 and result.scanned and result.cache == "miss"
    assert result.complete and result.blobs == FILES, result.fields()
    assert result.status == "findings" and result.counts_by_rule == {"github-pat-classic": 1}
    # The progress line: shown, counting up, then cleared.
    shown = [int(m) for m in re.findall(re.escape(gate_mod.PROGRESS_LABEL) + r": (\d+) blobs, ", err)]
    assert shown and shown == sorted(shown) and shown[-1] <= FILES, err[-500:]
    assert err.endswith("\r\033[K")
    again = gate_mod.run_gate("claude", root, policy, paths=get_paths(), progress=True)
    assert gate_mod.SCAN_RUNS[0] == runs + 1 and again.cache == "hit" and not again.scanned
    assert again.status == "findings" and again.blobs == FILES
    assert_no_secret_written(tcg_home, [token])


def test_scan_under_an_object_budget_stops_there_and_says_partial(big_repo, tcg_home):
    root, token = big_repo
    res = subprocess.run([TCG, "scan", "--format", "json", "--max-objects", str(BUDGET), str(root)],
                         capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
                         env=dict(os.environ))
    assert res.returncode == 3, res.stderr[-2000:]
    report = json.loads(res.stdout)
    assert report["status"] == "partial" and report["complete"] is False and report["budget_exceeded"] is True
    assert report["blobs_scanned"] + report["files_scanned"] == BUDGET
    assert token not in res.stdout + res.stderr
    assert_no_secret_written(tcg_home, [token])
