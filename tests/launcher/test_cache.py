"""Gate cache, the cache-hit launch and failure paths."""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tcg.launcher import cache
from tcg.launcher import exec as lexec
from tcg.launcher import launch as llaunch
from tcg.launcher.gate import PROGRESS_LABEL, SCAN_RUNS
from tcg.paths import get_paths
from tests.launcher.conftest import TCG, commit, make_repo

KEY = b"k" * 32


def test_load_cached_rejects_mismatches_and_tampering(tmp_path):
    path = tmp_path / "e.gate"
    entry = {"v": cache.CACHE_VERSION, "state": "s", "policy": "p", "scanner": "x", "status": "clean",
             "counts_by_rule": {}}
    cache.store_cached(path, {**entry, "path": "/secret/place", "value": "nope"}, KEY)
    stored = marshal.loads(path.read_bytes().partition(b"\n")[2])
    assert "path" not in stored and "value" not in stored  # only CACHE_FIELDS are written
    assert cache.load_cached(path, "s", "p", "x", KEY) is not None
    assert cache.load_cached(path, "s2", "p", "x", KEY) is None
    assert cache.load_cached(path, "s", "p2", "x", KEY) is None
    assert cache.load_cached(path, "s", "p", "x2", KEY) is None
    assert cache.load_cached(path, "s", "p", "x", b"o" * 32) is None  # another install's key
    for bad in ({"status": "error"}, {"counts_by_rule": {"r": "1"}}, {"v": 1}, {"files": "3"}):
        cache.store_cached(path, {**entry, **bad}, KEY)
        assert cache.load_cached(path, "s", "p", "x", KEY) is None
    path.write_text("{torn")
    assert cache.load_cached(path, "s", "p", "x", KEY) is None
    path.write_bytes(marshal.dumps(["not", "a", "dict"]))
    assert cache.load_cached(path, "s", "p", "x", KEY) is None


def test_a_forged_clean_entry_is_not_trusted(tmp_path):
    """The cache dir is writable by anything running as the user: an entry written
    without the install key (e.g. findings turned into "clean") is ignored."""
    path = tmp_path / "e.gate"
    entry = {"v": cache.CACHE_VERSION, "state": "s", "policy": "p", "scanner": "x", "status": "findings",
             "counts_by_rule": {"aws-access-key-id": 1}}
    cache.store_cached(path, entry, KEY)
    mac, _, body = path.read_bytes().partition(b"\n")
    forged = marshal.dumps({**marshal.loads(body), "status": "clean", "counts_by_rule": {}})
    path.write_bytes(mac + b"\n" + forged)
    assert cache.load_cached(path, "s", "p", "x", KEY) is None
    path.write_bytes(forged)  # unsigned
    assert cache.load_cached(path, "s", "p", "x", KEY) is None


def test_cache_hit_reads_the_policy_snapshot_and_does_not_scan(tmp_path, monkeypatch, tcg_home):
    """In-process: the second launch takes the policy from its signed snapshot (no TOML
    is parsed) and the gate result from the cache (no scan); git computes the key."""
    repo = make_repo(tmp_path / "repo")
    commit(repo, "a.py", "x = 1\n")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "claude").symlink_to("/bin/true")
    env = dict(os.environ, PATH=f"{bindir}:/usr/bin:/bin")
    calls = []
    monkeypatch.setattr(llaunch, "exec_agent", lambda path, argv, child_env: calls.append(argv) or 0)
    assert llaunch.launch("claude", ["-x"], env=env, cwd=repo) == 0
    scans = SCAN_RUNS[0]

    import tcg.policy.load

    def no_toml(*a, **k):
        raise AssertionError("the cache-hit launch parsed policy TOML")

    monkeypatch.setattr(tcg.policy.load, "parse_toml", no_toml)
    assert llaunch.launch("claude", ["-y"], env=env, cwd=repo) == 0
    assert SCAN_RUNS[0] == scans
    assert [argv[-1] for argv in calls] == ["-x", "-y"]
    events = [json.loads(x) for x in get_paths().events_file.read_text().splitlines()]
    assert [e["cache"] for e in events] == ["miss", "hit"]
    assert events[1]["policy"] == events[0]["policy"]


def test_an_unexpected_error_refuses_the_launch(tmp_path, monkeypatch, capsys):
    """An internal error exits 126 (refused), never a code that reads as the agent's own."""
    import tcg.launcher.launch as mod

    def boom(*a, **k):
        raise RuntimeError("surprise")

    monkeypatch.setattr(mod, "launch", boom)
    assert mod.main(["claude"]) == 126
    err = capsys.readouterr().err
    assert "launch of claude refused: internal error (RuntimeError)" in err and "hint:" in err


def test_unreadable_repository_fails_closed(tmp_path, launch_env, tcg_home):
    repo = make_repo(tmp_path / "repo")
    commit(repo, "a.py", "x = 1\n")
    (repo / ".git" / "HEAD").write_text("garbage\n")
    proc = subprocess.run([TCG, "launch", "claude"], cwd=repo, env=launch_env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 126, proc.stderr
    assert "scan failed" in proc.stderr
    ev = json.loads(get_paths().events_file.read_text().splitlines()[-1])
    assert (ev["reason"], ev["status"]) == ("repo-scan-error", "error")
    assert not Path(launch_env["FAKE_AGENT_OUT"]).exists()


def test_progress_shows_only_when_enabled(capsys):
    from tcg.scan.progress import Progress

    quiet = Progress(False, delay=0, label=PROGRESS_LABEL)
    quiet({"blobs_scanned": 3})
    quiet.done()
    shown = Progress(True, delay=0, every=0, label=PROGRESS_LABEL)
    shown({"blobs_scanned": 3, "files_scanned": 2, "bytes_scanned": 10})
    shown.done()
    err = capsys.readouterr().err
    assert err.count("scanning the repository") == 1 and "3 blobs, 2 files" in err


def test_windows_exec_runs_a_child_and_returns_its_code(monkeypatch):
    """Mock: os.execv does not replace the process on Windows, which cannot run here;
    the subprocess branch is exercised on Linux by pretending os.name == 'nt'."""
    monkeypatch.setattr(lexec.os, "name", "nt")
    code = lexec.exec_agent(sys.executable, ["agent", "-c", "raise SystemExit(7)"], dict(os.environ))
    assert code == 7


def test_exec_failure_reports_127(tmp_path):
    import signal

    saved = {s: signal.getsignal(s) for s in (signal.SIGPIPE, signal.SIGXFSZ)}
    try:
        code = lexec.exec_agent(str(tmp_path / "missing"), ["claude"], dict(os.environ))
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
    assert code == 127


@pytest.mark.parametrize("argv", [["--accept-findings"], [], ["-x", "claude"]])
def test_parse_args_usage(argv):
    with pytest.raises(ValueError):
        llaunch.parse_args(argv)


def test_parse_args_keeps_agent_options():
    assert llaunch.parse_args(["--accept-findings", "claude", "--help", "-p", "--accept-findings"]) == (
        True, "claude", ["--help", "-p", "--accept-findings"])
