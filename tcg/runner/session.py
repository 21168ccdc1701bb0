"""`tcg_shell session [SHELL]`: the resident station holding the user's shell.

The station is a terminal multiplexer in the way script(1), tmux or asciinema
rec are: it starts the user's real interactive shell on a PTY it owns, puts
the outer terminal in raw mode (restored on every exit path), forwards input
byte for byte, passes window size changes on, and sends **every** output byte
through the terminal-mode masker — prompts, builtins, background jobs and
full-screen programs alike. The shell's hook asks it about each interactive
line over a pipe pair opened here, once (tcg.runner.session_channel); the
answers come from tcg.runner.session_decide. Allowed lines run in the shell
itself, so jobs, history, aliases and ``$?`` stay the shell's own.

Exit status: the shell's. Start-up work is ordered for the first prompt: the
masking process starts first (its Python start and detector load are most of
the time to a first prompt that needs masking), then the shell, with only what
that needs loaded (the hook starts this process without site-packages:
:func:`lean_main`); while both load, the station adds the rest and checks the
policy (fail closed: the shell is stopped before it has shown anything when the
policy cannot be used, and the masking process is stopped before it has written
anything). The shell's output waits for the masking process
unless it is a known-clean first screen (tcg.runner.session_screen); the policy
engine is loaded in the background after the first prompt
(tcg.runner.session_events).
"""

from __future__ import annotations

import os
import sys

from tcg.errors import ExitCode
from tcg.runner import session_channel as ch

USAGE = "usage: tcg_shell session [--login] [--auto] [--shell PATH] [SHELL] [-- SHELL-ARG...]\n"
EXIT_USAGE = ExitCode.USAGE
EXIT_NO_TERMINAL = ExitCode.USAGE
EXIT_REFUSED = ExitCode.BLOCKED
HOOKED_SHELLS = ("bash", "zsh")
MASKER_RESTARTS = 3
ENV_SESSION = "TCG_SESSION"

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


class UsageProblem(Exception):
    pass


class Options:
    __slots__ = ("shell", "login", "auto", "args")

    def __init__(self) -> None:
        self.shell: str | None = None
        self.login = False
        self.auto = False  # started by the hook: the session is the terminal's own process
        self.args: list[str] = []


def parse_args(argv: list[str]) -> Options:
    opts = Options()
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--":
            opts.args = args
            break
        if a == "--login" or a == "-l":
            opts.login = True
        elif a == "--auto":
            opts.auto = True
        elif a == "--shell":
            if not args:
                raise UsageProblem("--shell needs a value")
            opts.shell = args.pop(0)
        elif a.startswith("--shell="):
            opts.shell = a.split("=", 1)[1]
        elif a.startswith("-"):
            raise UsageProblem(f"unknown option {a!r}")
        elif opts.shell is None:
            opts.shell = a
        else:
            raise UsageProblem(f"unexpected argument {a!r} (shell arguments go after --)")
    if opts.shell == "":
        raise UsageProblem("--shell needs a value")
    return opts


def lean_main() -> None:
    """Entry of the hook's ``python -I -S -c …``: the interpreter starts without
    site-packages (their .pth files cost 10-20 ms, about a third of a start);
    the session adds them (``site.main()``) once the shell is running, before it
    loads anything that may need them."""
    import gc

    gc.disable()  # as tcg.shell_entry: start-up allocates much and frees little
    sys.exit(session_main(sys.argv[1:], lean=True))


def session_main(argv: list[str], lean: bool = False) -> int:
    """Entry point of `tcg_shell session`."""
    if argv[:1] in (["-h"], ["--help"]):
        sys.stdout.write(USAGE)
        return 0
    try:
        opts = parse_args(argv)
    except UsageProblem as exc:
        sys.stderr.write(f"tcg_shell session: {exc}\n{USAGE}")
        return EXIT_USAGE
    session = Session(opts)
    session.lean = lean
    try:
        return session.run()
    except KeyboardInterrupt:  # ^C before the terminal went raw
        return 130
    except PolicyUnusable as exc:
        return session.refuse(exc)
    except StartFailure as exc:
        return session.fallback(exc)
    finally:
        session.discard_masker()


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
    """The effective policy (for the working directory), or PolicyUnusable."""
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


def resolve_shell(name: str | None, env: Mapping[str, str]) -> str:
    """An absolute path for ``name`` (a name or path), or the shell that called us."""
    from tcg.runner.base import SpawnError, which
    from tcg.runner.invocation import detect_shell

    if name:
        found = which(name, env.get("PATH"))
        if found is None:
            raise SpawnError(f"{name}: shell not found", 127)
        return os.path.abspath(found)
    return os.path.abspath(detect_shell(None, env))


def shell_argv(path: str, login: bool, args: list[str]) -> list[str]:
    base = os.path.basename(path)
    return [("-" + base) if login else base, *args]


class Session:
    def __init__(self, opts: Options, env: Mapping[str, str] | None = None,
                 stdin_fd: int = 0, stdout_fd: int = 1):
        self.opts = opts
        self.env = dict(os.environ if env is None else env)
        self.stdin_fd = stdin_fd
        self.stdout_fd = stdout_fd
        self.session_id = os.urandom(8).hex()
        self.policy: Any = None
        self.lean = False  # started without site-packages (lean_main)
        self.masker: Any = None  # the masking process, started before the shell (run)

    def child_env(self, pipes: ch.ChannelPipes) -> dict[str, str]:
        env = {k: v for k, v in self.env.items() if k != ch.ENV_CHILD_CHANNEL}
        env[ENV_SESSION] = self.session_id
        env["TCG_MEDIATED"] = self.session_id  # `tcg_shell run-line` inside: no second masker
        env.update(pipes.env())
        env[ch.ENV_STATION_PID] = str(os.getpid())
        return env

    def run(self) -> int:
        if os.name == "nt":  # pragma: no cover - Windows: tcg.runner.session_windows
            return self._run_windows()
        if not (os.isatty(self.stdin_fd) and os.isatty(self.stdout_fd)):
            sys.stderr.write("tcg_shell session: needs a terminal (stdin and stdout)\n"
                             "hint: run it from an interactive terminal; agents use "
                             "`tcg_shell run-line`\n")
            return EXIT_NO_TERMINAL
        from tcg.runner.base import SpawnError

        try:  # first: its load (~4/5 of the time to the first prompt) overlaps everything below
            self.masker = start_masker(self.env, serve=True, fork=True, before_fork=self._policy_first)
        except Exception:  # noqa: BLE001 - tried again, and reported, once the shell runs
            self.masker = None
        try:
            shell = resolve_shell(self.opts.shell, self.env)
        except SpawnError as exc:
            sys.stderr.write(f"tcg_shell session: {exc}\nhint: name an installed shell: "
                             "`tcg_shell session zsh`\n")
            return exc.exit_code
        try:  # what starting the shell needs; the rest loads while it starts (_start_rest)
            import termios  # noqa: F401

            from tcg.runner import loop, posix  # noqa: F401
        except Exception as exc:  # noqa: BLE001 - a broken install: the fallback
            raise StartFailure(f"tcg is not installed completely ({type(exc).__name__}: {exc})",
                               shell) from exc
        return self._run(shell)

    def _policy_first(self) -> Any:
        """Right before the station forks its masking process: site-packages and the
        policy, which the fork inherits instead of loading both again beside the
        station. Raises PolicyUnusable (nothing is started; _start_rest refuses)."""
        self._add_site()
        self.policy = check_policy(self.env)
        return self.policy

    def _add_site(self) -> None:
        if self.lean:
            import tcg

            tcg.add_site_packages()

    def _start_rest(self, shell: str) -> SessionOutput:
        """Everything after the shell's start, while it reads its rc files: its
        output is read only once this is done, so nothing of it is shown before
        the policy was found usable (fail closed) and the masker is on its way."""
        self._add_site()
        try:
            if self.policy is None:  # loaded before the fork (_policy_first) where there was one
                self.policy = check_policy(self.env)
        except PolicyUnusable as exc:
            exc.shell = shell
            raise
        try:
            from tcg.runner import session_decide, session_events  # noqa: F401
        except Exception as exc:  # noqa: BLE001 - a broken install: the fallback
            raise StartFailure(f"tcg is not installed completely ({type(exc).__name__}: {exc})",
                               shell) from exc
        try:
            proc, self.masker = self.masker, None
            if proc is not None:
                proc.confirm_policy(self.policy.fingerprint)  # before it may write a byte
                proc.after_start()
            return SessionOutput(self.env, self.stdout_fd, proc)
        except Exception as exc:  # noqa: BLE001 - reported, then the fallback
            raise StartFailure(f"the masking process could not start ({exc})", shell) from exc

    def _run_windows(self) -> int:  # pragma: no cover - Windows only
        from tcg.runner.session_windows import run_windows_session

        shell = resolve_shell(self.opts.shell or "pwsh", self.env)
        env = dict(self.env, **{ENV_SESSION: self.session_id, ch.ENV_STATION_PID: str(os.getpid())})
        return run_windows_session(shell, self.opts.args, env, self.session_id, self.env)

    def refuse(self, failure: PolicyUnusable) -> int:
        """The policy cannot be used: say what and what to do; no shell starts. A
        terminal the hook turned into a session would close with the message
        unread: it waits for Enter (a person's only)."""
        from tcg.events import actor_from_env

        self.discard_masker()
        name = os.path.basename(failure.shell or "") or "bash"
        sys.stderr.write(f"tcg: the session could not start: {failure.reason}\n"
                         f"hint: {failure.hint.rstrip('.')}; `tcg policy check` shows it; meanwhile "
                         f"`TCG_SESSION_AUTO=0 {name}` starts a shell without tcg\n")
        if self.opts.auto and actor_from_env(self.env) != "agent" and os.isatty(self.stdin_fd):
            sys.stderr.write("tcg: press Enter to close this terminal\n")
            sys.stderr.flush()
            try:
                os.read(self.stdin_fd, 4096)
            except (OSError, KeyboardInterrupt):
                pass
        return EXIT_REFUSED

    def fallback(self, failure: StartFailure) -> int:
        """A session that cannot start must not cost the user their terminal: a
        person gets the plain shell with a warning (and no automatic session in
        it, so no loop); an agent actor gets nothing (126)."""
        from tcg.events import actor_from_env

        self.discard_masker()
        sys.stderr.write(f"tcg: the session could not start: {failure.reason}\n")
        if failure.shell is None or actor_from_env(self.env) == "agent":
            sys.stderr.write("hint: run `tcg doctor`; TCG_DEBUG=1 shows the details\n")
            return EXIT_REFUSED
        sys.stderr.write("hint: run `tcg doctor`; this shell is neither checked nor masked by tcg\n")
        env = dict(self.env, TCG_SESSION_AUTO="0")
        sys.stderr.flush()
        try:
            os.execve(failure.shell, shell_argv(failure.shell, self.opts.login, self.opts.args), env)
        except OSError as exc:
            sys.stderr.write(f"tcg: cannot start {failure.shell}: {exc.strerror}\n")
        return ExitCode.NOT_FOUND

    def _run(self, shell: str) -> int:
        import termios

        from tcg.runner.base import SpawnError
        from tcg.runner.loop import RawStderr, copy_loop, pty_signals, raw_mode
        from tcg.runner.posix import get_winsize, spawn_pty
        from tcg.runner.signals import signal

        attrs = termios.tcgetattr(self.stdin_fd)
        size = get_winsize(self.stdout_fd) or get_winsize(self.stdin_fd)
        name = os.path.basename(shell)
        if name not in HOOKED_SHELLS:
            sys.stderr.write(f"tcg: {name} has no tcg hook: its output is masked, its lines "
                             "are not checked (docs/shells.md)\n")
        try:
            pipes = ch.ChannelPipes(children=name == "bash")
        except OSError as exc:
            raise StartFailure(f"no pipes for the verdict channel ({exc.strerror})", shell) from exc
        output: SessionOutput | None = None
        recorder: Any = None
        decider: Any = None
        try:
            with pty_signals() as sigs:
                try:
                    child = spawn_pty(shell_argv(shell, self.opts.login, self.opts.args),
                                      self.child_env(pipes), size=size, attrs=attrs,
                                      channel_var="TCG_MEDIATED_FDS", executable=shell)
                except SpawnError as exc:
                    sys.stderr.write(f"tcg_shell session: {exc}\n")
                    return exc.exit_code
                pipes.close_shell_ends()
                try:
                    output = self._start_rest(shell)
                    output.on_fatal = lambda: child.send_signal(signal.SIGHUP)
                    _collector_on()
                    from tcg.runner.session_decide import (
                        ChannelService,
                        SessionDecider,
                        TerminalAsker,
                    )
                    from tcg.runner.session_events import EventRecorder

                    recorder = EventRecorder(self.env)
                    if not getattr(output.proc, "confirmed", False):
                        # A served masking process is ready before the shell prints: the
                        # known first screens would only cost their read (~10 ms).
                        from tcg.runner.session_screen import first_screen

                        output.prepare(first_screen(self.env, output.confirm_first_screen, self.policy))
                    asker = TerminalAsker(self.stdin_fd, self.stdout_fd)
                    decider = SessionDecider(self.env, asker, recorder)
                    decider.station.session = self.session_id
                    recorder.station.session = self.session_id
                    service = ChannelService(pipes, decider)
                    saved_stderr = sys.stderr
                    with raw_mode(self.stdin_fd) as raw:
                        sys.stderr = RawStderr()  # type: ignore[assignment]
                        try:
                            code = copy_loop(child, self.stdin_fd, self.stdout_fd, output, sigs,
                                             size_fd=self.stdout_fd, raw=raw, services=[service],
                                             suspend_key=False)
                            # output could no longer be masked: the session was ended, not the shell
                            return EXIT_REFUSED if output.failed is not None else code
                        finally:
                            sys.stderr = saved_stderr
                finally:
                    if child.status is None:  # only after an exception in the loop
                        from tcg.runner.loop import _terminate

                        _terminate(child)
                    child.close()
        finally:
            pipes.close()
            if decider is not None:
                decider.close()  # the shell is gone: its last line has finished
            if recorder is not None and not recorder.close():
                sys.stderr.write("tcg: warning: some session events were still being written "
                                 "when the session ended\n")
            if output is not None:
                output.flush()
            self.discard_masker()

    def discard_masker(self) -> None:
        """The early masking process when no session output took it over (the
        session did not start): stopped, so it writes nothing."""
        if self.masker is not None:
            self.masker.discard()
            self.masker = None


def _collector_on() -> None:
    """tcg_shell starts with the garbage collector off (start-up speed); a
    session runs for hours. (Python's 5 ms GIL switch interval is kept: a
    shorter one, 0.5 ms, made bulk output ping-pong between the PTY reader
    thread and the loop — 0.48x instead of 0.81x script's throughput, 30 MB.)"""
    import gc

    if not gc.isenabled():
        gc.freeze()
        gc.enable()
