"""The PTY runner's masker in a process of its own.

In PTY mode the runner reads the master on a helper thread, 4 KiB per read (the
most a PTY master hands out), and every read needs the GIL back. A masker in the
same process holds the GIL for most of its work, so while it masks a batch the
reader waits, the PTY buffer (~20 KiB) fills and the command stalls: bulk output
ran at ~0.76x of ``script`` however cheap the masker was made. Here the loop
only hands batches to a masking process through a pipe (one write per batch)
and that process writes the masked output to the terminal itself, so reading,
masking and the two PTY hops run side by side (bench/throughput.py: see
docs/masking.md).

Fail closed: if the process cannot start, dies, or exits with an error, the rest
of the output is withheld and ``error`` says why (the station then exits 126
with "output withheld"). The process masks with the station's policy or not at
all (it checks the fingerprint). POSIX only; elsewhere the in-process masker
(tcg.runner.base.LazyFilter) is used.
"""

from __future__ import annotations

import os
import sys
import time

from tcg.osutil import grow_pipe, write_all

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

WAIT_LIMIT = 30.0  # seconds flush() waits for the process to finish writing
CONFIRM_WAIT = 2.0  # seconds a served worker may take to load before a fresh one replaces it


class MaskingProcessError(RuntimeError):
    """The masking process could not start, died, or failed."""


class MaskerProcess:
    """OutputFilter whose masking happens in a process of its own (tcg.mask.filter's
    worker, or tcg.runner.session_mask's for a session).

    Started on the first output byte (a silent command never pays for it).
    ``feed`` returns b"": the process writes to our stdout (fd 1) itself.
    ``flush`` closes its input and waits until it has written everything.
    """

    def __init__(self, mode: str, policy_fingerprint: str | None, env: Mapping[str, str],
                 serve: bool = False, fork: bool = False, before_fork: Callable[[], Any] | None = None):
        """``policy_fingerprint`` None: mask with the effective policy and follow
        its changes (a terminal session lasts longer than one policy). ``serve``
        (follow mode): ask the masking fork server (tcg.runner.maskserver) for the
        process; it then writes nothing before :meth:`confirm_policy`. ``fork``
        (follow mode): where no server serves it, the first process is a fork of
        this one instead of a fresh interpreter (:meth:`_start_forked`); only for
        a caller that has started no thread and loaded nothing else yet.
        ``before_fork``: called right before that fork, only then; what it returns
        (the station's policy, loaded with site-packages) the fork masks with
        instead of loading its own (tcg.runner.session_mask.forked_main). What it
        raises (an unusable policy) is raised here, and nothing is started."""
        self.mode = mode
        self.fingerprint = policy_fingerprint
        self.env = dict(env)
        self.fork = fork and policy_fingerprint is None
        self.before_fork = before_fork
        self.pid: int | None = None
        self._w: int | None = None
        self._control: int | None = None  # follow mode: short messages on the process's fd 3
        self.error: BaseException | None = None
        self.serve = serve and policy_fingerprint is None
        self.served: Any = None  # tcg.runner.maskserver.Served: a forked worker, not our child
        self.confirmed = False

    @property
    def built(self) -> bool:
        return self.pid is not None

    def start(self) -> None:
        """Start the process now rather than at the first output byte."""
        if self._w is None and self.error is None and self.served is None:
            self._start()

    def _start(self) -> None:
        if self.serve:
            self.serve = False
            from tcg.runner import maskserver

            if maskserver.enabled(self.env) and self._start_served(maskserver):
                return
        self._start_fresh()

    def _start_served(self, maskserver: Any) -> bool:
        """A worker from the fork server (True), or False after starting one where
        there was none or a stale one (this session starts a fresh process)."""
        r, w = os.pipe()
        cr, cw = os.pipe()
        try:
            got = maskserver.request(self.env, self.mode, [r, 1, 2, cr])
        finally:
            os.close(r)
            os.close(cr)
        if isinstance(got, str):
            os.close(w)
            os.close(cw)
            if got == "absent":
                self.launch_server = True
            return False
        grow_pipe(w)
        os.set_blocking(cw, False)
        self.served, self._w, self._control = got, w, cw
        return True

    launch_server = False  # set when this session found no usable server
    launched = False  # after_start() launched one (flush() hurries it if still waiting)

    def after_start(self, delay: float | None = None) -> None:
        """Once the shell runs: start the fork server if this session found none,
        ``delay`` seconds later (default maskserver.LAUNCH_DELAY: its start costs
        CPU the first prompt should not wait for). Best effort: a server that
        cannot start must not end a session that masks already (its caller turns
        an exception into the start-up fallback)."""
        if self.launch_server:
            self.launch_server = False
            try:
                from tcg.runner import maskserver

                maskserver.launch(self.env, maskserver.LAUNCH_DELAY if delay is None else delay)
                self.launched = True
            except Exception:  # noqa: BLE001 - sessions keep starting fresh masking processes
                pass

    def confirm_policy(self, key: str) -> None:
        """A served worker writes nothing until it hears the key of the policy
        files the station read (tcg.policy.sources). If it loaded others, refused,
        died or does not answer, it is killed and a fresh process takes its place."""
        if self.served is None or self.confirmed:
            return
        if self.served.confirm(key, CONFIRM_WAIT):
            self.confirmed = True
            self.pid = self.served.pid
            return
        self.launch_server = self.launch_server or self.served.refused
        self._drop_served()
        self.fork = False  # the station has moved on (its shell, signals, threads): a fresh process
        self._start_fresh()

    def _drop_served(self) -> None:
        served, self.served, self.pid = self.served, None, None
        served.kill()
        for fd in (self._w, self._control):
            if fd is not None:
                os.close(fd)
        self._w = self._control = None

    def _start_forked(self) -> bool:
        """The session's masking process as a fork of the station, which has loaded
        only its start-up code so far: the child runs what a fresh ``python -I``
        masking process runs (tcg.runner.session_mask.forked_main, then main), on
        the same descriptors, without a second interpreter start (~10 ms of CPU,
        and the station's imports before it could begin to load). False (start it
        fresh) when the station already runs a second thread: a fork copies only
        the calling thread, and a lock another one held would stay held; and
        elsewhere than Linux (untested there: macOS frameworks do not survive a fork
        without an exec)."""
        if not sys.platform.startswith("linux"):
            return False
        inherited = self.before_fork() if self.before_fork is not None else None  # raises: no fork
        threading = sys.modules.get("threading")
        if threading is not None and threading.active_count() > 1:
            return False
        for stream in (sys.stdout, sys.stderr):  # nothing buffered may be written twice
            if stream is not None:
                stream.flush()
        r, w = os.pipe()
        cr, cw = os.pipe()
        try:
            grow_pipe(w)
            pid = os.fork()
        except OSError:
            for fd in (r, w, cr, cw):
                os.close(fd)
            return False
        if pid == 0:  # pragma: no cover - the child; it never returns
            try:
                os.close(w)
                os.close(cw)
                from tcg.runner.session_mask import forked_main

                forked_main(self.mode, r, cr, inherited)
            finally:
                os._exit(70)
        os.close(r)
        os.close(cr)
        os.set_blocking(cw, False)
        self.pid, self._w, self._control = pid, w, cw
        return True

    def _start_fresh(self) -> None:
        if self.fork:
            self.fork = False
            if self._start_forked():
                return
        # a one-line command: the masker's worker, held to the station's policy; a
        # terminal session: its own worker, which follows the policy's changes
        argv = ([sys.executable, "-I", "-c", _entry("tcg.mask.filter", "worker_main"), "--mode", self.mode,
                 "--policy-fingerprint", self.fingerprint] if self.fingerprint
                else [sys.executable, "-I", "-c", _entry("tcg.runner.session_mask", "main"), "--mode",
                      self.mode, "--control-fd", "3"])
        r, w = os.pipe()
        actions = [(os.POSIX_SPAWN_DUP2, r, 0)]
        cr = cw = -1
        if not self.fingerprint:
            cr, cw = os.pipe()
            os.set_blocking(cw, False)
            actions.append((os.POSIX_SPAWN_DUP2, cr, 3))
        try:
            grow_pipe(w)  # 1 MiB: a whole batch in one write
            self.pid = os.posix_spawn(sys.executable, argv, self.env, file_actions=actions)
        except BaseException:
            os.close(w)
            if cw >= 0:
                os.close(cw)
            raise
        finally:
            os.close(r)
            if cr >= 0:
                os.close(cr)
        self._w = w
        self._control = cw if cw >= 0 else None

    @property
    def input_fd(self) -> int | None:
        """The pipe the process reads its input from (None before start or after
        the end): a session's copy loop may write bursts to it directly."""
        return self._w

    def control(self, message: bytes) -> None:
        """A message on the follow-mode process's control pipe (best effort: a
        full or closed pipe drops it)."""
        if self._control is None:
            return
        try:
            os.write(self._control, message)
        except OSError:
            pass

    def feed(self, data: bytes) -> bytes:
        if self.error is not None or not data:
            return b""
        try:
            if self._w is None:
                self._start()
            if self.served is not None and not self.confirmed:
                self._fail(MaskingProcessError("masking worker used before its policy was confirmed"))
                return b""
            write_all(self._w, data)  # type: ignore[arg-type]
        except OSError as exc:  # EPIPE: it died; anything else: it cannot be fed
            self._fail(MaskingProcessError(f"masking process: {exc.strerror or exc}"))
        return b""

    def flush(self) -> bytes:
        if self.launched:  # the session ends: a launch still waiting goes now
            self.launched = False
            from tcg.runner import maskserver

            maskserver.hurry()
        if self._control is not None:
            os.close(self._control)
            self._control = None
        if self._w is not None:
            os.close(self._w)
            self._w = None
        if self.served is not None:
            status = self.served.wait_exit(WAIT_LIMIT)
            self.served = self.pid = None
            if status is None:
                self._fail(MaskingProcessError("masking process did not finish; killed"))
            elif status != 0 and self.error is None:
                self.error = MaskingProcessError(f"masking process exited with {status}")
        elif self.pid is not None:
            status = _wait(self.pid, WAIT_LIMIT)
            self.pid = None
            if status is None:
                self._fail(MaskingProcessError("masking process did not finish; killed"))
            elif status != 0 and self.error is None:
                self.error = MaskingProcessError(f"masking process exited with {status}")
        return b""

    def release_idle(self) -> bytes:
        return b""  # the process releases held tails on its own clock

    def idle_deadline(self) -> float | None:
        return None

    def discard(self) -> None:
        """Stop the process without letting it write anything more (its input
        is dropped) and reap it."""
        pid = self.pid
        self._fail(MaskingProcessError("masking process discarded"))
        if self.served is not None:
            self.served.close()
            self.served = self.pid = None
        elif pid is not None:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
            self.pid = None

    def _fail(self, exc: BaseException) -> None:
        if self.error is None:
            self.error = exc
        if self._control is not None:
            os.close(self._control)
            self._control = None
        if self._w is not None:
            os.close(self._w)
            self._w = None
        if self.served is not None:
            self.served.kill()
        elif self.pid is not None:
            try:
                os.kill(self.pid, 9)
            except OSError:
                pass


def _entry(module: str, function: str) -> str:
    """``python -I -c`` text running ``module.function(argv)`` as a masking process:
    ``-m`` would load runpy and importlib.util first (~7 ms CPU of every start).
    ``-I``: without it ``sys.path[0]`` is the working directory, and a ``tcg/``
    directory in a repository would be imported as the masker (code run outside
    the agents' view, and the session's raw output in its hands).
    The trailing comment keeps ``MODULE --worker`` in its command line (ps, pgrep)."""
    return (f"import sys;from tcg.mask.filter import exit_after;from {module} import {function};"
            f"exit_after(lambda:{function}(sys.argv[1:]))#{module} --worker")


def _wait(pid: int, limit: float) -> int | None:
    """Exit code of ``pid`` (128+N for a signal); None if it outlived ``limit`` (then killed).
    Waits on a pidfd where there is one (Linux 5.3+): the exit is seen at once."""
    end = time.monotonic() + limit
    pidfd = -1
    if hasattr(os, "pidfd_open"):
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:
            pidfd = -1
    try:
        delay = 0.0005
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                code = os.waitstatus_to_exitcode(status)
                return 128 - code if code < 0 else code
            left = end - time.monotonic()
            if left <= 0:
                try:
                    os.kill(pid, 9)
                except OSError:
                    pass
                os.waitpid(pid, 0)
                return None
            if pidfd >= 0:
                import select

                select.select([pidfd], [], [], left)
            else:
                time.sleep(min(delay, left))
                delay = min(delay * 2, 0.01)
    finally:
        if pidfd >= 0:
            os.close(pidfd)
