"""A per-user fork server for the masking processes of terminal sessions.

A session's masking process (tcg.runner.session_mask) needs ~80 ms of CPU before
it can mask the first byte: the interpreter, the masker's imports, the policy and
the detector from its signed cache. A prompt that changes every time cannot be
shown before that (tcg.runner.session_screen shows only known first screens
early), so every new terminal waited for it.

The first session of a tcg install starts this server, detached. It imports the
masking code and builds the detector once; for each later session it forks a
worker that receives the session's descriptors over a Unix socket (SCM_RIGHTS):
its input pipe, the terminal, stderr, the control pipe and the working
directory. The worker takes the session's environment and umask, loads the
policy itself in the session's directory exactly as a fresh process would, and
then runs the same code (tcg.runner.session_mask.run_worker): header, control
messages and policy following are unchanged. Only what is already in memory
(imports, the detector built for the same disabled rules) is shared.

Safety:
- the socket lives in a 0700 directory under tcg's state dir, the server checks
  the peer's uid (SO_PEERCRED) and the client the server's;
- the station sends the install's identity; a server with another one, or whose
  source files changed on disk since it loaded them, refuses and exits;
- the worker writes nothing until the station confirmed the policy fingerprint it
  decided with (``policy FP`` -> ``ok``); on a mismatch it refuses and exits;
- the station stops a worker only through a pidfd the server (its parent, which
  has not reaped it yet, so its pid cannot have been reused) opened and sent with
  its answer, never by the pid number; a server on a system without pidfds does
  not serve;
- every failure (no server, refused, no answer within REPLY_WAIT, a dead worker)
  leaves the station with today's fresh masking process; nothing is ever shown
  unmasked.
The server exits after IDLE seconds without a request. ``TCG_MASK_SERVER=0``
turns it off (every session then starts a fresh masking process).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket as socket_mod
    from collections.abc import Mapping
    from typing import Any

ENV_SWITCH = "TCG_MASK_SERVER"
ENV_IDLE = "TCG_MASK_SERVER_IDLE"  # seconds; tests shorten it
IDLE = 1800.0  # a server nobody asked for this long exits
REPLY_WAIT = 0.05  # seconds the station's connect and send may take
ANSWER_WAIT = 0.1  # seconds the server may still take to answer when the station confirms
MAGIC = b"tcgmask1"
MAX_FDS = 5  # input, terminal, stderr, control, working directory
FD_SIZE = memoryview(b"").cast("i").itemsize  # bytes of one descriptor in SCM_RIGHTS data
SUN_PATH_MAX = 107
START_DELAY = 0.5  # seconds a new server waits before it loads (see serve_main)
LAUNCH_DELAY = 1.0  # seconds after a session's start that it launches a server (launch)
NOW = "--now"  # the server's argument: load without START_DELAY
# What `tcg_shell mask-server` may ask (tcg.runner.maskserver_cmd): MAGIC, the
# install's identity and one of these, no descriptors. ``ping`` is answered
# ``serving PID IDLE`` (and is no request: the idle time runs on), ``stop`` with
# ``stopping`` before the server exits; its workers go on masking their sessions.
CONTROL = (b"ping", b"stop")


def enabled(env: Mapping[str, str]) -> bool:
    return env.get(ENV_SWITCH, "1") != "0" and sys.platform.startswith("linux")


def identity() -> str:
    """What a server must share with its clients: this tcg package, this
    interpreter, this version (the source files' state is the server's own check)."""
    import tcg

    return "|".join((os.path.dirname(os.path.abspath(tcg.__file__)), sys.executable,
                     sys.version.split()[0], tcg.__version__))


def socket_dir(env: Mapping[str, str]) -> str:
    from tcg.paths import get_paths

    return os.path.join(get_paths(env).state_dir, "maskserver")


def socket_path(env: Mapping[str, str]) -> str:
    """One server per install and per tcg state dir (installs side by side do not
    evict each other's server)."""
    import zlib

    return os.path.join(socket_dir(env), f"{zlib.crc32(identity().encode()):08x}.sock")


def lock_path(socket: str) -> str:
    """The lock a server holds from before it loads until it exits, beside its socket."""
    return socket[:-5] + ".lock"


def code_stamp() -> bytes:
    """The state of the tcg code on disk, as tcg.fingerprint names it for every
    cache: a wheel's RECORD (pip rewrites it on every install, upgrade or
    reinstall: one small read), else the path, size, mtime and inode of every file
    (an editable install or a checkout: ~260 stats). A server whose code changed
    on disk since it loaded it must not serve."""
    import tcg
    from tcg.fingerprint import code_state

    return code_state(os.path.dirname(os.path.abspath(tcg.__file__)), tcg.__version__)


def peer_is_ours(sock: Any) -> bool:
    """Whether the process at the other end of ``sock`` may be trusted with a
    session's unmasked output (client side) or may ask for a worker (server side):
    the same uid, the same mount, pid and user namespaces, and the same interpreter
    binary. A process inside the agents' OS view (tcg.sandbox: namespaces of its
    own) shares the uid and can write tcg's state dir, so the uid alone would let
    it bind a socket of its own at the server's path and receive every later
    session's raw output; the namespaces tell it apart. Any doubt is False."""
    import struct

    from tcg._lean import sockets as socket

    try:
        pid, uid, _ = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                          struct.calcsize("3i")))
        if uid != os.getuid() or pid <= 0:
            return False
        for ns in ("mnt", "pid", "user"):
            if os.readlink(f"/proc/{pid}/ns/{ns}") != os.readlink(f"/proc/self/ns/{ns}"):
                return False
        return os.path.realpath(f"/proc/{pid}/exe") == os.path.realpath("/proc/self/exe")
    except (OSError, struct.error, ValueError):
        return False


# ---------------------------------------------------------------- client side


class Served:
    """A masking worker asked of the server for this station: ``conn`` is the
    connection the worker keeps until it exits (its last message is ``exit N``).
    The server's answer (``ok PID`` and the worker's pidfd) is read only when the
    station confirms the policy, so its fork never holds up the shell's start."""

    def __init__(self, conn: Any):
        self.conn = conn
        self.pid: int | None = None
        self.pidfd = -1
        self.refused = False  # the server said no (and exits): start another one

    def _answer(self, wait: float) -> bool:
        """The server forked the worker (True); False: it refused, or no answer
        within ``wait`` seconds."""
        if self.pid is not None:
            return True
        try:
            self.conn.settimeout(wait)
            reply, pidfd = _recv_pidfd(self.conn)
        except OSError:
            return False
        if not (reply.startswith(b"ok ") and reply[3:].isdigit() and pidfd >= 0):
            if pidfd >= 0:
                os.close(pidfd)
            self.refused = reply.startswith(b"no")
            return False
        self.pid, self.pidfd = int(reply[3:]), pidfd
        return True

    def confirm(self, key: str, wait: float) -> bool:
        """The worker loaded the policy files the station read (True: their key,
        tcg.policy.sources, is the one it loaded), or the server refused, the
        worker refused, died or did not answer in time (False)."""
        if not self._answer(ANSWER_WAIT):
            return False
        try:
            self.conn.settimeout(wait)
            self.conn.send(b"policy " + key.encode())
            return self.conn.recv(64) == b"ok"
        except OSError:
            return False

    def wait_exit(self, limit: float) -> int | None:
        """The worker's exit code once its input is closed; None if it did not end
        within ``limit`` (it is then killed); 128+9 if it died without a word."""
        if self.pid is None:  # never confirmed: it wrote nothing and ends on the closed connection
            self.close()
            return 0
        try:
            self.conn.settimeout(limit)
            data = self.conn.recv(64)
        except TimeoutError:
            self.kill()
            return None
        except OSError:
            data = b""
        self.close()
        if data.startswith(b"exit ") and data[5:].isdigit():
            return int(data[5:])
        return 128 + 9

    def kill(self) -> None:
        """Stop the worker: SIGKILL through the pidfd its server sent (never by pid:
        the number may belong to another process by now); before the answer, the
        closed connection ends it before it could write anything."""
        import signal

        try:
            if self.pidfd >= 0:
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
        except OSError:
            pass  # it has exited (and been reaped): nothing to stop
        self.close()

    def close(self) -> None:
        if self.pidfd >= 0:
            os.close(self.pidfd)
            self.pidfd = -1
        self.conn.close()


def _recv_pidfd(conn: Any) -> tuple[bytes, int]:
    """The server's answer and the one descriptor sent with it (-1: none)."""
    from tcg._lean import sockets as socket

    # never inherited by what the station starts later (a fresh masker, the server's launcher)
    msg, ancillary, flags, _ = conn.recvmsg(64, socket.CMSG_SPACE(FD_SIZE), socket.MSG_CMSG_CLOEXEC)
    fds: list[int] = []
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            # C ints, as array.array("i") reads them; `import array` loads collections.abc
            # (~5 ms) on a new terminal's path to its first prompt, memoryview nothing
            fds += memoryview(data[: len(data) - len(data) % FD_SIZE]).cast("i").tolist()
    if flags & socket.MSG_CTRUNC or len(fds) != 1:
        for fd in fds:
            os.close(fd)
        return msg, -1
    os.set_inheritable(fds[0], False)  # where MSG_CMSG_CLOEXEC is not there
    return msg, fds[0]


def request(env: Mapping[str, str], mode: str, fds: list[int]) -> Served | str:
    """Ask the server for a masking worker on ``fds`` (input, terminal, stderr,
    control). A Served (the request is sent; Served.confirm reads the answer),
    or why not: "absent" (no server: start one) or "failed"."""
    import struct

    from tcg._lean import sockets as socket

    path = socket_path(env)
    if len(path.encode()) > SUN_PATH_MAX:
        return "failed"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC)
    cwd = -1
    try:
        s.settimeout(REPLY_WAIT)
        try:
            s.connect(path)
        except (FileNotFoundError, ConnectionRefusedError):
            s.close()
            return "absent"
        if not peer_is_ours(s):
            s.close()
            return "failed"
        cwd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        umask = os.umask(0o077)
        os.umask(umask)
        fields = [MAGIC, identity().encode(), mode.encode(), b"%d" % umask]
        fields += [f"{k}={v}".encode("utf-8", "surrogateescape") for k, v in env.items()]
        s.sendmsg([b"\0".join(fields)], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                           struct.pack(f"{len(fds) + 1}i", *fds, cwd))])
    except OSError:
        s.close()
        return "failed"
    finally:
        if cwd >= 0:
            os.close(cwd)
    return Served(s)


_launchers: list[tuple[Any, Any]] = []  # (thread, its "go now" event) of each launch()


def launch(env: Mapping[str, str], delay: float = 0.0, now: bool = False) -> None:
    """Start the server, detached (best effort: without one, sessions start fresh
    masking processes as before), ``delay`` seconds from now: a session launches
    it after its first prompt, whose masking process and shell need the CPU first;
    one that ends sooner launches it as it ends (hurry). In a session of its own, through ``sh … &``, so the server is not the station's
    child (no zombie when it exits first); a thread waits for the ``sh``, which
    exits at once, so it is not left a zombie either, whatever the session does.
    ``now``: the server loads at once (``tcg_shell mask-server start``: no session
    of its own is starting beside it)."""
    import threading

    argv = ["/bin/sh", "-c", '"$@" &', "sh", sys.executable, "-I", "-c",
            "import sys;from tcg.runner.maskserver import serve_main;"
            "sys.exit(serve_main())#tcg.runner.maskserver --server", *([NOW] if now else [])]
    null = os.devnull
    actions = [(os.POSIX_SPAWN_OPEN, 0, null, os.O_RDONLY, 0),
               (os.POSIX_SPAWN_OPEN, 1, null, os.O_WRONLY, 0),
               (os.POSIX_SPAWN_OPEN, 2, null, os.O_WRONLY, 0)]
    env = dict(env)
    go = threading.Event()

    def run() -> None:
        go.wait(delay)
        try:
            pid = os.posix_spawn(argv[0], argv, env, file_actions=actions, setsid=True)
        except OSError:
            return
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass

    thread = threading.Thread(target=run, name="tcg-maskserver-launch", daemon=True)
    thread.start()
    _launchers.append((thread, go))


def hurry(wait: float = 2.0) -> None:
    """Launch now what launch() is still waiting to launch (a session that ends
    within its delay must still leave a server for the next one), and collect
    the launchers, waiting up to ``wait`` seconds."""
    for _, go in _launchers:
        go.set()
    reap(wait)


def reap(wait: float = 0.0) -> bool:
    """Forget the launches whose ``sh`` has exited and been collected, waiting up
    to ``wait`` seconds for them; True while one has not."""
    for entry in list(_launchers):
        entry[0].join(wait)
        if not entry[0].is_alive():
            _launchers.remove(entry)
    return bool(_launchers)


# ---------------------------------------------------------------- server side


def serve_main() -> int:
    """The server (launch()): take the install's lock, load, serve."""
    import fcntl
    import time

    stamp = code_stamp()  # first: an edit from here on makes this server stale
    os.closerange(3, 65536)  # nothing of the first station's (or its shell's) is kept for hours
    if not _pidfds_work():
        return 0  # a station could stop a worker only by its pid: serve nothing
    env = os.environ
    path = socket_path(env)
    if len(path.encode()) > SUN_PATH_MAX:
        return 0
    directory = os.path.dirname(path)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    st = os.stat(directory)
    if st.st_uid != os.getuid() or st.st_mode & 0o077:
        return 0  # not a private directory of ours: serve nothing
    lock = os.open(lock_path(path), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    for attempt in range(6):  # `tcg_shell mask-server status` holds it shared for a moment
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except OSError:
            if attempt == 5:
                return 0  # another server of this install is starting or running
            time.sleep(0.01)
    if NOW not in sys.argv[1:]:
        time.sleep(START_DELAY)  # the first session's own masking process and shell go first
    _preload()
    listener = _listen(path)
    ino = os.stat(path).st_ino
    os.chdir("/")
    import gc

    gc.collect()
    gc.freeze()  # forked workers do not copy the loaded objects' pages to scan them
    try:
        _serve(listener, path, ino, stamp, lock, _idle(env))
    finally:
        _unlink_if_ours(path, ino, listener)
    return 0


def _pidfds_work() -> bool:
    """Whether this system gives pidfds (Linux 5.3+, Python 3.9+)."""
    try:
        os.close(os.pidfd_open(os.getpid()))
    except (AttributeError, OSError):
        return False
    return True


def _reap_workers() -> None:
    """Collect the exits of workers that ended: they stay zombies until then, so
    a pidfd the server opens for one always names that worker, never a process
    that reused its pid."""
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _idle(env: Mapping[str, str]) -> float:
    """TCG_MASK_SERVER_IDLE where it is a number of seconds above 0, else IDLE."""
    try:
        value = float(env.get(ENV_IDLE, ""))
    except ValueError:
        return IDLE
    return value if 0 < value < float("inf") else IDLE  # nan, inf: IDLE


def _replaced(stamp: bytes) -> bool:
    """This server's interpreter binary was replaced on disk (a peer check of it
    then fails both ways) or its code changed: it must not serve on (an upgrade
    moves sessions to another socket; nothing would ever ask this one again)."""
    return _exe_deleted() or code_stamp() != stamp


def _exe_deleted() -> bool:
    """This process's interpreter binary was removed or replaced on disk."""
    try:
        return os.readlink("/proc/self/exe").endswith(" (deleted)")
    except OSError:
        return True


def _preload() -> None:
    """What a worker would load: the masking code and the detector for the policy
    in force where the server was started (a session elsewhere whose policy
    disables other rules builds its own detector in its worker)."""
    from tcg.mask import masker_for
    from tcg.mask.filter import pump  # noqa: F401
    from tcg.runner import session_mask, session_screen, term_writer  # noqa: F401

    try:
        masker = masker_for(session_mask._load(), "terminal")
        masker.feed(b"tcg\r\n$ ")
        masker.flush()
    except Exception:  # noqa: BLE001 - a worker loads (and reports) on its own
        pass


def _listen(path: str) -> socket_mod.socket:
    import socket

    try:
        os.unlink(path)  # a dead server's (we hold the lock)
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC)
    old = os.umask(0o177)
    try:
        listener.bind(path)
    finally:
        os.umask(old)
    listener.listen(16)
    return listener


def _unlink_if_ours(path: str, ino: int, listener: socket_mod.socket) -> None:
    """Remove the socket unless another server's has taken its place."""
    try:
        if os.stat(path).st_ino == ino:
            os.unlink(path)
    except OSError:
        pass
    listener.close()


def _serve(listener: socket_mod.socket, path: str, ino: int, stamp: bytes, lock: int,
           idle: float) -> None:
    """Answer requests until IDLE passes without one, the code on disk changes or
    the socket is no longer ours."""
    import signal
    import socket
    import struct
    import time

    # Workers report on their connection. Their exits are collected here, after
    # each request and every 10 s (_reap_workers), never by the kernel or a signal
    # handler at any moment: SIG_IGN would reap a worker at once, and its pid could
    # be reused before the pidfd for it is opened.
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    last = time.monotonic()
    while True:
        left = last + idle - time.monotonic()
        if left <= 0:
            return
        listener.settimeout(min(left, 10.0))
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            _reap_workers()
            try:
                if os.stat(path).st_ino != ino:
                    return  # the socket was replaced or removed: not ours to serve
            except OSError:
                return
            if _replaced(stamp):
                return
            continue
        with conn:
            fds: list[int] = []
            try:
                if not peer_is_ours(conn):  # (nor does it count as a request: idle runs on)
                    if _exe_deleted():
                        return  # the peer check failed for our own replaced binary
                    continue  # closed without a word
                conn.settimeout(1.0)
                msg, fds, flags, _ = socket.recv_fds(conn, 1 << 20, MAX_FDS)
                fields = msg.split(b"\0")
                if not fds and len(fields) == 3 and fields[0] == MAGIC and fields[2] in CONTROL:
                    if fields[1] != identity().encode() or code_stamp() != stamp:
                        conn.send(b"no code")  # stale or another install's: this one goes
                        return
                    if fields[2] == b"stop":
                        conn.send(b"stopping")
                        return
                    conn.send(b"serving %d %d" % (os.getpid(), int(idle)))
                    continue
                if (flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC) or len(fds) != MAX_FDS
                        or len(fields) < 4 or fields[0] != MAGIC or not fields[3].isdigit()):
                    conn.send(b"no request")
                    continue
                if fields[1] != identity().encode():
                    conn.send(b"no code")  # another install's client: it starts its own
                    return
                last = time.monotonic()  # a session's request: only these keep it
                pid = os.fork()  # first: the worker loads while the code is checked
                if pid == 0:
                    _worker(conn, listener, lock, fds, fields)
                # our child, not reaped yet: the pid is still the worker's
                pidfd = os.pidfd_open(pid)
                fds.append(pidfd)
                if code_stamp() != stamp:  # stale: the worker goes before it wrote a byte
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
                    conn.send(b"no code")
                    return
                conn.sendmsg([b"ok %d" % pid], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                                  struct.pack("i", pidfd))])
            except OSError:
                continue
            finally:
                for fd in fds:
                    os.close(fd)
                _reap_workers()


def _worker(conn: socket_mod.socket, listener: socket_mod.socket, lock: int, fds: list[int],
            fields: list[bytes]) -> None:
    """In the forked child: become the session's masking process, then leave."""
    code = 70
    try:
        import fcntl
        import signal

        listener.close()
        os.close(lock)  # the lock is the server's, not a worker's
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in fds]
        for fd in fds:
            os.close(fd)
        fds.clear()
        for target, fd in enumerate(high[:4]):
            os.dup2(fd, target)
        os.fchdir(high[4])
        for fd in high:
            os.close(fd)
        os.umask(int(fields[3]))
        os.environ.clear()
        for item in fields[4:]:
            key, _, value = item.decode("utf-8", "surrogateescape").partition("=")
            if key:
                os.environ[key] = value
        from tcg.errors import run_with_error_handler
        from tcg.runner.session_mask import run_served

        code = run_with_error_handler(lambda: run_served(fields[2].decode(), conn), prog="tcg")
        sys.stderr.flush()
    finally:
        try:
            conn.send(b"exit %d" % code)
        except OSError:
            pass
        os._exit(code)
