"""Masking for a terminal session: a masker that follows policy changes.

A one-line command is masked with the policy that decided it (the masking
process checks the fingerprint). A session lasts hours, and the user may edit
the policy meanwhile: its masking process (``python -m tcg.runner.session_mask
--worker``) re-reads the effective policy at most once a second and,
when it changed, finishes the old masker's stream and continues with a new
one. An unreadable or invalid new policy keeps the last valid one (the
session's decisions meanwhile refuse every line with ``policy-invalid``).

Its input starts with one header line from the station (tcg.runner.session_screen):
how many of the first bytes the station already showed, from the cache of
known-clean first screens; those bytes are masked here too, for context, and
this process's own copy of them is dropped from its output.
"""

from __future__ import annotations

import time

from tcg.errors import ExitCode
from tcg.mask import masker_for

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NoReturn

RECHECK = 1.0  # seconds between two looks at the policy files
MAX_FD = 65536  # descriptors above 3 a forked masking process closes
FORKED_NAME = "tcg-masker"  # a forked masking process's name (/proc/PID/comm)


def _load() -> Any:
    """The policy here, loaded once: the fork server's preload and a Windows session's masker
    (a FollowingMasker follows later edits through its own memo)."""
    from tcg.policy.load import load_policy

    return load_policy()


class FollowingMasker:
    """The OutputFilter interface of tcg.mask.Masker over a replaceable masker."""

    def __init__(self, mode: str, load: Callable[[], Any] | None = None, recheck: float = RECHECK,
                 policy: Any = None):
        """``policy``: the first policy, already loaded by ``load`` (a fork of the
        station inherits the one the station loaded); later ones come from ``load``,
        by default the policy here through a memo (tcg.policy.load.PolicyMemo):
        each look reads the layers, and unchanged ones give the Policy already
        loaded, not a read and check of its signed snapshot. A look comes with
        the first output after a quiet second — the echo of the first key typed."""
        if load is None:
            from tcg.policy.load import PolicyMemo

            load = PolicyMemo().load
        self.mode = mode
        self._load = load
        self._recheck = recheck
        if policy is None:
            policy = load()
        self.policy = policy
        self.fingerprint = policy.fingerprint
        self._masker = masker_for(policy, mode)
        self._next_check = time.monotonic() + recheck

    def _maybe_reload(self) -> bytes:
        now = time.monotonic()
        if now < self._next_check:
            return b""
        self._next_check = now + self._recheck
        try:
            policy = self._load()
        except Exception:  # noqa: BLE001 - keep masking with the last valid policy
            return b""
        if policy.fingerprint == self.fingerprint:
            return b""
        try:
            new = masker_for(policy, self.mode)
        except Exception:  # noqa: BLE001 - same: never drop to no masking
            return b""
        # the new masker continues the stream: what the old one released is its
        # context and what it held is masked by it (flushed, a key block's start
        # would be shown raw, and the rest of a key begun before the change too)
        handed = self._masker.handover()
        if handed is None:
            out = self._masker.flush()
        else:
            new.prime(handed[0])
            out = new.feed(handed[1])
        self._masker = new
        self.policy = policy
        self.fingerprint = policy.fingerprint
        return out

    def feed(self, data: bytes) -> bytes:
        head = self._maybe_reload()
        return head + self._masker.feed(data)

    def flush(self) -> bytes:
        return self._masker.flush()

    def release_idle(self) -> bytes:
        return self._masker.release_idle()

    def idle_deadline(self) -> float | None:
        return self._masker.idle_deadline()


class SkipShown:
    """Drops from the front of the output the ``count`` input bytes the station
    already put on the screen — as long as the masker's output for them is the
    same bytes (it is, for a first screen the cache confirmed under this policy).
    Should it differ, the rest is written as the masker produced it and a notice
    says the screen shown early was stale."""

    def __init__(self, inner: Any, count: int, notice: Callable[[bytes], None]):
        self.inner = inner
        self.shown = bytearray()  # the input bytes the station showed, as they arrive
        self.count = count
        self.skipping = count > 0
        self.notice = notice

    def feed(self, data: bytes) -> bytes:
        if len(self.shown) < self.count:
            self.shown += data[: self.count - len(self.shown)]
        return self._skip(self.inner.feed(data))

    def _skip(self, out: bytes) -> bytes:
        if not self.skipping or not out:
            return out
        same = 0
        limit = min(len(out), len(self.shown))
        while same < limit and out[same] == self.shown[same]:
            same += 1
        if same == len(self.shown) and len(self.shown) >= self.count:
            self.skipping = False  # everything shown was matched
        elif same < limit:
            self.skipping = False
            self.notice(b"\r\ntcg: the screen shown at start-up was stale; masked form follows\r\n")
            return out[same:]
        del self.shown[:same]
        self.count -= same
        return out[same:]

    def flush(self) -> bytes:
        return self._skip(self.inner.flush())

    def release_idle(self) -> bytes:
        return self._skip(self.inner.release_idle())

    def idle_deadline(self) -> float | None:
        return self.inner.idle_deadline()


def read_header(fd: int) -> tuple[int, bytes]:
    """The station's header line (tcg.runner.session_screen.header): the number of
    bytes already shown, and whatever input followed it in the same read."""
    import os

    from tcg.runner.session_screen import HEADER

    data = b""
    while b"\n" not in data and len(data) < 64:
        chunk = os.read(fd, 64 - len(data))
        if not chunk:
            break
        data += chunk
    line, _, rest = data.partition(b"\n")
    value = line[len(HEADER):] if line.startswith(HEADER) else b""
    return (int(value) if value.isdigit() else 0), rest


def run_worker(mode: str, in_fd: int = 0, out_fd: int = 1, control_fd: int = -1,
               following: FollowingMasker | None = None, policy: Any = None) -> None:
    """The session's masking process (:func:`main`, or :func:`run_served` with the
    masker it loaded); ``control_fd``: the station's messages (tcg.runner.session_screen)."""
    from tcg.mask.filter import READ_SIZE, pump_into
    from tcg.runner.session_screen import ScreenConfirmer
    from tcg.runner.term_writer import TerminalWriter

    # The load comes first: the station starts this process before the shell and
    # writes the header only when the shell's first output is there. A load that
    # fails is reported after the header, once the station has gone ahead with the
    # session (a station that refuses to start stops this process first: its own
    # message is the one the user reads).
    if following is None:
        try:
            following = FollowingMasker(mode, policy=policy)
        except Exception:
            read_header(in_fd)
            raise
    _collector_on()
    shown, rest = read_header(in_fd)
    masker: Any = following
    if control_fd >= 0:
        masker = ScreenConfirmer(masker, control_fd, lambda: following.policy, mode)
    # every byte for the terminal goes through the writer: one order
    writer = TerminalWriter(out_fd)
    try:
        if shown:
            masker = SkipShown(masker, shown, writer.put)
        if rest:
            writer.put(masker.feed(rest))
        pump_into(in_fd, writer.put, masker, True, READ_SIZE)
    finally:
        writer.close()


def _collector_on() -> None:
    """The garbage collector on for the hours of masking (a process forked from the
    station loaded with it off); what the load built is frozen out of its passes."""
    import gc

    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def run_served(mode: str, conn: Any) -> int:
    """A masking worker forked by tcg.runner.maskserver, its descriptors in place
    (0 input, 1 terminal, 2 stderr, 3 control) and the session's directory and
    environment taken: the same load as a fresh process, then nothing is written
    until the station names the policy files it read (``policy KEY`` on ``conn``,
    the key of tcg.policy.sources) and they are the ones loaded here: the same
    texts merged by the same install are the same policy, so the station need not
    load it before the first prompt. A mismatch, a failed load or a station gone
    ends it silently: the station then starts a fresh masking process."""
    from tcg.mask.filter import ignore_interrupts
    from tcg.mask.masker import MODES

    if mode not in MODES:
        return ExitCode.USAGE
    ignore_interrupts()
    try:
        from tcg.paths import get_paths
        from tcg.policy.load import load_sources, read_sources

        paths = get_paths()
        sources = read_sources(paths=paths)
        following = FollowingMasker(mode, policy=load_sources(sources, paths))
    except Exception:  # noqa: BLE001 - the fresh process the station falls back to reports it
        return 1
    try:
        conn.settimeout(None)
        if conn.recv(256) != b"policy " + sources.key.encode():
            conn.send(b"no policy")
            return 0
        conn.send(b"ok")
    except OSError:
        return 0  # the station is gone
    try:
        run_worker(mode, control_fd=3, following=following)
    except BrokenPipeError:
        pass  # the terminal went away
    return 0


def _signals_as_after_exec() -> None:
    """The signal state a fresh ``python -I`` masking process starts with: an exec
    resets every handled signal to its default (ignored ones stay ignored), and
    the station's wake-up fd is the station's. A fork keeps the station's Python
    handlers (its PTY signals, installed if the fork comes late) and a wake-up fd
    that closerange() is about to close. (``_signal``: the public module's
    IntEnums cost ~1 ms of the fork's start; the handlers compared are the same.)"""
    from tcg._lean.signals import signal

    try:
        signal.set_wakeup_fd(-1)
    except ValueError:  # pragma: no cover - not the main thread
        pass
    for sig in signal.valid_signals():
        try:
            handler = signal.getsignal(sig)
        except (OSError, ValueError):  # pragma: no cover - not a catchable signal
            continue
        if callable(handler) and handler is not signal.default_int_handler:
            signal.signal(sig, signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL)


def forked_main(mode: str, in_fd: int, control_fd: int, inherited: Any = None) -> NoReturn:
    """The masking process as a fork of the station (tcg.runner.maskproc's
    ``_start_forked``): its descriptors put where a fresh process finds them (0
    input, 3 control; 1 and 2 are the station's, as a fresh process inherits them),
    every other one of the station's closed and site-packages added when the
    station started without them (the garbage collector comes back on once the
    masker is loaded, :func:`run_worker`); then the same
    :func:`main` as ``python -I -c …session_mask…`` (tcg.runner.maskproc._entry).

    ``inherited``: the policy the station loaded (with site-packages) just before
    the fork, for this environment and directory, which a fresh process would
    load itself: the fork masks with it and loads neither again."""
    import fcntl
    import os

    from tcg.mask.filter import exit_after

    _signals_as_after_exec()
    try:  # its command line stays the station's: ps -o comm, top and pgrep -x name it apart
        with open("/proc/self/comm", "w") as fh:
            fh.write(FORKED_NAME)
    except OSError:
        pass
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (in_fd, control_fd)]
    os.dup2(high[0], 0)
    os.dup2(high[1], 3)
    os.closerange(4, MAX_FD)  # the station's own (its terminal copies, its pipes) are not ours
    # The garbage collector stays off, as in the station, until the masker is loaded
    # (run_worker): the load allocates much and frees little (~2-3 ms of collections).
    # The hook starts the station without site-packages (hyperscan is there); one that
    # loaded its policy added them, and the fork inherits that (tcg.add_site_packages).
    import tcg

    tcg.add_site_packages()
    exit_after(lambda: main(["--mode", mode, "--control-fd", "3"], inherited))


def main(argv: list[str], policy: Any = None) -> int:
    """``python -m tcg.runner.session_mask --worker --mode M [--control-fd N]``: the
    masking process of a terminal session (tcg.runner.maskproc starts it). stdin:
    the station's header line, then the shell's raw output; stdout: the user's
    terminal; fd N: the station's messages. ``policy``: already loaded (forked_main)."""
    import sys

    from tcg.mask.filter import ignore_interrupts
    from tcg.mask.masker import MODES

    mode, control = "terminal", -1
    it = iter(argv)
    for a in it:
        if a == "--mode":
            mode = next(it, "")
        elif a == "--control-fd":
            value = next(it, "")
            control = int(value) if value.isdigit() else -1
    if mode not in MODES:
        sys.stderr.write("tcg: masking worker: bad arguments\n")
        return ExitCode.USAGE
    ignore_interrupts()
    try:
        run_worker(mode, control_fd=control, policy=policy)
    except BrokenPipeError:
        pass  # the terminal went away
    return 0


if __name__ == "__main__":  # pragma: no cover - run as the session's masking process
    import sys

    from tcg.mask.filter import exit_after

    if sys.argv[1:2] == ["--worker"]:
        exit_after(lambda: main(sys.argv[2:]))
    sys.exit(ExitCode.USAGE)
