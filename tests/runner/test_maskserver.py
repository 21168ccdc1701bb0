"""The masking fork server (tcg.runner.maskserver), driven over its real socket:
a worker it forks masks exactly like a fresh masking process, writes nothing
before the station confirmed the policy, and every refusal (another policy,
another install, changed code, another user) leaves the station on the fresh
path. Real processes throughout; sessions under tmux are in
tests/shells/test_session_maskserver.py."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tcg.runner import maskserver
from tcg.runner.maskproc import MaskerProcess, _entry
from tcg.runner.session_screen import header
from tests.helpers.mask_servers import fake_listener, listening, mask_servers, served_workers
from tests.helpers.waiting import wait_for

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")

TOKEN = "ghp_" + "Vt6Qa2Lm8Xc4Rb9Np3Hw7Kd1Zs5Fj0Ge2Yu4"
AWS = "AKIA" + "Q4TW8ZP2LX7HM3RK"
DATA = (f"plain line\r\nexport GITHUB_TOKEN={TOKEN}\r\n\x1b[1mbold\x1b[0m key {AWS} end\r\n"
        "P3> ").encode()


def _policy_key() -> str:
    """What a station names to its served worker: the key of the policy files it read."""
    from tcg.policy.sources import read_sources

    return read_sources().key


def _start_server(env: dict[str, str] | None = None) -> int:
    env = dict(os.environ if env is None else env)
    maskserver.launch(env)
    wait_for(lambda: listening(env), 120, "the server to listen")
    maskserver.reap()
    return wait_for(lambda: mask_servers(env["TCG_HOME"]), 30, "the server process")[0]


class Asked:
    """One request's pipes: the worker's input (w), its 'terminal' (out), stderr, control."""

    def __init__(self) -> None:
        r, self.w = os.pipe()
        self.out, outw = os.pipe()
        self.err, errw = os.pipe()
        cr, self.cw = os.pipe()
        self.got = maskserver.request(dict(os.environ), "terminal", [r, outw, errw, cr])
        for fd in (r, outw, errw, cr):
            os.close(fd)

    def finish(self) -> tuple[int | None, bytes]:
        for fd in (self.w, self.cw):
            os.close(fd)
        status = self.got.wait_exit(60) if isinstance(self.got, maskserver.Served) else None
        out = b""
        while chunk := os.read(self.out, 65536):
            out += chunk
        os.close(self.out)
        os.close(self.err)
        return status, out


def _ask() -> Asked:
    """A served worker (the server answers within REPLY_WAIT; a loaded machine may
    miss that, and a missed request is just asked again)."""
    asked: list[Asked] = []

    def once() -> bool:
        a = Asked()
        if isinstance(a.got, maskserver.Served):
            asked.append(a)
            return True
        a.finish()
        return False

    wait_for(once, 60, "a served masking worker")
    return asked[0]


def _fresh(data: bytes) -> bytes:
    """Today's masking process for a session, started fresh."""
    cr, cw = os.pipe()
    try:
        res = subprocess.run([sys.executable, "-c", _entry("tcg.runner.session_mask", "main"),
                              "--mode", "terminal", "--control-fd", str(cr)], input=data,
                             capture_output=True, pass_fds=(cr,), timeout=120, check=True)
    finally:
        os.close(cr)
        os.close(cw)
    return res.stdout


@pytest.fixture
def server() -> int:
    return _start_server()


def test_a_served_worker_masks_like_a_fresh_process(server):
    a = _ask()
    assert a.got.confirm(_policy_key(), 60)
    assert a.got.pid in served_workers(os.environ["TCG_HOME"])  # forked by the server, not ours
    for i in range(0, len(DATA), 9):  # in pieces, secrets across their edges
        os.write(a.w, (header(0) if i == 0 else b"") + DATA[i:i + 9])
    status, served = a.finish()
    assert status == 0
    fresh = _fresh(header(0) + DATA)
    assert served == fresh
    assert TOKEN.encode() not in served and AWS.encode() not in served
    assert served.count(b"<SECRET:") == 2 and b"plain line" in served


def test_a_worker_that_loaded_another_policy_refuses_and_writes_nothing(server):
    a = _ask()
    os.write(a.w, header(0) + DATA)  # already in its input: it must never reach the terminal
    assert not a.got.confirm("0" * 64, 60)
    status, out = a.finish()
    assert out == b""
    assert status == 0


def test_an_unconfirmed_worker_is_not_fed(server, capfd):
    """The station's side: a served process whose policy was not confirmed takes
    no output (the session then replaces it with a fresh one)."""
    got: list[MaskerProcess] = []

    def served() -> bool:
        proc = MaskerProcess("terminal", None, dict(os.environ), serve=True)
        proc.start()
        if proc.served is None:
            proc.discard()
            return False
        got.append(proc)
        return True

    wait_for(served, 60, "a served worker")
    proc = got[0]
    proc.feed(header(0) + DATA)
    assert proc.error is not None
    proc.discard()
    assert capfd.readouterr().out == ""


def test_a_server_refuses_a_client_of_another_install_and_exits(server):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(30)
    s.connect(maskserver.socket_path(os.environ))
    r, w = os.pipe()
    fds = [r, w, w, r, r]
    msg = b"\0".join([maskserver.MAGIC, b"/elsewhere/tcg|/usr/bin/python3|3.0|0.0", b"terminal",
                      b"18"])
    socket.send_fds(s, [msg], fds)
    assert s.recv(64).startswith(b"no")
    s.close()
    os.close(r)
    os.close(w)
    wait_for(lambda: not mask_servers(os.environ["TCG_HOME"]), 60, "the refused server to exit")
    assert not os.path.exists(maskserver.socket_path(os.environ))


def test_a_server_whose_code_changed_refuses_and_the_station_starts_fresh(server):
    import tcg.runner.session_mask as target

    path = target.__file__
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    try:
        proc = MaskerProcess("terminal", None, dict(os.environ), serve=True)
        proc.start()
        asked = proc.served is not None
        proc.confirm_policy(_policy_key())
        got = proc.served, proc.launch_server
        fresh = proc.pid is not None and os.waitpid(proc.pid, os.WNOHANG) == (0, 0)
        proc.discard()
    finally:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert asked
    assert got == (None, True)  # refused: a new server to start
    assert fresh  # and a fresh masking process of its own (our child)
    wait_for(lambda: not mask_servers(os.environ["TCG_HOME"]), 60, "the stale server to exit")


def test_without_a_server_the_station_starts_fresh_then_starts_one():
    assert not mask_servers(os.environ["TCG_HOME"])
    proc = MaskerProcess("terminal", None, dict(os.environ), serve=True)
    proc.start()
    assert proc.served is None and proc.pid is not None
    assert os.waitpid(proc.pid, os.WNOHANG) == (0, 0)  # our own child: today's fresh process
    proc.after_start()
    wait_for(lambda: mask_servers(os.environ["TCG_HOME"]), 120, "a server to start")
    wait_for(lambda: not maskserver.reap(), 30, "the launcher's exit to be collected")
    server = mask_servers(os.environ["TCG_HOME"])[0]
    assert Path(f"/proc/{server}/stat").read_text().rpartition(")")[2].split()[1] != str(os.getpid())
    proc.discard()


def test_switched_off_no_server_is_asked_or_started():
    env = dict(os.environ, TCG_MASK_SERVER="0")
    proc = MaskerProcess("terminal", None, env, serve=True)
    proc.start()
    assert proc.served is None and not proc.launch_server
    proc.discard()


def test_a_killed_server_leaves_its_workers_masking(server):
    a = _ask()
    assert a.got.confirm(_policy_key(), 60)
    os.kill(server, signal.SIGKILL)
    wait_for(lambda: not mask_servers(os.environ["TCG_HOME"]), 60, "the server to die")
    os.write(a.w, header(0) + DATA)
    status, out = a.finish()
    assert status == 0
    assert TOKEN.encode() not in out and AWS.encode() not in out and out.count(b"<SECRET:") == 2


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root and setpriv to connect as another user")
def test_a_server_serves_no_other_user(tmp_path):
    """Another uid that reaches the socket (its directory opened on purpose here)
    gets no worker: the connection is closed without a word."""
    base = Path(tempfile.mkdtemp(prefix="tcg-ms-uid-"))
    try:
        home = base / "tcg-home"
        (home / "cache").mkdir(parents=True, mode=0o700)
        src = Path(os.environ["TCG_HOME"])
        (home / "cache" / "detect").symlink_to((src / "cache" / "detect").resolve())
        (home / "state").mkdir(mode=0o700)
        shutil.copy2(src / "state" / "key", home / "state" / "key")
        env = dict(os.environ, TCG_HOME=str(home))
        _start_server(env)
        path = maskserver.socket_path(env)
        for d in (base, home, home / "state", Path(path).parent):
            os.chmod(d, 0o711)
        os.chmod(path, 0o666)
        probe = ("import os,socket,sys\ns=socket.socket(socket.AF_UNIX,socket.SOCK_SEQPACKET)\n"
                 "s.settimeout(20)\ns.connect(sys.argv[1])\nr,w=os.pipe()\nprint('connected')\n"
                 "try:\n    socket.send_fds(s,[sys.argv[2].encode().replace(b'|0|',b'\\0')],"
                 "[r,w,w,r,r])\n    print(repr(s.recv(64)))\n"
                 "except (BrokenPipeError, ConnectionResetError):\n    print('reset')\n")
        msg = "|0|".join([maskserver.MAGIC.decode(), maskserver.identity(), "terminal", "18"])
        res = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                              sys.executable, "-I", "-c", probe, path, msg],
                             capture_output=True, text=True, timeout=60)
        connected, answer = (res.stdout.split() + ["", ""])[:2]
        assert connected == "connected" and answer in ("b''", "reset"), res.stderr
        assert mask_servers(str(home))  # it goes on serving its own user
    finally:
        from tests.helpers.mask_servers import stop_mask_servers

        stop_mask_servers(str(base / "tcg-home"))
        shutil.rmtree(base, ignore_errors=True)


def test_the_station_replaces_a_worker_that_refused_its_policy_with_a_fresh_process(server):
    proc = MaskerProcess("terminal", None, dict(os.environ), serve=True)
    proc.start()
    assert proc.served is not None
    proc.confirm_policy("0" * 64)  # not the policy the worker loaded
    assert proc.served is None and proc.pid is not None
    assert os.waitpid(proc.pid, os.WNOHANG) == (0, 0)  # our own child: the fresh path
    assert not proc.launch_server  # the server itself is fine
    proc.discard()


def test_a_server_that_does_not_answer_leaves_the_station_on_the_fresh_path(server):
    """A stopped (or wedged) server: the request is queued, no answer comes within
    ANSWER_WAIT, and the session gets a fresh masking process of its own."""
    os.kill(server, signal.SIGSTOP)
    try:
        proc = MaskerProcess("terminal", None, dict(os.environ), serve=True)
        proc.start()
        assert proc.served is not None  # sent: the kernel queued it
        proc.confirm_policy(_policy_key())
        assert proc.served is None and proc.pid is not None
        assert os.waitpid(proc.pid, os.WNOHANG) == (0, 0)  # our own child: the fresh path
        proc.discard()
    finally:
        os.kill(server, signal.SIGCONT)


def test_a_peer_of_this_install_and_namespaces_is_trusted():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        assert maskserver.peer_is_ours(a) and maskserver.peer_is_ours(b)
    finally:
        a.close()
        b.close()




@pytest.mark.skipif(shutil.which("bwrap") is None, reason="optional tool not installed: bwrap")
def test_a_listener_in_another_mount_namespace_gets_no_session(tmp_path):
    """What a command inside the agents' OS view (namespaces of its own, the same
    uid, tcg's state dir writable) could do: bind its own socket at the server's
    path. The station must not hand it the session's raw output or terminal."""
    env = dict(os.environ)
    report = tmp_path / "fake"
    with fake_listener(maskserver.socket_path(env), report) as fake:
        r, w = os.pipe()
        try:
            got = maskserver.request(env, "terminal", [r, 1, 2, r])
        finally:
            os.close(r)
            os.close(w)
        assert got == "failed"
        assert fake.wait(timeout=60) == 0
        assert report.read_text() == "0 0"  # closed before a byte or a descriptor was sent


def test_masking_processes_never_import_tcg_from_the_working_directory(tmp_path, monkeypatch):
    """A repository may hold a ``tcg/`` directory (an agent can write one): the
    masking process and the fork server must load the installed tcg, not that."""
    trap = tmp_path / "repo"
    (trap / "tcg").mkdir(parents=True)
    mark = tmp_path / "imported"
    (trap / "tcg" / "__init__.py").write_text(f"open({str(mark)!r}, 'w').close()\n")
    monkeypatch.chdir(trap)
    proc = MaskerProcess("terminal", None, dict(os.environ), serve=True)
    proc.start()
    assert proc.served is None and proc.pid is not None  # no server yet: a fresh process
    proc.after_start()  # and the server it starts, in the same directory
    wait_for(lambda: listening(os.environ), 120, "the server to listen")
    maskserver.reap()
    proc.discard()
    a = _ask()
    assert a.got.confirm(_policy_key(), 60)
    os.write(a.w, header(0) + DATA)
    status, out = a.finish()
    assert status == 0 and out.count(b"<SECRET:") == 2
    assert not mark.exists()


def _zombie_children() -> list[int]:
    """Our children that have exited and not been collected."""
    me = str(os.getpid())
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue
            if len(stat) > 1 and stat[1] == me and stat[0] == "Z":
                out.append(int(entry))
    return out


def test_the_launcher_of_a_server_is_collected_without_any_output():
    """The ``sh`` that starts a server exits at once; it must not stay a zombie of
    the station until the session's next output (or its end)."""
    proc = MaskerProcess("terminal", None, dict(os.environ), serve=True)
    proc.start()
    assert proc.launch_server
    proc.after_start(delay=0)  # no feed, no flush from here on
    wait_for(lambda: mask_servers(os.environ["TCG_HOME"]), 120, "a server to start")
    wait_for(lambda: not _zombie_children(), 30, "the launcher to be collected")
    assert not maskserver.reap(30)
    proc.discard()


def test_the_station_stops_a_worker_through_its_pidfd_never_by_pid(server):
    """The pid in the answer may name another process by the time the station
    kills the worker: it must be the worker that dies, whatever that number is."""
    a = _ask()
    assert a.got.confirm(_policy_key(), 60)
    worker = a.got.pid
    fdinfo = Path(f"/proc/self/fdinfo/{a.got.pidfd}").read_text()
    assert f"Pid:\t{worker}\n" in fdinfo  # the server's pidfd names its worker
    assert not os.get_inheritable(a.got.pidfd)  # what the station starts later never holds it
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        a.got.pid = bystander.pid  # as if the worker's pid had been reused
        pidfd = os.pidfd_open(worker)
        a.got.kill()
        wait_for(lambda: _exited(pidfd), 30, "the worker to die")
        os.close(pidfd)
        assert bystander.poll() is None  # never signalled
    finally:
        bystander.kill()
        bystander.wait()
        for fd in (a.w, a.cw, a.out, a.err):
            os.close(fd)


def _exited(pidfd: int) -> bool:
    import select

    return bool(select.select([pidfd], [], [], 0)[0])


def test_an_answer_without_the_workers_pidfd_is_a_refusal():
    """A server that cannot name its worker by pidfd is not used: the station
    could then stop that worker only by its pid."""
    station, server_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    with server_end:
        served = maskserver.Served(station)
        server_end.send(b"ok 12345")
        assert not served._answer(5)
        assert served.pid is None and served.pidfd == -1
        served.close()


def test_a_session_that_ends_before_its_launch_delay_still_starts_a_server():
    """The launch waits for the first prompt to be out; a session closed sooner
    (a script, a terminal opened by mistake) must still leave a server behind."""
    proc = MaskerProcess("terminal", None, dict(os.environ), serve=True)
    proc.start()
    proc.after_start(delay=600)
    os.write(proc.input_fd, header(0))
    proc.flush()  # the session ends
    wait_for(lambda: mask_servers(os.environ["TCG_HOME"]), 60, "a server to start")
    assert not maskserver.reap()
