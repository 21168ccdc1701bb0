"""The session station's output side: every byte the shell prints goes to a
masking process (tcg.runner.maskproc) that writes to the terminal itself, and
is replaced when it dies; and the start-up failures a session reports.

Split from tcg.runner.session (the station's start and its loop) so that each
stays one job: this module decides what happens to output, that one when.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

MASKER_RESTARTS = 3


class StartFailure(Exception):
    """The session could not be set up; nothing has run yet."""

    def __init__(self, reason: str, shell: str | None):
        super().__init__(reason)
        self.reason = reason
        self.shell = shell


class PolicyUnusable(StartFailure):
    """The policy cannot be read or is invalid: the session does not start at all
    (an invalid policy never turns into an allow, docs/policy.md)."""

    def __init__(self, error: Any, shell: str | None):
        super().__init__(f"the policy cannot be used: {error.message}", shell)
        self.hint = error.hint or "fix the policy file"


def check_policy(env: Mapping[str, str]) -> Any:
    """The effective policy (for the working directory), or PolicyUnusable. Adds
    site-packages first where the hook's lean start has not yet (a policy that
    is parsed needs ``tomli`` on Python 3.10)."""
    import tcg

    tcg.add_site_packages()
    from tcg.errors import PolicyError, TcgError
    from tcg.policy.load import load_policy

    try:
        return load_policy(environ=env)
    except PolicyError as exc:
        raise PolicyUnusable(exc, None) from exc
    except Exception as exc:  # noqa: BLE001 - anything else that stops a load fails closed too
        raise PolicyUnusable(TcgError(f"it could not be loaded ({type(exc).__name__}: {exc})",
                                      "run `tcg doctor`; TCG_DEBUG=1 shows the details"), None) from exc


class SessionOutput:
    """The session's OutputFilter: a masking process (tcg.runner.maskproc) that
    writes to the terminal itself, replaced when it dies. What a dead one had
    taken and not written is withheld, never shown unmasked; the chunk it died
    on goes to its successor. After MASKER_RESTARTS failures, or when the policy
    cannot be used any more, the session ends."""

    def __init__(self, env: Mapping[str, str], out_fd: int = 1, proc: Any = None):
        """``proc``: a masking process started earlier (start_masker), else one now."""
        self.env = dict(env)
        self.out_fd = out_fd
        self.restarts = 0
        self.failed: BaseException | None = None
        self._withhold: Any = None  # after a restart (tcg.runner.session_resume)
        self.proc = proc if proc is not None else self._new()
        self.first: Any = None  # tcg.runner.session_screen.FirstScreen, from prepare()
        self.decided = False  # the masking process has had its header
        self.on_fatal: Any = None  # called once when output can no longer be masked

    def _new(self) -> Any:
        return start_masker(self.env)

    def prepare(self, first: Any) -> None:
        """Known first screens (tcg.runner.session_screen): the first output may
        go out before the masking process is ready when it is one of them."""
        self.first = first
        if not first.candidates:
            self._decide(0)

    def input_seen(self) -> None:
        """A key went to the shell (tcg.runner.loop): the first screen ends here. One
        remembered with a fast typist's echo in it ("$ exit") would make every later
        session's prompt, a prefix of it, wait FIRST_WAIT for the rest."""
        first = self.first
        if first is not None and first.collecting:
            first.finish()

    def confirm_first_screen(self, length: int) -> None:
        """Ask the masking process to confirm the first ``length`` bytes as a
        known-clean first screen (it has the masker loaded already)."""
        self.proc.control(f"screen {length}\n".encode())

    def _decide(self, shown: int) -> None:
        from tcg.runner.base import write_all
        from tcg.runner.session_screen import header

        self.decided = True
        pending = bytes(self.first.pending) if self.first is not None else b""
        if self.first is not None:
            self.first.pending.clear()
        if shown:
            write_all(self.out_fd, pending[:shown])
        self.proc.feed(header(shown) + pending)

    def _notice(self, text: str) -> None:
        from tcg.runner.base import write_all

        try:
            write_all(self.out_fd, ("\r\n" + text + "\r\n").encode())
        except OSError:
            pass

    def feed(self, data: bytes) -> bytes:
        if self.failed is not None:
            return b""
        first = self.first
        if first is not None:
            now = first.now()
            first.collect(data, now)
            if not self.decided:
                first.pending += data
                if first.first_at is None:
                    first.first_at = now
                shown = first.match()
                if shown is not None:
                    self._decide(shown)
                return b""
        elif not self.decided:
            self._decide(0)
        if self.proc.error is not None and not self._replace():
            return b""
        self._feed_proc(data)
        if self.proc.error is not None and self._replace():
            # it died before taking this chunk (EPIPE): the new one masks it, so
            # the screen does not wait for the next output (a prompt would)
            self._feed_proc(data)
        return b""

    def _feed_proc(self, data: bytes) -> None:
        """To the masking process, less what a restart withholds (tcg.runner.session_resume)."""
        if self._withhold is not None:
            data, self._withhold = self._withhold.take(data)
        if data:
            self.proc.feed(data)

    def direct_fd(self) -> int | None:
        """The masking process's input pipe, once nothing but it needs to see the
        output (the first screen is decided and no longer collected): the copy
        loop's reader then writes there itself (tcg.runner.master_reader.MasterReader's
        direct mode). None while the station still looks at the output, or when
        the masking process cannot take it."""
        if not self.decided or self.failed is not None or self.proc.error is not None \
                or self._withhold is not None:
            return None
        first = self.first
        if first is not None and first.collecting:
            return None
        return getattr(self.proc, "input_fd", None)

    def _replace(self) -> bool:
        """A new masking process for a dead one; False (and the session ends) when
        the policy cannot be used any more or after MASKER_RESTARTS restarts."""
        unusable = _policy_unusable(self.env)
        if unusable is not None or self.restarts >= MASKER_RESTARTS:
            self.failed = self.proc.error
            self.proc.flush()
            self._notice(f"tcg: output is withheld and the session ends: {unusable.reason}\r\n"
                         f"hint: {unusable.hint}" if unusable is not None else
                         "tcg: the masking process keeps failing; output is withheld "
                         "and the session ends\r\nhint: run `tcg doctor`; TCG_DEBUG=1 shows why")
            if self.on_fatal is not None:
                self.on_fatal()
            return False
        self.restarts += 1
        self._notice(f"tcg: the masking process stopped ({self.proc.error}); output in "
                     "between, and up to the end of the line being written, is withheld; "
                     "restarting it")
        self.proc.flush()
        self.proc = self._new()
        from tcg.runner.session_resume import Withhold
        self._withhold = Withhold()
        from tcg.runner.session_screen import header

        self.proc.feed(header(0))
        return True

    def flush(self) -> bytes:
        if not self.decided:
            self._decide(0)
        if self.first is not None:
            self.first.finish()
        self.proc.flush()
        if self.failed is None and self.proc.error is not None:
            # the terminal did not take the rest in time (or the process failed at
            # the end): what was left is withheld, and the user is told so
            self._notice(f"tcg: the end of the output was withheld ({self.proc.error})")
        return b""

    def release_idle(self) -> bytes:
        first = self.first
        if first is not None:
            now = first.now()
            if not self.decided and (first.deadline() or now) <= now:
                self._decide(0)
            deadline = first.collect_deadline()
            if deadline is not None and deadline <= now:
                first.finish()
        return b""

    def idle_deadline(self) -> float | None:
        first = self.first
        if first is None:
            return None
        times = [t for t in (None if self.decided else first.deadline(), first.collect_deadline())
                 if t is not None]
        return min(times) if times else None


def start_masker(env: Mapping[str, str], serve: bool = False, fork: bool = False,
                 before_fork: Any = None) -> Any:
    """A session's masking process (tcg.runner.session_mask), started: it loads
    the policy and the detector on its own while the station goes on. ``serve``:
    forked by the masking fork server where one runs (then confirm_policy()).
    ``fork``: otherwise a fork of this process (the station's first step only),
    after ``before_fork`` loaded what the fork inherits (Session._policy_first)."""
    from tcg.runner.maskproc import MaskerProcess

    proc = MaskerProcess("terminal", None, env, serve=serve, fork=fork, before_fork=before_fork)
    proc.start()
    return proc


def _policy_unusable(env: Mapping[str, str]) -> PolicyUnusable | None:
    try:
        check_policy(env)
    except PolicyUnusable as exc:
        return exc
    return None
