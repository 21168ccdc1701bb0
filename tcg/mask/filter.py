"""`tcg mask [FILE] [--mode strict|terminal]`: the streaming masker as a filter.

Reads with os.read on the fd (never sys.stdin.read(): output must stream),
writes with os.write, memory bounded by the masker's hold-back. Terminal mode
runs a select loop so a held tail is released at the masker's idle deadline.
No click here: ``tcg mask`` is dispatched to :func:`main` before the CLI loads
(tcg/cli/__init__.py), ~30 ms sooner; tcg/cli/mask.py is the documented command.
"""

from __future__ import annotations

import os
import select
import time

from tcg.errors import ExitCode, TcgError
from tcg.mask.masker import MODES
from tcg.osutil import write_all

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import NoReturn

READ_SIZE = 1 << 18  # 256 KiB: one strict-mode slice per read (see Masker.feed)
# strict mode where freed large buffers stay in the heap (tcg.mask.alloc): twice that
BIG_READ_SIZE = 1 << 19


class MaskInputError(TcgError):
    """The input file cannot be read."""


def pump(in_fd: int, out_fd: int, masker: object, mode: str, read_size: int = READ_SIZE) -> None:
    """Copy in_fd to out_fd through ``masker`` until EOF."""

    def write(data: bytes) -> None:
        if data:
            write_all(out_fd, data)

    pump_into(in_fd, write, masker, mode == "terminal", read_size)


def pump_into(in_fd: int, write: Callable[[bytes], None], masker: object, terminal: bool,
              read_size: int = READ_SIZE) -> None:
    """Read ``in_fd`` until EOF, mask, and hand each result (maybe empty) to
    ``write`` — the one read loop of the filter and of the session's masking
    process (its terminal writer's ``put``). In terminal mode a held tail is
    released at the masker's idle deadline (``select`` only while one is held:
    otherwise the read waits)."""
    feed = masker.feed  # type: ignore[attr-defined]
    idle_deadline = masker.idle_deadline if terminal else None  # type: ignore[attr-defined]
    while True:
        if idle_deadline is not None:
            deadline = idle_deadline()
            if deadline is not None:
                timeout = max(0.0, deadline - time.monotonic())
                if not select.select([in_fd], [], [], timeout)[0]:
                    write(masker.release_idle())  # type: ignore[attr-defined]
                    continue
        try:
            chunk = os.read(in_fd, read_size)
        except InterruptedError:  # pragma: no cover - PEP 475 retries
            continue
        if not chunk:
            break
        write(feed(chunk))
    write(masker.flush())  # type: ignore[attr-defined]


def run(file: str | None, mode: str) -> int:
    """Mask FILE (None or "-": stdin) to stdout with the effective policy."""
    from tcg.mask import masker_for
    from tcg.policy.load import load_policy

    masker = masker_for(load_policy(), mode)
    read_size = READ_SIZE
    if mode == "strict":
        from tcg.mask.alloc import keep_large_buffers

        if keep_large_buffers():
            read_size = masker.slice_size = BIG_READ_SIZE
    if file is None or file == "-":
        fd = 0
    else:
        try:
            fd = os.open(file, os.O_RDONLY)
        except OSError as exc:
            raise MaskInputError(f"cannot read {file}: {exc.strerror}",
                                 hint="check the path and its permissions") from None
    try:
        pump(fd, 1, masker, mode, read_size)
    except BrokenPipeError:
        # the consumer went away (`tcg mask | head`): not an error; silence the exit flush
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    finally:
        if fd != 0:
            os.close(fd)
    return 0


def parse_args(args: list[str]) -> tuple[str | None, str]:
    """(FILE, mode) of `tcg mask …`: the verb's one grammar (the click command only
    renders --help; tcg/router.py). A bad argument raises UsageError (exit 2)."""
    from tcg.errors import UsageError

    hint = "usage: tcg mask [FILE] [--mode strict|terminal]"
    file: str | None = None
    mode = "strict"
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--mode":
            if i + 1 >= len(args):
                raise UsageError("option --mode requires an argument", hint=hint)
            mode = args[i + 1]
            i += 2
            continue
        if a.startswith("--mode="):
            mode = a[len("--mode="):]
        elif a == "-" or not a.startswith("-"):
            if file is not None:
                raise UsageError(f"unexpected extra argument {a!r}", hint=hint)
            file = a
        else:
            raise UsageError(f"no such option: {a.partition('=')[0]}", hint=hint)
        i += 1
    if mode not in MODES:
        raise UsageError(f"option --mode: {mode!r} is not one of {', '.join(MODES)}", hint=hint)
    if file not in (None, "-") and os.path.isdir(file):
        raise UsageError(f"{file} is a directory", hint=hint)
    return file, mode


def mask_main(args: list[str]) -> int:
    """`tcg mask …` (tcg/router.py): parse with the one grammar, then filter."""
    return run(*parse_args(args))


def ignore_interrupts() -> None:
    """In a masking process: ^C and ^\\ belong to the command (the PTY loop passes
    them on); the process ends when its input does."""
    from tcg._lean.signals import signal  # not the enum wrapper: ~1 ms of its start

    for name in ("SIGINT", "SIGQUIT"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_IGN)


def exit_after(main: Callable[[], int]) -> NoReturn:
    """A masking process's last step: ``main`` under tcg's error handler, then leave.
    Everything went out with os.write; the interpreter's teardown (~10-20 ms) is
    time the station would spend waiting before it exits, so it is skipped."""
    import sys

    from tcg.errors import run_with_error_handler

    code = run_with_error_handler(main, prog="tcg")
    sys.stderr.flush()
    os._exit(code)


def worker_main(argv: list[str]) -> int:
    """``python -m tcg.mask.filter --worker --mode M --policy-fingerprint FP``: the
    masking process of the PTY runner (tcg.runner.maskproc). stdin: the command's
    raw output; stdout: the user's terminal. It refuses to run (exit 3, nothing
    written) under a policy other than the station's: the station decided with
    that policy, and the output must be masked with the same rules. A terminal
    session's masking process follows the policy instead: tcg.runner.session_mask."""
    import sys

    mode, fingerprint = "terminal", None
    it = iter(argv)
    for a in it:
        if a == "--mode":
            mode = next(it, "")
        elif a == "--policy-fingerprint":
            fingerprint = next(it, None)
    if mode not in MODES or not fingerprint:
        sys.stderr.write("tcg: masking worker: bad arguments\n")
        return ExitCode.USAGE
    ignore_interrupts()
    from tcg.mask import masker_for
    from tcg.policy.load import load_policy

    policy = load_policy()
    if policy.fingerprint != fingerprint:
        sys.stderr.write("tcg: masking worker: the policy changed since the command was "
                         "checked; output withheld\n")
        return 3
    try:
        pump(0, 1, masker_for(policy, mode), mode)
    except BrokenPipeError:
        return 0  # the terminal went away
    return 0


if __name__ == "__main__":  # pragma: no cover - run as the PTY runner's masking process
    import sys

    if sys.argv[1:2] == ["--worker"]:
        exit_after(lambda: worker_main(sys.argv[2:]))
    sys.exit(ExitCode.USAGE)
