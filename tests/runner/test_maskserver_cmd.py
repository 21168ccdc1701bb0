"""``tcg_shell mask-server start|status|stop`` (tcg.runner.maskserver_cmd) against
real servers over their real socket: one server per install however often it is
started, the idle time it was given (which asking its status does not extend), a
stale server replaced, a stop that leaves the sessions it served masking."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tcg.runner import maskserver
from tests.helpers.mask_servers import fake_listener, listening, mask_servers
from tests.helpers.waiting import wait_for

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")

TCG_SHELL = str(Path(sys.executable).with_name("tcg_shell"))


def _cmd(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([TCG_SHELL, "mask-server", *args], capture_output=True, text=True,
                          env=env, timeout=180)


def _servers() -> list[int]:
    return mask_servers(os.environ["TCG_HOME"])


def test_start_runs_one_server_however_often_it_is_started():
    status = _cmd("status")
    assert status.returncode == 1 and "no server runs for this install" in status.stdout
    first = _cmd("start", "--wait", "120")
    assert first.returncode == 0, first.stderr
    assert first.stdout == first.stderr == ""  # a login profile's line prints nothing
    [pid] = _servers()
    again = _cmd("start", "--wait", "120")
    assert again.returncode == 0 and _servers() == [pid]
    status = _cmd("status")
    assert status.returncode == 0
    assert f"serving this install (pid {pid}; it exits after 43200 s" in status.stdout
    # started by hand, it loads at once (a session's launch waits for its first prompt)
    assert maskserver.NOW.encode() in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")


def test_a_started_server_leaves_after_its_idle_time_which_a_status_does_not_extend():
    assert _cmd("start", "--idle", "3", "--wait", "120").returncode == 0
    assert "it exits after 3 s" in _cmd("status").stdout

    def gone() -> bool:
        _cmd("status")  # asked over and over: no request, so no reason to stay
        return not _servers()

    wait_for(gone, 120, "the idle server to exit")
    assert not os.path.exists(maskserver.socket_path(os.environ))


def test_stop_ends_the_server_and_says_so_when_none_runs():
    assert _cmd("start", "--wait", "120").returncode == 0
    [pid] = _servers()
    stopped = _cmd("stop")
    assert stopped.returncode == 0 and "stopped" in stopped.stdout
    wait_for(lambda: not os.path.exists(f"/proc/{pid}") or pid not in _servers(), 60,
             "the stopped server to exit")
    assert not os.path.exists(maskserver.socket_path(os.environ))
    again = _cmd("stop")
    assert again.returncode == 0 and "none was running" in again.stdout


def test_a_stopped_server_leaves_the_workers_it_forked_masking():
    from tests.runner.test_maskserver import DATA, TOKEN, _ask, _policy_key

    assert _cmd("start", "--wait", "120").returncode == 0
    asked = _ask()
    assert asked.got.confirm(_policy_key(), 60)
    assert _cmd("stop").returncode == 0
    wait_for(lambda: not _servers(), 60, "the stopped server to exit")
    from tcg.runner.session_screen import header

    os.write(asked.w, header(0) + DATA)
    status, out = asked.finish()
    assert status == 0
    assert TOKEN.encode() not in out and b"<SECRET:" in out


def test_start_replaces_a_server_whose_code_changed():
    assert _cmd("start", "--wait", "120").returncode == 0
    [old] = _servers()
    import tcg.runner.session_mask as target

    path = target.__file__
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    try:
        started = _cmd("start", "--wait", "120")
        new = _servers()
    finally:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert started.returncode == 0, started.stderr
    assert len(new) == 1 and new[0] != old


@pytest.mark.parametrize("args, code, words", [
    (("start", "--idle", "0"), 2, "--idle needs a whole number of seconds above 0"),
    (("start", "--wait"), 2, "--wait needs a whole number of seconds"),
    (("start", "now"), 2, "unexpected arguments: now"),
    (("status", "x"), 2, "unknown or malformed command"),
    (("restart",), 2, "unknown or malformed command"),
    ((), 2, "usage: tcg_shell mask-server start"),
])
def test_bad_arguments_are_usage_errors(args, code, words):
    res = _cmd(*args)
    assert res.returncode == code and words in res.stderr
    assert not _servers()


def test_switched_off_start_refuses_with_the_reason():
    res = _cmd("start", env=dict(os.environ, TCG_MASK_SERVER="0"))
    assert res.returncode == 1
    assert "no masking fork server here (TCG_MASK_SERVER=0 turns it off)" in res.stderr
    assert "hint:" in res.stderr
    assert not _servers()


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="optional tool not installed: bwrap")
@pytest.mark.parametrize("verb", ["status", "stop", "start"])
def test_a_listener_tcg_does_not_trust_is_told_nothing(tmp_path, verb):
    """A process in other namespaces (the agents' OS view) bound at the server's path:
    the command names it and sends it not a byte (not even ``stop``)."""
    path = maskserver.socket_path(os.environ)
    with fake_listener(path, tmp_path / "fake") as fake:
        res = _cmd(verb)
        assert res.returncode == 1
        assert f"a process this install does not trust listens at {path}" in res.stderr
        assert fake.wait(timeout=60) == 0
        assert (tmp_path / "fake").read_text() == "0 0"
        assert not _servers()


def test_a_server_still_loading_is_reported_then_stopped_once_it_serves():
    from tcg.runner.maskserver_cmd import lock_held

    env = dict(os.environ)
    maskserver.launch(env)  # as a session launches it: it holds the lock, waits, loads, listens
    wait_for(lambda: lock_held(env), 60, "the new server to take its lock")
    status = _cmd("status")
    if not listening(env):  # (a slow machine has it loading still)
        assert status.returncode == 1 and "a server is loading" in status.stdout
    stopped = _cmd("stop")
    assert stopped.returncode == 0 and "stopped" in stopped.stdout, stopped
    wait_for(lambda: not _servers(), 60, "the stopped server to exit")
    maskserver.reap(10)


def test_a_held_lock_without_a_listener_is_a_loading_server(tmp_path):
    """What status and stop see while a server loads (here the test holds the lock)."""
    import fcntl

    path = maskserver.lock_path(maskserver.socket_path(os.environ))
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        status = _cmd("status")
        assert status.returncode == 1 and "a server is loading" in status.stdout
        stopped = _cmd("stop", "--wait", "1")
        assert stopped.returncode == 1 and "not stopped: a server is loading" in stopped.stderr
    finally:
        os.close(fd)
    gone = _cmd("stop")
    assert gone.returncode == 0 and "none was running" in gone.stdout


def test_a_fifo_at_the_lock_path_does_not_hang_the_command():
    path = maskserver.lock_path(maskserver.socket_path(os.environ))
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    os.mkfifo(path)
    res = _cmd("status")
    assert res.returncode == 1 and "no server runs for this install" in res.stdout


def test_a_server_leaves_by_itself_once_its_code_changed_on_disk():
    assert _cmd("start", "--wait", "120").returncode == 0
    import tcg.runner.session_mask as target

    st = os.stat(target.__file__)
    os.utime(target.__file__, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    try:  # no request comes (an upgrade moves sessions to another socket): it checks every 10 s
        wait_for(lambda: not _servers(), 120, "the stale server to exit")
    finally:
        os.utime(target.__file__, ns=(st.st_atime_ns, st.st_mtime_ns))


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "0", "-5", "x", ""])
def test_an_idle_time_that_is_no_positive_number_is_the_default(value):
    assert maskserver._idle({maskserver.ENV_IDLE: value}) == maskserver.IDLE
    assert maskserver._idle({maskserver.ENV_IDLE: "12"}) == 12.0


def test_off_linux_every_command_says_there_is_no_server(monkeypatch, capsys):
    from tcg.runner import maskserver_cmd

    monkeypatch.setattr(sys, "platform", "darwin")
    for verb in ("start", "status", "stop"):
        assert maskserver_cmd.main([verb]) == 1
        assert "no masking fork server on this system (it runs on Linux only)" in capsys.readouterr().err


def test_switched_off_status_says_so():
    res = _cmd("status", env=dict(os.environ, TCG_MASK_SERVER="0"))
    assert res.returncode == 1 and "(TCG_MASK_SERVER=0: sessions use none)" in res.stdout


def test_a_socket_path_too_long_is_named(tmp_path):
    home = tmp_path / ("h" * 120)
    env = dict(os.environ, TCG_HOME=str(home))
    for verb in ("start", "status"):
        res = _cmd(verb, env=env)
        assert res.returncode == 1 and "the server's socket path is too long" in res.stderr
    assert not mask_servers(str(home))


def test_status_of_a_server_whose_code_changed_says_it_left():
    assert _cmd("start", "--wait", "120").returncode == 0
    import tcg.runner.session_mask as target

    st = os.stat(target.__file__)
    os.utime(target.__file__, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    try:
        status = _cmd("status")
    finally:
        os.utime(target.__file__, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert status.returncode == 1
    assert "no server runs for this install (one of other code has just left)" in status.stdout
    assert "loading" not in status.stdout
