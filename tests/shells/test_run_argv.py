"""`tcg_shell run-argv CMD ARG…`: the entry of cmd.exe's content-reader macros
(cmd.exe has no session), run for real against the station and the policy."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TCG_SHELL = str(Path(sys.executable).with_name("tcg_shell"))
SECRET = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"


def run(args, cwd, **env):
    return subprocess.run([TCG_SHELL, "run-argv", *args], cwd=cwd, env=dict(os.environ, **env),
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)


def test_run_argv_masks_output_and_keeps_exit_codes(tmp_path, tcg_home):
    from tests.helpers.leaks import assert_no_secret_written

    (tmp_path / "notes.txt").write_text(f"token={SECRET}\n")
    r = run(["cat", "notes.txt"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert SECRET not in r.stdout and "<SECRET:" in r.stdout
    assert run(["grep", "no-such-text", "notes.txt"], tmp_path).returncode == 1
    assert_no_secret_written(tcg_home, [SECRET])


def test_run_argv_blocks_an_agent_reading_a_secret_store(tmp_path):
    (tmp_path / ".env").write_text("DB_PASSWORD=hunter2-not-real\n")
    r = run(["cat", ".env"], tmp_path, TCG_ACTOR="agent")
    assert r.returncode == 126
    assert "hunter2" not in r.stdout + r.stderr


def test_run_argv_without_a_command_is_a_usage_error(tmp_path):
    r = run([], tmp_path)
    assert r.returncode == 2 and "usage" in r.stderr
