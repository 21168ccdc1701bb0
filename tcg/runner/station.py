"""The station agent: `tcg_shell run-line LINE` (and `tcg run -- CMD ARG…`).

Decide first, run second: the line is evaluated against the effective policy
and either refused with exit 126 (nothing executed) or run with the user's
shell in a PTY (stdin and stdout are terminals) or through pipes (the agent
case), its output streamed through the masker. One ``command_decision`` event
is recorded per line: right away for a refusal, after the child exits
otherwise (so it carries the exit code), before exec for a nested pass-through.

Hot path: this module imports only ``os``, ``sys`` and tcg.runner.invocation (its
arguments, the shell, nesting) at the top; everything else is imported when needed.
An agent's command runs in its sandbox view through tcg.runner.agent_view; a
refusal prints through tcg.runner.refusal.

Failure policy (fail closed, see docs/reliability.md): any exception while *deciding* (loading
the policy, evaluating, building the masker) refuses the line with 126
(``policy-invalid`` / ``internal-error``). An allowed line whose event could
not be recorded (full disk, ``ulimit -f``, unwritable log, unreadable install
key: checked before it runs) is refused with 126 (``event-log-unwritable``)
unless the policy says ``events.on-unwritable = "warn"`` — which a person's line
may use, an agent's never: no agent command runs unrecorded (say, because
another tool's sandbox made tcg's state read-only). A record that still fails
after the run (the command itself filled the disk) does not change the outcome:
one warning goes to stderr.
"""

from __future__ import annotations

import os
import sys

from tcg.errors import ExitCode
from tcg.runner.invocation import (
    MEDIATED,
    MEDIATED_FDS,
    SANDBOXED,
    USAGE,
    UsageError,
    detect_shell,
    exec_direct,
    is_nested,
    parse_args,
)

TYPE_CHECKING = False  # typing costs ~3 ms of import on every command

# Longest line passed as `SHELL -c LINE`; longer ones go through a temp file
# (one argv string is capped at 128 KiB on Linux, 32 K chars on Windows).
ARGV_LINE_LIMIT = 100_000

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

EXIT_BLOCKED = ExitCode.BLOCKED
EXIT_USAGE = ExitCode.USAGE
# TCG_MASK_WORKER=0: PTY mode masks in the station's own process (slower bulk output)
MASK_WORKER_ENV = "TCG_MASK_WORKER"
LINE_CACHE_MAX = 4096  # masked command lines kept in <cache>/masked-lines


def run_line_main(argv: list[str]) -> int:
    """Entry point of `tcg_shell run-line`: ``argv`` is everything after ``run-line``."""
    try:
        shell, line = parse_args(argv)
    except UsageError as exc:
        sys.stderr.write(f"tcg_shell run-line: {exc}\n{USAGE}")
        return EXIT_USAGE
    # An unexpected error escapes to the router's one handler (tcg/router.py), which
    # exits with run-line's code for it: 126, as if blocked (fail closed).
    return Station().run_line(line, shell=shell)


def run_argv_main(argv: list[str]) -> int:
    """Entry point of `tcg run -- CMD ARG…`: ``argv`` is everything after ``run``."""
    args = argv[1:] if argv[:1] == ["--"] else argv
    if not args:
        from tcg.errors import UsageError as MissingCommand

        raise MissingCommand("missing CMD", hint="usage: tcg run -- CMD ARG…")
    return Station().run_argv(args)


def actor_from_env(env: Any) -> str:
    """``agent`` when the environment says so (tcg.events.actor_from_env)."""
    from tcg.events import actor_from_env as actor

    return actor(env)


class Station:
    """One mediated command: decide, record, run. Holds per-run state only."""

    def __init__(self, env: Any = None):
        self.env = os.environ if env is None else env
        self.actor = actor_from_env(self.env)
        self.session = self.env.get("TCG_SESSION") or os.urandom(8).hex()
        self.policy: Any = None
        self._warned = False
        self._filters: list[Any] = []
        self._keyed: Any = None
        self._line = ""
        self._cwd = ""
        self.prepared: Any = None  # the delete-guard's transaction for this line (tcg.guard.prepare)
        self.approval_code: str | None = None
        # The agent's own command when the line wraps it (Claude Code's Bash tool: the
        # snapshot, `eval 'CMD'`, a per-call cwd file): what an approval is for.
        self.approval_line: str | None = None
        self.guard_fields: dict[str, Any] = {}  # added to the command_decision event

    # ------------------------------------------------------------ decide

    def decide(self, line: str, cwd: str | None = None) -> Any:
        """The Verdict for ``line`` run in ``cwd`` (default: ours); never raises
        (fails closed to BLOCK)."""
        from tcg.policy.model import Decision, Reason, Verdict

        def refuse(code: str, detail: str) -> Verdict:
            return Verdict(Decision.BLOCK, (Reason(code, Decision.BLOCK, detail),))

        try:
            from tcg.errors import PolicyError
        except Exception:  # noqa: BLE001 - broken install: still fail closed
            return refuse("internal-error", "tcg could not import its own modules")
        try:
            cwd = cwd or os.getcwd()
            self._line, self._cwd = line, cwd
            self.policy = self.load_policy(cwd)
        except PolicyError as exc:
            from tcg.events import record_policy_error

            record_policy_error(exc, surface="shell", actor=self.actor, session=self.session)
            detail = exc.message + (f" ({exc.hint})" if exc.hint else "")
            return refuse("policy-invalid", detail)
        except Exception as exc:  # noqa: BLE001 - fail closed on any decision error
            self._debug()
            return refuse("internal-error", f"loading the policy failed ({type(exc).__name__})")
        try:
            from tcg.decide.line import evaluate_line

            verdict = evaluate_line(self.policy, line, self.actor, cwd=cwd, env=dict(self.env))
            verdict.decision  # noqa: B018 - a malformed verdict must fail here, not later
        except Exception as exc:  # noqa: BLE001 - fail closed on any decision error
            self._debug()
            return refuse("internal-error", f"evaluating the line failed ({type(exc).__name__})")
        return verdict

    def load_policy(self, cwd: str) -> Any:
        """The effective policy for ``cwd`` (raises PolicyError)."""
        from tcg.policy.load import load_policy

        return load_policy(cwd=cwd)

    def _debug(self) -> None:
        if self.env.get("TCG_DEBUG", "") not in ("", "0"):
            import traceback

            traceback.print_exc()

    def allowed(self, verdict: Any) -> bool:
        """May the line run? RELOCATE/SNAPSHOT may, once :meth:`prepare` did its
        part (every caller runs it next). ASK: a human answers on the terminal;
        an agent's line runs only with a person's `tcg approve` (tcg.guard.approval)."""
        from tcg.policy.model import Decision

        if verdict.decision in (Decision.ALLOW, Decision.SANITIZE, Decision.RELOCATE, Decision.SNAPSHOT):
            return True
        if verdict.decision == Decision.ASK and self.actor == "human":
            return self.confirm(verdict)
        if verdict.decision == Decision.ASK:
            return self._approved(verdict)
        return False  # BLOCK, and anything newer: refuse

    def _approved(self, verdict: Any) -> bool:
        """An agent's ASK: use up a person's approval of this exact line, or file a
        request whose code the refusal names."""
        try:
            from tcg.guard import approval

            line = self.approval_line or self._line
            if approval.consume(line, self._cwd, self.env) is not None:
                self.guard_fields["approval"] = "used"
                return True
            deciding = verdict.deciding
            ask = approval.AskRequest(
                command=self.masked_line(line), cwd=self._cwd, reason=verdict.reason,
                detail=deciding.detail if deciding is not None else "",
                line_hash=approval.line_hash(line, self._cwd, self._hasher().key))
            self.approval_code = approval.request(ask, self.env)
            self.guard_fields["approval"] = "requested"
        except Exception:  # noqa: BLE001 - no approval channel: the ASK stays a refusal
            self._debug()
        return False

    # ------------------------------------------------------------ delete-guard

    def prepare(self, line: str, verdict: Any, *, defer_to: int | None = None) -> Any:
        """Carry out the verdict's RELOCATE/SNAPSHOT actions before the command runs
        (tcg.guard.prepare). Returns the verdict to act on: BLOCK when the trash
        could not take it all (nothing deleted). ``defer_to``: the pid whose end
        (or next line) means the command has finished — the caller's shell, or
        this process when it becomes the command by exec — instead of
        :meth:`settle` in this process."""
        if not verdict.actions:
            return verdict
        from tcg.policy.model import Decision, Reason, Verdict

        try:
            from tcg.guard.prepare import prepare

            verdict, self.prepared = prepare(
                verdict, actor=self.actor, cwd=self._cwd or os.getcwd(), command_hash=self._hasher().h16(line),
                policy=self.policy, emit=self._emit_guard, env=self.env, deferred_owner=defer_to)
        except Exception as exc:  # noqa: BLE001 - fail closed: never run a delete that was not saved
            self._debug()
            return Verdict(Decision.BLOCK, (Reason("trash-failed", Decision.BLOCK,
                                                   f"preparing the trash failed ({type(exc).__name__})"),))
        if self.prepared is not None:
            self.guard_fields["txid"] = self.prepared.txid
            if defer_to is not None:
                self.prepared.detach()
                self.prepared = None
        return verdict

    def settle(self) -> None:
        """After the command: give back what it did not delete (never raises)."""
        if self.prepared is None:
            return
        try:
            self.prepared.settle()
        except Exception:  # noqa: BLE001 - the trash keeps everything; a later start settles it
            self._debug()

    def _emit_guard(self, event: str, **fields: Any) -> None:
        try:
            from tcg.events import EventLog

            EventLog().emit(event, surface="shell", actor=self.actor, decision=fields.pop("decision", None),
                            reason=fields.pop("reason", None),
                            policy=self.policy.ref() if self.policy is not None else None,
                            session=self.session, **fields)
        except Exception:  # noqa: BLE001 - logging must not change the outcome
            self._debug()

    def confirm(self, verdict: Any) -> bool:
        """ASK for a human (the session station asks on the terminal it owns)."""
        from tcg.runner.refusal import confirm_on_tty

        return confirm_on_tty(verdict)

    # ------------------------------------------------------------ masking

    def make_filter(self, mode: str) -> Any:
        """The masker for ``mode`` ("strict"|"terminal"), built on first output.

        Nothing of tcg.mask is imported before the first output byte (a silent
        command never pays for it); if it cannot be built then, the output is
        withheld and the line exits 126 (LazyFilter, and the check in mediate).
        """
        policy = self.policy
        if mode == "terminal" and os.name == "posix" and policy is not None \
                and self.env.get(MASK_WORKER_ENV, "1") != "0":
            # PTY mode: the masker runs in a process of its own (see tcg.runner.maskproc)
            from tcg.runner.maskproc import MaskerProcess

            proc = MaskerProcess(mode, policy.fingerprint, self.env)
            self._filters.append(proc)
            return proc
        from tcg.runner.base import LazyFilter

        lazy = LazyFilter(lambda: self._entity_stage(  # a command's output: a kill can cut it
            _masker_factory()(policy, mode, cut_off_tails=True), mode))
        self._filters.append(lazy)
        return lazy

    def _entity_stage(self, masker: Any, mode: str) -> Any:
        """An agent's output also gets the project's business-entity aliases."""
        if self.actor != "agent" or mode != "strict":
            return masker
        from tcg.entities.stream import with_entities

        return with_entities(masker, self.env)

    def masked_line(self, line: str) -> str:
        """The command line as the strict masker prints it.

        Results are cached on disk, keyed by a keyed hash of (line, policy) and
        bound to the code that masked them (tcg.cachestore): the masked form
        holds no secret, and a silent command then never loads the detector
        (a hit: ~30 ms a command; a miss loads the detector: ~120 ms). A hit is
        only used while the detector is not loaded anyway.
        """
        from tcg.entities.stream import alias_text

        line = alias_text(line, self.env)  # no registered entity's value in an event either
        loaded = any(f.built for f in self._filters)
        entry = None if loaded else self._line_cache_entry(line)
        if entry is not None:
            from tcg.cachestore import read_cache

            cached = read_cache(entry, self._hasher().key, _line_tag(entry))
            if cached is not None:
                try:
                    return cached.decode("utf-8")
                except UnicodeDecodeError:
                    pass
        m = _masker_factory()(self.policy, "strict")
        data = line.encode("utf-8", "surrogateescape")
        masked = (m.feed(data) + m.flush()).decode("utf-8", "replace")
        entry = entry or self._line_cache_entry(line)
        if entry is not None:
            from tcg.cachestore import write_cache

            if write_cache(entry, self._hasher().key, _line_tag(entry), masked.encode("utf-8")) \
                    and os.urandom(1)[0] < 4:  # ~1 write in 64: keep the cache bounded
                _prune(os.path.dirname(entry), LINE_CACHE_MAX)
        return masked

    def _line_cache_entry(self, line: str) -> Any:
        try:
            from tcg.paths import get_paths

            key = f"{self.policy.fingerprint if self.policy else ''}\0{line}"
            return os.path.join(get_paths(self.env).cache_dir, "masked-lines", self._hasher().h16(key) + ".txt")
        except Exception:  # noqa: BLE001 - the cache is an optimisation only
            return None

    def _hasher(self) -> Any:
        if self._keyed is None:
            from tcg.keyhash import KeyedHasher

            self._keyed = KeyedHasher.for_install()
        return self._keyed

    # ------------------------------------------------------------ events

    def record(self, line: str, verdict: Any, **fields: Any) -> None:
        """Append the command_decision event; on failure warn once, never raise."""
        try:
            from tcg.events import EventLog

            try:
                command = self.masked_line(line)
            except Exception:  # noqa: BLE001 - a masker failure must not put the raw line in the log
                command = None
            fields.update(self.guard_fields)
            EventLog().emit(
                "command_decision",
                surface="shell",
                actor=self.actor,
                decision=verdict.decision.value,
                reason=verdict.reason,
                rules=list(verdict.rules),
                policy=self.policy.ref() if self.policy is not None else None,
                session=self.session,
                command=command,
                command_len=len(line),
                command_hash=self._hasher().h16(line),
                **fields,
            )
        except Exception as exc:  # noqa: BLE001 - logging must not change the outcome
            self._debug()
            if not self._warned:
                self._warned = True
                what = getattr(exc, "message", None) or type(exc).__name__
                sys.stderr.write(
                    f"tcg: warning: the security event was not recorded: {what}\n"
                    "hint: run `tcg doctor` to check the event log\n"
                )

    def log_unwritable(self) -> str | None:
        """Why this line's event could not be recorded — the log is not writable
        or the install key that keys its hashes cannot be read — and the policy
        says to refuse it (``events.on-unwritable = "block"``), else None.

        Checked before an allowed line runs: the event itself is written after
        the child exits (it carries the exit code), and a full disk or ``ulimit -f``
        must refuse the line rather than let it run unlogged."""
        try:
            if self.actor != "agent" and self.policy is not None \
                    and self.policy.model.events.on_unwritable == "warn":
                return None
            from tcg.events import EventLog

            EventLog().check_writable()
            self._hasher()  # the record's keyed hash needs the install key
        except Exception as exc:  # noqa: BLE001 - cannot tell: refuse (fail closed)
            self._debug()
            what = getattr(exc, "message", None) or f"checking the event log failed ({type(exc).__name__})"
            hint = getattr(exc, "hint", None)
            return what + (f" ({hint})" if hint else "")
        return None

    # ------------------------------------------------------------ run

    def run_line(self, line: str, *, shell: str | None = None) -> int:
        """Mediate one shell command line; return the exit code to exit with.

        A line longer than one argv string may be (Linux: 128 KiB, E2BIG) is
        handed to the shell as a 0600 script file instead of ``-c LINE``; the
        policy still decides on the line itself.
        """
        if len(line.encode("utf-8", "surrogateescape")) <= ARGV_LINE_LIMIT:
            return self.mediate(line, lambda: [detect_shell(shell, self.env), "-c", line],
                                via_shell=True)
        import contextlib
        import tempfile

        fd, path = tempfile.mkstemp(prefix="tcg-line-", suffix=".sh")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(line.encode("utf-8", "surrogateescape"))
            return self.mediate(line, lambda: [detect_shell(shell, self.env), path], via_shell=True)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(path)

    def run_argv(self, argv: list[str]) -> int:
        """Mediate an argv (no shell): the policy sees it as a quoted line."""
        import shlex

        return self.mediate(shlex.join(argv), lambda: list(argv), via_shell=False)

    def mediate(self, line: str, make_argv: Callable[[], list[str]], *, via_shell: bool) -> int:
        """Decide on ``line``; if allowed, run ``make_argv()`` (built only then)."""
        verdict = self.decide(line)
        ok = self.allowed(verdict)
        # An agent's nested tcg passes through only inside the outer station's view.
        nested = is_nested(self.env) and (self.actor != "agent" or bool(self.env.get(SANDBOXED)))
        if ok and not nested:  # a nested line is part of the outer one, whose station records it
            unlogged = self.log_unwritable()
            if unlogged is not None:  # never run a line whose event cannot be recorded
                self._warned = True  # the refusal says it; no second warning about the record
                return self.refuse(line, "event-log-unwritable", unlogged, mode=None, shell=None)
        if ok:  # delete-guard (docs/guard.md): save what the line destroys; BLOCK if that fails
            verdict = self.prepare(line, verdict, defer_to=os.getpid() if is_nested(self.env) else None)
            ok = verdict.decision.value != "block"
        if not ok:
            self.record(line, verdict, exit_code=EXIT_BLOCKED, mode=None, nested=False)
            from tcg.runner.refusal import print_refusal

            print_refusal(verdict, self.approval_code)
            return EXIT_BLOCKED

        argv = make_argv()
        shell = argv[0] if via_shell else None
        if nested:
            # No exit code: we become the command; the outer station records it.
            mode = "pty" if os.isatty(1) else "pipe"
            self.record(line, verdict, exit_code=None, mode=mode, nested=True, shell=shell)
            return exec_direct(argv, self.env)

        mode = "pty" if os.isatty(0) and os.isatty(1) else "pipe"
        try:
            if mode == "pty":
                filters = [self.make_filter("terminal")]
            else:
                filters = [self.make_filter("strict"), self.make_filter("strict")]
            if _reads_secret_store(verdict):
                from tcg.runner.agent_view import store_value_filter

                filters = [store_value_filter(f, mode, self.policy, self.env, self._hasher().h8) for f in filters]
        except Exception as exc:  # noqa: BLE001 - cannot mask: do not run unmasked
            self._debug()
            self.settle()
            return self.refuse(line, "internal-error", f"the masker failed ({type(exc).__name__})",
                               mode=mode, shell=shell)

        child_env = dict(self.env)
        child_env["TCG_SESSION"] = self.session
        child_env[MEDIATED] = self.session
        box: Any = None  # tcg.sandbox.Prepared for an agent
        if self.actor == "agent":
            from tcg.runner.agent_view import prepare_for_agent

            prepared = prepare_for_agent(self.policy, child_env, self._debug)
            if isinstance(prepared, str):
                self.settle()  # nothing ran: every stand-in gets its original back
                return self.refuse(line, "sandbox-unavailable", prepared, mode=mode, shell=shell)
            box = prepared
            child_env = box.env
        _collector_on()
        from tcg.osutil import SpawnError
        from tcg.runner.agent_view import Refused, run

        try:
            code = run(argv, child_env, mode, filters, box, self.policy, MEDIATED_FDS)
        except SpawnError as exc:
            sys.stderr.write(f"tcg: {exc}\n")
            code = exc.exit_code
        except Refused as exc:
            return self.refuse(line, "sandbox-unavailable", str(exc), mode=mode, shell=shell)
        finally:
            if box is not None:
                box.close()
            # The command ran (or was refused before it started): the guard's stand-ins
            # tell what it deleted; an untouched target gets its original back.
            self.settle()
        failed = [f.error for f in self._filters if getattr(f, "error", None) is not None]
        if failed:
            # The command ran, but its output could not be masked: it was withheld.
            sys.stderr.write(
                f"tcg: output withheld: the masker failed ({type(failed[0]).__name__})\n"
                "hint: rerun with TCG_DEBUG=1 to see the traceback and report it\n"
            )
            code = EXIT_BLOCKED
        extra = {"sandbox": box.event()} if box is not None else {}
        self.record(line, verdict, exit_code=code, mode=mode, nested=False, shell=shell,
                    output_withheld=bool(failed), **extra)
        return code

    def refuse(self, line: str, code: str, detail: str, *, mode: str | None, shell: str | None) -> int:
        """Refuse ``line`` for a reason found after the policy allowed it (nothing ran)."""
        from tcg.policy.model import Decision, Reason, Verdict

        refusal = Verdict(Decision.BLOCK, (Reason(code, Decision.BLOCK, detail),))
        self.record(line, refusal, exit_code=EXIT_BLOCKED, mode=mode, nested=False, shell=shell)
        from tcg.runner.refusal import print_refusal

        print_refusal(refusal)
        return EXIT_BLOCKED


def _reads_secret_store(verdict: Any) -> bool:
    return any(r.code == "secret-store-read" for r in getattr(verdict, "reasons", ()))


def _collector_on() -> None:
    """Re-enable the garbage collector (tcg_shell starts with it off) for the run,
    which may last hours; what start-up built is frozen out of future passes."""
    import gc

    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def _masker_factory() -> Any:
    """``tcg.mask.masker_for``. Importing it can fail only on a broken install:
    the caller then refuses the line (output is never shown unmasked)."""
    from tcg.mask import masker_for

    return masker_for


def _line_tag(entry: str) -> str:
    """MAC tag of a masked-line entry: bound to its file name (the keyed hash of the
    raw line), so an entry cannot be swapped for another line's or forged without
    the install key — the event log's ``command`` field comes from it."""
    return "masked-line/" + os.path.basename(entry)


def _prune(directory: str, keep: int) -> None:
    """Keep the newest ``keep`` entries. Best effort: the cache is an optimisation."""
    try:
        with os.scandir(directory) as it:
            entries = sorted(it, key=lambda e: e.stat().st_mtime)
        for old in entries[: max(0, len(entries) - keep)]:
            try:
                os.unlink(old.path)
            except FileNotFoundError:
                pass
    except OSError:
        pass
