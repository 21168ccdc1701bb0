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
:func:`lean_main`). While both load, the station makes sure the policy is
usable (fail closed: the shell is stopped before it has shown anything when it
is not, and the masking process is stopped before it has written anything):
a masking process from the fork server has loaded it already, and the station
only checks that it read the same policy files (tcg.policy.sources); otherwise
the station loads it itself. The shell's output waits for the masking process
unless it is a known-clean first screen (tcg.runner.session_screen). The hook's
hello is answered without the decision code, which is built on a thread once
the first prompt is out (tcg.runner.session_hello).
"""

from __future__ import annotations

import os
import sys

from tcg.errors import ExitCode
from tcg.runner import session_channel as ch
from tcg.runner.session_output import (  # noqa: F401 - SessionOutput re-exported for its tests
    PolicyUnusable,
    SessionOutput,
    StartFailure,
    check_policy,
    start_masker,
)

USAGE = "usage: tcg_shell session [--login] [--auto] [--shell PATH] [SHELL] [-- SHELL-ARG...]\n"
EXIT_USAGE = ExitCode.USAGE
EXIT_NO_TERMINAL = ExitCode.USAGE
EXIT_REFUSED = ExitCode.BLOCKED
HOOKED_SHELLS = ("bash", "zsh")
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
    sys.exit(session_main(sys.argv[1:]))


def session_main(argv: list[str]) -> int:
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


def resolve_shell(name: str | None, env: Mapping[str, str]) -> str:
    """An absolute path for ``name`` (a name or path), or the shell that called us."""
    from tcg.runner.base import SpawnError, which

    if name:  # the hook names it: nothing to detect
        found = which(name, env.get("PATH"))
        if found is None:
            raise SpawnError(f"{name}: shell not found", 127)
        return os.path.abspath(found)
    from tcg.runner.invocation import detect_shell

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
        station (check_policy adds site-packages where the start left them out).
        Raises PolicyUnusable (nothing is started; _start_rest refuses)."""
        self.policy = check_policy(self.env)
        return self.policy

    def _start_rest(self, shell: str) -> SessionOutput:
        """Everything after the shell's start, while it reads its rc files: its
        output is read only once this is done, so nothing of it is shown before
        the policy was found usable (fail closed) and the masker is on its way."""
        try:
            if self.policy is None and not self._served_policy():
                self.policy = check_policy(self.env)  # loaded before the fork where there was one
        except PolicyUnusable as exc:
            exc.shell = shell
            raise
        except Exception as exc:  # noqa: BLE001 - no fresh masking process (EMFILE …): the fallback
            raise StartFailure(f"the masking process could not start ({exc})", shell) from exc
        try:
            proc, self.masker = self.masker, None
            if proc is not None:
                proc.after_start()
            return SessionOutput(self.env, self.stdout_fd, proc)
        except Exception as exc:  # noqa: BLE001 - reported, then the fallback
            raise StartFailure(f"the masking process could not start ({exc})", shell) from exc

    def _build_decider(self) -> tuple[Any, Any]:
        """The decider and its event recorder (tcg.runner.session_hello.LazyDecider
        builds them once the first prompt is out): site-packages, the policy
        engine, the event log."""
        import tcg

        tcg.add_site_packages()  # a no-op unless the hook's lean start left them out
        from tcg.runner.session_decide import SessionDecider, TerminalAsker
        from tcg.runner.session_events import EventRecorder

        recorder = EventRecorder(self.env, warmup_delay=0)  # the first prompt is out: warm up now
        try:
            decider = SessionDecider(self.env, TerminalAsker(self.stdin_fd, self.stdout_fd), recorder)
        except BaseException:
            recorder.close()  # its thread ends; the next line builds both again
            raise
        decider.station.session = recorder.station.session = self.session_id
        return decider, recorder

    def _served_policy(self) -> bool:
        """A masking process from the fork server loaded the policy the station
        would load (True): it has read the same policy files (their key,
        tcg.policy.sources), and a load of them succeeded there, so the policy is
        usable and the station's own load waits for its first line. Otherwise
        (False) the served process was replaced by a fresh one, which writes
        nothing before the station has loaded and checked the policy itself.
        Raises PolicyUnusable when a policy file cannot be read."""
        proc = self.masker
        if proc is None or proc.served is None:
            return False
        from tcg.errors import PolicyError
        from tcg.policy.sources import read_sources

        try:
            key = read_sources(environ=self.env).key
        except PolicyError as exc:
            raise PolicyUnusable(exc, None) from exc
        except Exception:  # noqa: BLE001 - no key matches: a fresh process, and check_policy says why
            key = ""
        proc.confirm_policy(key)  # before it may write a byte
        return bool(proc.confirmed)

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
        from tcg.runner.session_channel import ChannelService
        from tcg.runner.session_hello import LazyDecider
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
                    if not getattr(output.proc, "confirmed", False):
                        # A served masking process is ready before the shell prints: the
                        # known first screens would only cost their read (~10 ms).
                        from tcg.runner.session_screen import first_screen

                        output.prepare(first_screen(self.env, output.confirm_first_screen, self.policy))
                    decider = LazyDecider(self._build_decider, self.env, self.session_id)
                    decider.build_soon()
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
            # the shell is gone: its last line has finished
            if decider is not None and not decider.close():
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
