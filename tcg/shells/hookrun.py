"""Hot-path entries the rendered hooks call: `hook-run` and `run-argv`.

One Python start per entered line (issue 5): the hook hands the whole line to
``hook-run``, which classifies it (tcg.shells.classify) and then either runs it
through the station agent in this same process, or — for a line that must
change the current shell — only checks it and answers "run it yourself" with
exit 125 plus the hook's per-line nonce written to the ``--ack`` file. The
nonce keeps a command whose own exit status is 125 from being mistaken for
that answer (the line would otherwise run twice).

The line travels in the environment (``TCG_HOOK_LINE``) or, when long, in a
0600 temp file (``--line-file``): never as argv, so a 200 KB paste cannot hit
E2BIG and PowerShell-style argument mangling never applies.
"""

from __future__ import annotations

import contextlib
import os
import sys

from tcg.errors import ExitCode, TcgError, UsageError, run_with_error_handler

ACK = 125  # "state-changing; checked and allowed; run it in the current shell"


class MediatorUnavailable(TcgError):
    exit_code = ExitCode.BLOCKED


def _read_line(line_file: str | None) -> str:
    if line_file is not None:
        try:
            with open(line_file, "rb") as fh:
                data = fh.read()
        finally:
            with contextlib.suppress(OSError):
                os.unlink(line_file)
        return data.decode("utf-8", "surrogateescape")
    value = os.environb.pop(b"TCG_HOOK_LINE", None)
    if value is None:
        raise UsageError("no line given", hint="the hook passes it in TCG_HOOK_LINE")
    os.environ.pop("TCG_HOOK_LINE", None)
    return value.decode("utf-8", "surrogateescape")


def _write_ack(path: str, nonce: str) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o600)
    try:
        if os.fstat(fd).st_uid != os.getuid():
            raise MediatorUnavailable(f"ack file {path} is owned by another user")
        os.write(fd, nonce.encode("ascii", "replace") + b"\n")
    finally:
        os.close(fd)


def _station():  # type: ignore[no-untyped-def]
    try:
        from tcg.runner import station
    except ImportError as exc:
        raise MediatorUnavailable(
            "the station agent (`tcg_shell run-line`) is not installed; line refused",
            hint="reinstall tcg, or remove the hook (docs/shells.md)",
        ) from exc
    return station


def check_line(line: str) -> int:
    """Policy-check only (the station's decision, event and refusal message):
    0 allowed, 126 refused. ASK is asked on the terminal by the station."""
    station = _station()
    st = station.Station()
    verdict = st.decide(line)
    ok = st.allowed(verdict)
    if ok:  # delete-guard: what the line destroys is saved before the shell runs it
        verdict = st.prepare(line, verdict, defer_to=os.getppid())
        ok = verdict.decision.value != "block"
    if not ok:
        st.record(line, verdict, exit_code=int(ExitCode.BLOCKED), mode="check-only", nested=False)
        station._print_refusal(verdict, st.approval_code)
        return int(ExitCode.BLOCKED)
    st.record(line, verdict, exit_code=None, mode="in-shell", nested=False)
    return 0


def run_line(line: str, shell: str | None = None) -> int:
    """Run through the station agent, in this process (no second Python start).
    Lines too long for argv reach the shell through a temp file (Station.run_line)."""
    station = _station()
    return int(station.Station().run_line(line, shell=shell))


def _hook_run(argv: list[str]) -> int:
    from tcg.shells.classify import RUN, SKIP, STATE, classify

    opts: dict[str, str | None] = {"--shell": None, "--ack": None, "--line-file": None}
    flags: set[str] = set()
    it = iter(argv)
    for arg in it:
        if arg in opts:
            opts[arg] = next(it, None)
        elif arg in ("--in-shell", "--check-only", "--no-classify"):
            flags.add(arg)
        else:
            raise UsageError(f"hook-run: unexpected argument {arg!r}")
    line = _read_line(opts["--line-file"])
    nonce = os.environ.pop("TCG_HOOK_NONCE", "")
    # --no-classify: PowerShell decided state-vs-run on its own AST already.
    mode = classify(line) if "--no-classify" not in flags else (SKIP if not line.strip() else RUN)
    flags.discard("--no-classify")
    if mode == SKIP:  # comments only: nothing to check; the shell may "run" it
        if "--check-only" in flags or not opts["--ack"] or not nonce:
            return 0
        _write_ack(opts["--ack"], nonce)
        return ACK
    if flags or _station().is_nested(os.environ):
        # Already inside a mediated session (no second PTY) or a function /
        # veto-only path: still policy-checked.
        mode = STATE
    if mode == STATE:
        if check_line(line) != 0:
            return int(ExitCode.BLOCKED)
        if "--check-only" in flags:
            return 0
        if not opts["--ack"] or not nonce:
            raise UsageError("hook-run: --ack and TCG_HOOK_NONCE are required")
        _write_ack(opts["--ack"], nonce)
        return ACK
    return run_line(line, shell=opts["--shell"])


def hook_run_main(argv: list[str]) -> int:
    """`tcg_shell hook-run [--shell P] [--ack F] [--in-shell|--check-only|--no-classify]
    [--line-file F]` with the line in $TCG_HOOK_LINE and the nonce in $TCG_HOOK_NONCE."""
    return run_with_error_handler(lambda: _hook_run(argv), prog="tcg_shell")


def run_argv_main(argv: list[str]) -> int:
    """`tcg_shell run-argv CMD ARG…`: the content-reader aliases' entry.

    An alias cannot gather its arguments into one string; the station agent
    decides on the argv as a quoted line and runs it without a shell.
    """
    if not argv:
        sys.stderr.write("usage: tcg_shell run-argv CMD [ARG...]\n")
        return 2
    return run_with_error_handler(lambda: int(_station().Station().run_argv(argv)), prog="tcg_shell")
