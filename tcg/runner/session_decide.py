"""What the session station answers to its shell: one verdict per interactive line.

Each request from the hook (tcg.runner.session_channel) is decided by the same
code as `tcg_shell run-line` (tcg.runner.station.Station: policy load, the
line policy, fail closed to BLOCK), with the shell's working directory and the
session's actor. The answer goes back at once; the ``command_decision`` event
is written afterwards on a background thread (tcg.runner.session_events), so
recording never delays the command.

ASK is the one decision that needs a person: the station asks it on the
terminal it owns (docs/shells.md, "ASK decisions"), with the same facts a
person approving an agent's line sees (tcg.guard.approval.AskRequest). For an
agent actor the question is not asked (an agent can type into a terminal it
drives): the line is refused with an approval code for `tcg approve`, as
`tcg_shell run-line` does.

The delete guard's RELOCATE/SNAPSHOT verdicts are carried out here, before the
verdict goes back (Station.prepare): the line then runs in the shell, so the
transaction is deferred to the shell's pid (the first part of every request's
sequence number) and settled once that shell has sent its next line and the
jobs the line left running have ended, or when the session ends
(tcg.runner.session_trash).
"""

from __future__ import annotations

import os

from tcg.runner import session_channel as ch
from tcg.runner.refusal import refusal_lines
from tcg.runner.session_hello import (
    DEFAULT_FAILMODE,
    DEFAULT_TIMEOUT_MS,
    failmode_text,
    hello_response,
    request_actor,
)
from tcg.runner.session_trash import DeferredSettles
from tcg.runner.station import Station

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

POLICY_RECHECK = 1.0  # seconds a loaded policy is used before its files are read again
ASK_TIMEOUT = 300.0  # seconds a question waits for a key before it counts as "no"


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


def question_for(st: Station, verdict: Any) -> str:
    """The question for a person's ASK: the masked line, where, and why."""
    from tcg.guard.approval import AskRequest

    deciding = verdict.deciding
    detail = " ".join(str(deciding.detail if deciding is not None else verdict.reason).split())
    ask = AskRequest(command=st.masked_line(st._line), cwd=st._cwd, reason=verdict.reason, detail=detail,
                     line_hash="")
    text = ask.prompt().replace("the agent asks to run", "this line needs your yes", 1)
    return text.rstrip("\n").replace("\n", "\r\n") + "\r\ntcg: run it anyway?"


def sender_pid(seq: str) -> int | None:
    """The pid a request names as its shell's: its sequence number begins with it
    (``$$.N.RANDOM``). Not checked: see :func:`session_shell`."""
    head = seq.split(".", 1)[0]
    return int(head) if head.isdigit() and int(head) > 1 else None


def requester_pid(seq: str) -> int | None:
    """The process that sent the request when it is not the shell itself: bash
    adds ``$BASHPID`` (a subshell deciding the line it starts with)."""
    parts = seq.split(".")
    return int(parts[3]) if len(parts) > 3 and parts[3].isdigit() and int(parts[3]) > 1 else None


def session_shell(pid: int | None) -> int | None:
    """``pid`` when it is a live process of this session — on Linux a descendant
    of this station, elsewhere any live process — else None. Checked only where
    it matters (a delete-guard transaction is tied to it), not on every line."""
    if pid is None:
        return None
    if os.path.isdir("/proc"):
        from tcg.guard.approval import ancestors

        return pid if os.getpid() in ancestors(pid) else None
    try:
        os.kill(pid, 0)
    except PermissionError:
        return pid
    except OSError:
        return None
    return pid


class SessionStation(Station):
    """The station's decisions with the shell's working directory, the session's
    actor and ASK asked on the session's terminal."""

    def __init__(self, env: Mapping[str, str], asker: TerminalAsker | None):
        super().__init__(env)
        self.asker = asker
        self.before_ask: Callable[[], None] | None = None
        self.answer: str | None = None
        self._policies: dict[str, tuple[float, Any]] = {}
        self._memo: Any = None

    def load_policy(self, cwd: str) -> Any:
        """The policy for ``cwd``, re-read at most every POLICY_RECHECK seconds:
        a line typed right after another (or each command of an agent's line)
        does not read the layers again. A policy edit takes effect within that
        time (the masking process follows it on the same clock). A re-read goes
        through the session's memo (tcg.policy.load.PolicyMemo): unchanged
        layers give the Policy already loaded, without reading and checking
        its signed snapshot again — most of a short line's decision after a
        pause, which is how people type."""
        import time

        now = time.monotonic()
        hit = self._policies.get(cwd)
        if hit is not None and now - hit[0] < POLICY_RECHECK:
            return hit[1]
        if self._memo is None:
            from tcg.policy.load import PolicyMemo

            self._memo = PolicyMemo()
        policy = self._memo.load(cwd)  # raises PolicyError: not cached, decided again next time
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
        yes = self.asker.ask(question_for(self, verdict))
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
        self.deferred = DeferredSettles(self.station.env, self.station._emit_guard)
        self._line_saved: set[int] = set()  # shells whose current line was saved as a whole
        self._line_approved: set[int] = set()  # shells whose current line ran on a person's approval
        # The last line decided per shell, and its answer: bash may ask about one line
        # twice (from a subshell it starts with, then from the shell), with the same
        # `history 1` text (it carries the history number); it is decided once.
        self._last: dict[int, tuple[str, ...]] = {}

    def _wait(self, req: ch.Request, send: Callable[[bytes], None],
              sibling: Callable[[bytes], None] | None) -> None:
        wait = ch.response(req.seq, ch.WAIT, self.failmode)
        if not req.history:
            send(wait)
        elif sibling is None:
            send(wait * 2)
        else:
            send(wait)
            sibling(wait)

    def actor_for(self, req: ch.Request) -> str:
        return request_actor(self.base_actor, req)

    def answer(self, req: ch.Request, send: Callable[[bytes], None],
               sibling: Callable[[bytes], None] | None = None) -> None:
        """Decide ``req`` and ``send`` the response (a ``wait`` first when asking).
        ``sibling``: the pipe of the other reader that may ask about the same line
        (bash: the shell for a subshell's request, and the reverse), when it reads
        a pipe of its own; None when both read the one ``send`` writes to."""
        if req.kind == "H":
            send(hello_response(req, self.station.env, self.station.session, self.actor_for(req)))
            return
        if req.error is not None:
            send(ch.response(req.seq, ch.REFUSE, self.failmode, f"tcg: blocked: {req.error}",
                             "hint: split the input into shorter lines or a script file"))
            return
        if not req.line.strip():
            send(ch.response(req.seq, ch.OK, self.failmode))
            return
        owner = sender_pid(req.seq)
        last = self._last.get(owner) if owner is not None and req.history else None
        if last is not None and last[0] == f"{req.history} {req.line}" and req.kind in ("L", "D"):
            # Asked about again by another process of the same shell (bash: a child the
            # line starts in, and the shell): one answer with both ids (the later asker
            # stays quiet); twice where both read one pipe, so each finds one whoever
            # reads first.
            both = ch.response(f"{last[1]},{req.seq}", *last[2:])
            send(both if sibling is not None else both * 2)
            return
        if req.kind != "C" and owner is not None:  # a new line: the shell's previous one has finished
            self._line_saved.discard(owner)
            self._line_approved.discard(owner)
            if self.deferred:
                self.deferred.line_over(owner)
        if self.deferred:
            self.deferred.poll()
        st = self.station
        st.actor = self.actor_for(req)
        st.answer = None
        st.guard_fields, st.approval_code, st.prepared = {}, None, None
        # to both: a bash child and its shell may both be waiting for this line (see above)
        st.before_ask = lambda: self._wait(req, send, sibling)
        cwd = req.pwd if req.pwd.startswith("/") else None
        verdict = st.decide(req.line, cwd=cwd)
        self.failmode = self._failmode(st)
        if req.kind == "C" and owner in self._line_approved and verdict.decision.value == "ask":
            # A command of a line a person approved as a whole: that approval covers it
            # (it was used up by the line; asking again would refuse the line's own commands).
            allowed = True
            st.guard_fields["approval"] = "used"
        else:
            allowed = st.allowed(verdict)
        if allowed and req.kind == "L" and owner is not None and st.guard_fields.get("approval") == "used":
            self._line_approved.add(owner)
        if allowed and req.kind != "D" and verdict.actions:
            verdict = self._prepare(req, verdict, owner)
            allowed = verdict.decision.value != "block"
        answer: tuple[str, ...]
        if allowed:
            answer = (ch.OK, self.failmode)
        else:
            message, hint = refusal_lines(verdict, st.approval_code)
            answer = (ch.REFUSE, self.failmode, message, hint)
        send(ch.response(req.seq, *answer))
        if req.kind == "L" and owner is not None and req.history:
            self._last[owner] = (f"{req.history} {req.line}", req.seq, *answer)
        fields: dict[str, Any] = {"mode": "session", "nested": False, "exit_code": None,
                                  "session_request": req.kind, **st.guard_fields}
        if st.answer is not None:
            fields["answer"] = st.answer
        if not allowed and req.kind != "D":  # a "D" line has already run
            fields["exit_code"] = 126
        self.record(req.line, verdict, st.policy, st.actor, fields)

    def _prepare(self, req: ch.Request, verdict: Any, owner: int | None) -> Any:
        """Save what the line destroys before the shell runs it (the delete guard).
        A command of a line already saved as a whole is not saved again."""
        from tcg.policy.model import Decision, Reason, Verdict

        if session_shell(owner) is None:
            return Verdict(Decision.BLOCK, (Reason("trash-failed", Decision.BLOCK,
                                                   "the shell that sent the line is not in this session; "
                                                   "nothing was deleted"),) + tuple(verdict.reasons))
        if req.kind == "C" and owner in self._line_saved:
            return verdict
        assert owner is not None
        # the jobs already running are not this line's (a subshell asking is)
        before = self.deferred.snapshot(owner, requester_pid(req.seq))
        verdict = self.station.prepare(req.line, verdict, defer_to=owner)
        if "txid" in self.station.guard_fields:
            self.deferred.add(self.station.guard_fields["txid"], owner, before)
            if req.kind == "L":
                self._line_saved.add(owner)
        return verdict

    def close(self) -> None:
        """The session ended: settle every shell's last line (once its jobs are gone)."""
        self.deferred.close()

    def _failmode(self, st: Station) -> str:
        policy = st.policy
        actor = st.actor
        if policy is None:
            return failmode_text(DEFAULT_FAILMODE[actor], DEFAULT_TIMEOUT_MS)
        try:
            settings = policy.model.session
            gone = settings.on_station_gone_agent if actor == "agent" else settings.on_station_gone_human
            value = str(gone or "").lower()
            timeout = int(settings.verdict_timeout_ms or DEFAULT_TIMEOUT_MS)
        except (TypeError, ValueError):
            return failmode_text("block", DEFAULT_TIMEOUT_MS)
        mode = "warn" if value in ("allow", "sanitize") else ("block" if value else
                                                           DEFAULT_FAILMODE[actor])
        return failmode_text(mode, timeout)
