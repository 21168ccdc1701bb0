"""Item 4: the content-reader aliases in a NON-interactive shell, the way an
agent's replayed shell snapshot uses them (aliases expanded, stdin/stdout not
a TTY) — with the real station agent, policy engine and masker."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from .conftest import real_mediation_works, render

pytestmark = pytest.mark.shell

SECRET = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"


@pytest.fixture
def hooked(tmp_path, shell_name, warm_cache, tcg_home):
    if not real_mediation_works():
        pytest.skip("`tcg_shell run-line true` does not exit 0 yet (station/engine not ready)")
    if warm_cache.is_dir():
        shutil.copytree(warm_cache, tcg_home / "cache", dirs_exist_ok=True)
    hook = tmp_path / "hook.sh"
    hook.write_text(render(shell_name, python=sys.executable))
    (tmp_path / "notes.txt").write_text(f"token={SECRET}\n")
    (tmp_path / ".env").write_text("DB_PASSWORD=hunter2-not-real\n")
    prelude = "shopt -s expand_aliases\n" if shell_name == "bash" else ""

    def run(cmd: str, **env):
        import os

        e = dict(os.environ, **env)
        script = f"{prelude}source '{hook}'\neval {cmd!r}\n"
        return subprocess.run([shutil.which(shell_name), "-c", script], cwd=tmp_path, env=e,
                              capture_output=True, stdin=subprocess.DEVNULL, text=True, timeout=120)

    return run


def test_reader_alias_masks_output_in_pipe_mode(hooked, tcg_home):
    from tests.helpers.leaks import assert_no_secret_written

    r = hooked("cat notes.txt")
    assert r.returncode == 0, r.stderr
    assert SECRET not in r.stdout and "<SECRET:" in r.stdout
    assert_no_secret_written(tcg_home, [SECRET])


def test_reader_alias_blocks_agent_secret_store_read(hooked):
    r = hooked("cat .env", TCG_ACTOR="agent")
    assert r.returncode == 126
    assert "hunter2" not in r.stdout + r.stderr


def test_reader_alias_keeps_exit_codes(hooked):
    r = hooked("grep no-such-text notes.txt")
    assert r.returncode == 1
