"""Error tree and the one mapping from errors to exit codes.

Every user-facing failure is a TcgError whose message says what happened and
carries a hint saying what to do. Tracebacks are shown only with TCG_DEBUG=1.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing costs import time on every command
if TYPE_CHECKING:
    from collections.abc import Callable


class ExitCode:
    """Exit codes as plain ints (an IntEnum would import enum on the launch path)."""

    OK = 0
    ERROR = 1  # generic failure / "findings" for scan / "problems" for doctor
    BLOCKED_CHECK = 2  # `tcg check`: BLOCK; `policy check`: invalid; usage errors
    ASK = 3  # `tcg check`: ASK
    BLOCKED = 126  # a mediated command was refused by policy (nothing executed)
    NOT_FOUND = 127  # command or agent binary not found
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
    exit_code = ExitCode.BLOCKED_CHECK


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


def run_with_error_handler(func: Callable[[], int | None], prog: str = "tcg") -> int:
    """Run ``func`` mapping TcgError/KeyboardInterrupt/unexpected errors to exit codes.

    pre-commit's convention: known errors exit with their code, ^C with 130,
    anything unexpected with 1 and a one-line message (traceback only with TCG_DEBUG=1).
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
        print(
            f"{prog}: internal error: {type(exc).__name__}\n"
            "hint: rerun with TCG_DEBUG=1 for a traceback and report it",
            file=sys.stderr,
        )
        return int(ExitCode.ERROR)
