"""`tcg_shell init --profile` (tcg.shells.profile) in real login shells: the block
starts the masking fork server sessions then use, and where a login profile runs
again (tmux panes, a session's own login shell) it starts no Python at all. The
shells' ``-x`` trace shows whether the interpreter ran; nothing is timed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.mask_servers import listening, mask_servers
from tests.helpers.waiting import wait_for

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the server is Linux only")

TCG_SHELL = str(Path(sys.executable).with_name("tcg_shell"))
# (login shell, its profile file): dash and bash read ~/.profile, zsh ~/.zprofile
LOGINS = [("sh", ".profile"), ("bash", ".profile"), ("zsh", ".zprofile")]


def _block(env: dict[str, str] | None = None) -> str:
    res = subprocess.run([TCG_SHELL, "init", "--profile"], capture_output=True, text=True,
                         check=True, timeout=120, env=env)
    return res.stdout


def _login(shell: str, home: Path, **extra: str) -> str:
    """One login shell run with its trace on; the trace (stderr)."""
    exe = shutil.which(shell)
    if exe is None:
        pytest.skip(f"{shell} is not installed")
    env = dict(os.environ, HOME=str(home), ZDOTDIR=str(home), **extra)
    res = subprocess.run([exe, "-l", "-x", "-c", "true"], capture_output=True, text=True, env=env,
                         timeout=120, cwd=home)
    assert res.returncode == 0, res.stderr
    return res.stderr


@pytest.mark.parametrize(("shell", "profile"), LOGINS)
def test_the_block_starts_the_server_sessions_use_and_then_no_python(tmp_path, shell, profile):
    (tmp_path / profile).write_text("echo before >/dev/null\n" + _block())
    first = _login(shell, tmp_path)
    assert "maskserver_cmd" in first  # no server: the start ran (in the background)
    wait_for(lambda: listening(os.environ), 120, "the server the login started")
    [pid] = mask_servers(os.environ["TCG_HOME"])
    status = subprocess.run([TCG_SHELL, "mask-server", "status"], capture_output=True, text=True,
                            timeout=120)
    assert status.returncode == 0 and f"(pid {pid};" in status.stdout  # the sessions' server
    again = _login(shell, tmp_path)  # a tmux pane's login shell: the socket is there
    assert "maskserver_cmd" not in again
    assert mask_servers(os.environ["TCG_HOME"]) == [pid]


@pytest.mark.parametrize(("shell", "profile"), LOGINS)
def test_inside_a_session_the_block_starts_nothing(tmp_path, shell, profile):
    (tmp_path / profile).write_text(_block())
    trace = _login(shell, tmp_path, TCG_SESSION="s-1")  # the session's own login shell
    assert "maskserver_cmd" not in trace
    assert not mask_servers(os.environ["TCG_HOME"])


@pytest.mark.parametrize(("shell", "profile"), LOGINS)
def test_paths_with_spaces_and_quotes_reach_the_server_intact(tmp_path, shell, profile):
    home = tmp_path / "h o'm\"e $x"
    env = dict(os.environ, TCG_HOME=str(home))
    (tmp_path / profile).write_text(_block(env))
    try:
        _login(shell, tmp_path, TCG_HOME=str(home))
        wait_for(lambda: listening(env), 120, "the server the login started")
        status = subprocess.run([TCG_SHELL, "mask-server", "status"], capture_output=True,
                                text=True, timeout=120, env=env)
        assert status.returncode == 0 and "serving this install" in status.stdout
        assert len(mask_servers(str(home))) == 1
    finally:  # not the test's TCG_HOME: the hermetic fixture would not stop it
        subprocess.run([TCG_SHELL, "mask-server", "stop"], capture_output=True, timeout=120,
                       env=env)


def test_no_block_where_no_server_can_run():
    res = subprocess.run([TCG_SHELL, "init", "--profile"], capture_output=True, text=True,
                         timeout=120, env=dict(os.environ, TCG_MASK_SERVER="0"))
    assert res.returncode == 1 and res.stdout == ""
    assert "the masking fork server is off (TCG_MASK_SERVER=0)" in res.stderr


def test_the_block_is_posix_sh_and_uninstall_removes_it(tmp_path):
    block = _block()
    if shutil.which("shellcheck"):
        res = subprocess.run(["shellcheck", "-s", "sh", "-"], input=block, capture_output=True,
                             text=True)
        assert res.returncode == 0, res.stdout
    profile = tmp_path / ".profile"
    profile.write_text("export EDITOR=vi\n" + block + "umask 022\n")
    res = subprocess.run([TCG_SHELL, "init", "--uninstall", "bash", "--rc", str(profile)],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert profile.read_text() == "export EDITOR=vi\numask 022\n"


def test_profile_takes_no_other_argument():
    res = subprocess.run([TCG_SHELL, "init", "--profile", "bash"], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 2 and "unexpected arguments: --profile bash" in res.stderr
