"""Error tree, the exit codes and the one handler that maps errors to them.

Every user-facing failure is a TcgError whose message says what happened and
carries a hint saying what to do. Tracebacks are shown only with TCG_DEBUG=1.
Both entries (the `tcg` click CLI and the click-free `tcg_shell`) end in
:func:`run_with_error_handler`, and every exit code either prints comes from
:class:`ExitCode` (docs/cli.md lists them per command).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing costs import time on every command
if TYPE_CHECKING:
    from collections.abc import Callable


class ExitCode:
    """Every exit code tcg itself chooses (a mediated command's own code passes through).

    Several names share a value: what a code means depends on the command
    (docs/cli.md), so each command uses the name that says what it means there.
    Plain int constants, not an IntEnum: ``enum`` (with functools and collections
    behind it) is not otherwise imported by `tcg_shell run-line`, and measured
    1.5-6 ms of import on this machine (``python -X importtime -c "import enum"``),
    paid by every mediated command for names only.
    """

    OK = 0
    ERROR = 1  # a known failure the command reports; `tcg check`: a usage error
    FINDINGS = 1  # `tcg scan`: findings; `tcg doctor`/`tcg verify`: problems listed
    USAGE = 2  # bad arguments (every command but `tcg check`, where 2 is BLOCK)
    INTERNAL = 2  # an unexpected error: never reads as success or as findings
    BLOCKED_CHECK = 2  # `tcg check`: BLOCK (fail closed: also an invalid policy)
    ASK = 3  # `tcg check`: ASK
    PARTIAL = 3  # `tcg scan`: a budget stopped the scan and nothing was found
    BLOCKED = 126  # a mediated command was refused by policy (nothing executed)
    NOT_FOUND = 127  # command or agent binary not found
    SIGNAL_BASE = 128  # a mediated command killed by signal N exits 128+N
    INTERRUPTED = 130


class TcgError(Exception):
    """Base of all expected errors. ``hint`` tells the user what to do next."""

    exit_code: int = ExitCode.ERROR

    def __init__(self, message: str, hint: str | None = None, exit_code: int | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        if exit_code is not None:
            self.exit_code = exit_code

    def render(self) -> str:
        text = f"tcg: {self.message}"
        if self.hint:
            text += f"\nhint: {self.hint}"
        return text


class UsageError(TcgError):
    exit_code = ExitCode.USAGE


class PolicyError(TcgError):
    """The policy could not be read or is invalid. Mediation fails closed on this."""

    exit_code = ExitCode.BLOCKED_CHECK

    def __init__(
        self,
        message: str,
        hint: str | None = None,
        *,
        path: str | None = None,
        line: int | None = None,
    ):
        where = ""
        if path:
            where = f"{path}"
            if line:
                where += f":{line}"
            where += ": "
        super().__init__(where + message, hint)
        self.path = path
        self.line = line


class EventLogError(TcgError):
    """The event log could not be written; ``errno`` is the OS error's (ENOSPC,
    EFBIG, EACCES …) when there was one."""

    errno: int | None = None


def debug_enabled() -> bool:
    return os.environ.get("TCG_DEBUG", "") not in ("", "0")


def run_with_error_handler(
    func: Callable[[], int | None],
    prog: str = "tcg",
    *,
    command: str | None = None,
    internal: int = ExitCode.INTERNAL,
) -> int:
    """Run ``func``, mapping what it raises to a message, a ``hint:`` and an exit code.

    The one error handler of both entries. pre-commit's convention: a known error
    (TcgError) exits with its own code, ^C with 130, anything unexpected with
    ``internal`` (ExitCode.INTERNAL unless the command fails closed some other way)
    and one line naming the exception's class, never its message (it may carry
    data). An unexpected error is also recorded as an ``internal_error`` event, so
    a crash in a mediating path is never silent.
    """
    try:
        rc = func()
        return int(rc or 0)
    except TcgError as exc:
        if debug_enabled():
            import traceback

            traceback.print_exc()
        print(exc.render().replace("tcg:", f"{prog}:", 1), file=sys.stderr)
        return int(exc.exit_code)
    except KeyboardInterrupt:
        return int(ExitCode.INTERRUPTED)
    except BrokenPipeError:
        # Output consumer went away (e.g. `tcg events | head`); not an error.
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        except OSError:
            pass
        return 0
    except Exception as exc:  # noqa: BLE001 - the one place that maps unexpected errors
        if debug_enabled():
            import traceback

            traceback.print_exc()
        logged = _record_internal_error(prog, command, exc, int(internal))
        print(
            f"{prog}: internal error: {type(exc).__name__}"
            + ("" if logged else " (and the event log could not record it)")
            + "\nhint: rerun with TCG_DEBUG=1 for a traceback and report it",
            file=sys.stderr,
        )
        return int(internal)


def _record_internal_error(prog: str, command: str | None, exc: BaseException, code: int) -> bool:
    """Append an ``internal_error`` event (the exception's class only); False when
    the log could not take it (the message then says so)."""
    try:
        from tcg.events import EventLog, actor_from_env

        EventLog().emit(
            "internal_error",
            surface="shell" if prog == "tcg_shell" else "cli",
            actor=actor_from_env(os.environ),
            reason="internal-error",
            command=f"{prog} {command}" if command else prog,
            error=type(exc).__name__,
            exit_code=code,
        )
    except Exception:  # noqa: BLE001 - reporting the first error matters more
        return False
    return True
