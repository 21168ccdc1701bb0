"""`tcg_shell hook-run` / `run-argv`: the protocol between the hooks and Python,
run as real subprocesses against the real station agent and policy."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import real_mediation_works

TCG_SHELL = str(Path(sys.executable).with_name("tcg_shell"))


def hook_run(*args, line=None, nonce="n-123", env=None, **kw):
    e = dict(os.environ, **(env or {}))
    if line is not None:
        e["TCG_HOOK_LINE"] = line
    e["TCG_HOOK_NONCE"] = nonce
    return subprocess.run([TCG_SHELL, "hook-run", *args], env=e, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=120, **kw)


@pytest.fixture
def engine(warm_cache, tcg_home):
    import shutil

    if not real_mediation_works():
        pytest.skip("`tcg_shell run-line true` does not exit 0 yet (station/engine not ready)")
    if warm_cache.is_dir():
        shutil.copytree(warm_cache, tcg_home / "cache", dirs_exist_ok=True)


def test_state_line_is_checked_and_acknowledged_with_the_nonce(tmp_path, engine):
    ack = tmp_path / "ack"
    r = hook_run("--shell", "/bin/bash", "--ack", str(ack), line="cd /tmp && export X=1")
    assert r.returncode == 125, r.stderr
    assert ack.read_text() == "n-123\n"
    assert oct(ack.stat().st_mode & 0o777) == "0o600"


def test_refused_state_line_gives_126_and_no_ack(tmp_path, engine):
    ack = tmp_path / "ack"
    (tmp_path / ".env").write_text("K=v\n")
    r = hook_run("--ack", str(ack), line="cd . && cat .env", env={"TCG_ACTOR": "agent"}, cwd=tmp_path)
    assert r.returncode == 126
    assert not ack.exists()


def test_run_line_exit_status_passes_through_without_ack(tmp_path, engine):
    ack = tmp_path / "ack"
    r = hook_run("--shell", "/bin/bash", "--ack", str(ack), line="sh -c 'exit 125'")
    assert r.returncode == 125 and not ack.exists()  # the command's own 125: no nonce written


def test_ack_through_a_symlink_is_refused(tmp_path, engine):
    target = tmp_path / "target"
    target.write_text("untouched\n")
    ack = tmp_path / "ack"
    ack.symlink_to(target)
    r = hook_run("--ack", str(ack), line="cd /tmp")
    assert r.returncode not in (0, 125)
    assert target.read_text() == "untouched\n"


def test_line_file_is_read_and_deleted(tmp_path, engine):
    f = tmp_path / "line"
    f.write_text("echo from-file")
    r = hook_run("--shell", "/bin/bash", "--line-file", str(f))
    assert r.returncode == 0 and "from-file" in r.stdout
    assert not f.exists()


def test_run_line_over_argv_limit_runs_from_a_temp_file(tmp_path, engine):
    f = tmp_path / "line"
    f.write_text("echo " + "y" * 150_000 + " | wc -c")
    r = hook_run("--shell", "/bin/bash", "--line-file", str(f))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "150001"


def test_usage_errors():
    assert hook_run().returncode == 2  # no line
    assert hook_run("--bogus", line="true").returncode == 2
    r = subprocess.run([TCG_SHELL, "run-argv"], capture_output=True, text=True)
    assert r.returncode == 2


def test_blank_line_is_skipped_without_running(tmp_path):
    r = hook_run("--check-only", line="  # only a comment")
    assert r.returncode == 0 and r.stdout == ""


def test_multiline_comment_only_is_acknowledged(tmp_path):
    ack = tmp_path / "ack"
    r = hook_run("--ack", str(ack), line="# one\n  # two")
    assert r.returncode == 125 and ack.read_text() == "n-123\n"
