"""What the session station answers to its shell: one verdict per interactive line.

Each request from the hook (tcg.runner.session_channel) is decided by the same
code as `tcg_shell run-line` (tcg.runner.station.Station: policy load, the
line policy, fail closed to BLOCK), with the shell's working directory and the
session's actor. The answer goes back at once; the ``command_decision`` event
is written afterwards on a background thread (tcg.runner.session_events), so
recording never delays the command.

ASK is the one decision that needs a person: the station asks it on the
terminal it owns (docs/shells.md, "ASK decisions"). Features that want a
confirmation — the delete guard, for one — return a Verdict whose decision is
ASK and whose deciding reason's ``detail`` is the question's subject; nothing
else is needed from them. For an agent actor, ASK is refused (an agent can
type into a terminal it drives, so the question would not reach a person).
"""

from __future__ import annotations

import os
import sys

from tcg.runner import session_channel as ch
from tcg.runner.station import Station

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

DEFAULT_TIMEOUT_MS = 2000
POLICY_RECHECK = 1.0  # seconds a loaded policy is used before its files are read again
ASK_TIMEOUT = 300.0  # seconds a question waits for a key before it counts as "no"
FAILMODE_KEY = "session.on-station-gone"  # -human / -agent
TIMEOUT_KEY = "session.verdict-timeout-ms"
# What the hook does before the policy is known (the hello answer): the same as
# the built-in default policy.
DEFAULT_FAILMODE = {"human": "warn", "agent": "block"}


def failmode_text(mode: str, timeout_ms: int) -> str:
    return f"{mode}:{max(100, int(timeout_ms))}"


class TerminalAsker:
    """Asks a yes/no question on the terminal the station owns.

    The terminal is in raw mode (the session's): one key answers — ``y`` or
    ``Y`` yes; ``n``, Enter, Ctrl-C, Ctrl-D, Esc, or nothing within
    ASK_TIMEOUT, no. Other keys are ignored. The question is written by the
    station itself, not by the shell: nothing the shell or a program in it
    prints can answer it or fake it, and the key is read before the PTY sees it.
    """

    YES = frozenset(b"yY")
    NO = frozenset(b"nN\r\n\x03\x04\x1b")

    def __init__(self, in_fd: int, out_fd: int, timeout: float = ASK_TIMEOUT):
        self.in_fd = in_fd
        self.out_fd = out_fd
        self.timeout = timeout

    def ask(self, question: str) -> bool:
        import select
        import time

        from tcg.runner.base import write_all

        write_all(self.out_fd, ("\r\n" + question + " [y/N] ").encode("utf-8", "replace"))
        answer = False
        deadline = time.monotonic() + self.timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.in_fd], [], [], left)[0]:
                break
            try:
                data = os.read(self.in_fd, 64)
            except OSError:
                break
            if not data:
                break
            key = next((b for b in data if b in self.YES or b in self.NO), None)
            if key is not None:
                answer = key in self.YES
                break
        write_all(self.out_fd, (b"yes" if answer else b"no") + b"\r\n")
        return answer


def question_for(verdict: Any) -> str:
    deciding = verdict.deciding
    detail = deciding.detail if deciding is not None else verdict.reason
    return f"tcg: {' '.join(str(detail).split())} ({verdict.reason}) - run it anyway?"


class SessionStation(Station):
    """The station's decisions with the shell's working directory, the session's
    actor and ASK asked on the session's terminal."""

    def __init__(self, env: Mapping[str, str], asker: TerminalAsker | None):
        super().__init__(env)
        self.asker = asker
        self.before_ask: Callable[[], None] | None = None
        self.answer: str | None = None
        self._policies: dict[str, tuple[float, Any]] = {}

    def load_policy(self, cwd: str) -> Any:
        """The policy for ``cwd``, re-read at most every POLICY_RECHECK seconds:
        reading and authenticating the layers is half of a short line's
        decision. A policy edit takes effect within that time (the masking
        process follows it on the same clock)."""
        import time

        now = time.monotonic()
        hit = self._policies.get(cwd)
        if hit is not None and now - hit[0] < POLICY_RECHECK:
            return hit[1]
        policy = super().load_policy(cwd)  # raises PolicyError: not cached, decided again next time
        if len(self._policies) > 64:
            self._policies.clear()
        self._policies[cwd] = (now, policy)
        return policy

    def confirm(self, verdict: Any) -> bool:
        self.answer = "no"
        if self.asker is None:
            return False
        if self.before_ask is not None:
            self.before_ask()
        yes = self.asker.ask(question_for(verdict))
        self.answer = "yes" if yes else "no"
        return yes


class SessionDecider:
    """Turns requests into responses; hands finished decisions to ``record``."""

    def __init__(self, env: Mapping[str, str], asker: TerminalAsker | None,
                 record: Callable[..., None]):
        self.station = SessionStation(env, asker)
        self.base_actor = self.station.actor
        self.record = record
        self.failmode = failmode_text(DEFAULT_FAILMODE[self.base_actor], DEFAULT_TIMEOUT_MS)

    def actor_for(self, req: ch.Request) -> str:
        # A request can make the actor stricter, never looser.
        return "agent" if self.base_actor == "agent" or req.agent else "human"

    def answer(self, req: ch.Request, send: Callable[[bytes], None]) -> None:
        """Decide ``req`` and ``send`` the response (a ``wait`` first when asking)."""
        if req.kind == "H":
            mode = DEFAULT_FAILMODE[self.actor_for(req)]
            send(ch.response(req.seq, ch.HELLO, failmode_text(mode, DEFAULT_TIMEOUT_MS),
                             self.station.session))
            return
        if req.error is not None:
            send(ch.response(req.seq, ch.REFUSE, self.failmode, f"tcg: blocked: {req.error}",
                             "hint: split the input into shorter lines or a script file"))
            return
        if not req.line.strip():
            send(ch.response(req.seq, ch.OK, self.failmode))
            return
        st = self.station
        st.actor = self.actor_for(req)
        st.answer = None
        st.before_ask = lambda: send(ch.response(req.seq, ch.WAIT, self.failmode))
        cwd = req.pwd if req.pwd.startswith("/") else None
        verdict = st.decide(req.line, cwd=cwd)
        self.failmode = self._failmode(st)
        allowed = st.allowed(verdict)
        if allowed:
            send(ch.response(req.seq, ch.OK, self.failmode))
        else:
            message, hint = refusal_text(verdict)
            send(ch.response(req.seq, ch.REFUSE, self.failmode, message, hint))
        fields: dict[str, Any] = {"mode": "session", "nested": False, "exit_code": None,
                                  "session_request": req.kind}
        if st.answer is not None:
            fields["answer"] = st.answer
        if not allowed and req.kind != "D":  # a "D" line has already run
            fields["exit_code"] = 126
        self.record(req.line, verdict, st.policy, st.actor, fields)

    def _failmode(self, st: Station) -> str:
        policy = st.policy
        actor = st.actor
        if policy is None:
            return failmode_text(DEFAULT_FAILMODE[actor], DEFAULT_TIMEOUT_MS)
        try:
            value = str(policy.get(f"{FAILMODE_KEY}-{actor}", "") or "").lower()
            timeout = int(policy.get(TIMEOUT_KEY, DEFAULT_TIMEOUT_MS) or DEFAULT_TIMEOUT_MS)
        except (TypeError, ValueError):
            return failmode_text("block", DEFAULT_TIMEOUT_MS)
        mode = "warn" if value in ("allow", "sanitize") else ("block" if value else
                                                           DEFAULT_FAILMODE[actor])
        return failmode_text(mode, timeout)


def refusal_text(verdict: Any) -> tuple[str, str]:
    """The refusal the hook prints: the same two lines as `tcg_shell run-line`."""
    from tcg.policy.reasons import REASONS

    code = verdict.reason
    deciding = verdict.deciding
    detail = " ".join((deciding.detail if deciding is not None else "").split())
    info = REASONS.get(code)
    fix = info.fix if info else "run `tcg check LINE` to see why"
    return f"tcg: blocked ({code}): {detail}", f"hint: {fix}"


class ChannelService:
    """The copy loop's service (tcg.runner.loop.LoopService) for the request pipe."""

    def __init__(self, pipes: ch.ChannelPipes, decider: SessionDecider):
        self.pipes = pipes
        self.decider = decider
        self.reader = ch.RequestReader()
        self.fd = pipes.requests
        self.dropped = 0  # responses nobody read (the shell timed out or went away)

    def ready(self) -> None:
        try:
            data = os.read(self.fd, 1 << 16)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.fd = -1  # every process holding the shell's end has gone
            return
        for req in self.reader.feed(data):
            try:
                self.decider.answer(req, self.send)
            except Exception as exc:  # noqa: BLE001 - a failed decision refuses the line
                if os.environ.get("TCG_DEBUG", "") not in ("", "0"):
                    import traceback

                    traceback.print_exc(file=sys.stderr)
                self.send(ch.response(req.seq, ch.REFUSE, self.decider.failmode,
                                      f"tcg: blocked (internal-error): the session station failed "
                                      f"({type(exc).__name__})",
                                      "hint: rerun with TCG_DEBUG=1 for a traceback and report it"))

    def send(self, data: bytes) -> None:
        try:
            os.write(self.pipes.responses, data)
        except (BlockingIOError, BrokenPipeError):
            self.dropped += 1
        except OSError:
            self.dropped += 1
