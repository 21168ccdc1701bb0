"""What a session station answers before its decision code is loaded.

A new terminal's first prompt waits for the station to answer its hook's hello
(tcg.runner.session_channel), and nothing else: the first line to decide comes
later, when a person has read the prompt. So the hello is answered from here
(the session's id, the fail mode the hook uses before the policy is known, the
settings the shell has otherwise), and :class:`LazyDecider` builds the real
decider (tcg.runner.session_decide: the policy engine, the event log, the
delete guard, site-packages — ~15 ms of a busy start) on a thread once the
first prompt is out, or at the first line if that comes sooner. Importing this
module loads none of that.
"""

from __future__ import annotations

import os
import sys

from tcg._lean.threads import allocate_lock, start_new_thread
from tcg.actors import actor_from_env
from tcg.runner import session_channel as ch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

DEFAULT_TIMEOUT_MS = 2000
# What the hook does before the policy is known (the hello answer): the same as
# the built-in default policy.
DEFAULT_FAILMODE = {"human": "warn", "agent": "block"}
BUILD_DELAY = 0.3  # seconds after the loop starts: the first prompt is out by then


def failmode_text(mode: str, timeout_ms: int) -> str:
    """``warn:2000``; the timeout kept to 100 ms .. ~100 s (3-5 digits: what the hooks accept)."""
    return f"{mode}:{min(max(100, int(timeout_ms)), 99_999)}"


def request_actor(base_actor: str, req: ch.Request) -> str:
    """A request can make the actor stricter, never looser."""
    return "agent" if base_actor == "agent" or req.agent else "human"


def hello_response(req: ch.Request, env: Mapping[str, str], session: str, actor: str) -> bytes:
    """The answer to a hello: the session's id, the default fail mode for
    ``actor``, and the names of the settings the shell has otherwise (its hint
    field; tcg.runner.session_env)."""
    mode = DEFAULT_FAILMODE[actor]
    return ch.response(req.seq, ch.HELLO, failmode_text(mode, DEFAULT_TIMEOUT_MS), session,
                       _differing(env, req.line))


def _differing(env: Mapping[str, str], text: str) -> str:
    """The hello's settings check; a failure in it must not cost the shell its
    hello (a failed hello leaves the shell's lines unchecked): no names then."""
    try:
        from tcg.runner.session_env import differing

        return ", ".join(differing(env, text))
    except Exception:  # noqa: BLE001 - an advisory check only
        return ""


class LazyDecider:
    """The copy loop's decider (what tcg.runner.session_decide.ChannelService
    calls), built by ``build`` — a (decider, event recorder) pair — on first
    need: a hello is answered without it. ``build_soon`` starts the build on a
    thread after BUILD_DELAY; a line asked about before it finished waits for it
    (one lock). A build that fails is tried again at the next line, and the line
    is refused meanwhile (fail closed: the copy loop's service answers the
    exception with a refusal)."""

    def __init__(self, build: Callable[[], tuple[Any, Any]], env: Mapping[str, str], session: str):
        self._build = build
        self._env = env
        self._session = session
        self._actor = actor_from_env(env)
        self._lock = allocate_lock()
        self._built: tuple[Any, Any] | None = None
        self._closed = False

    def build_soon(self, delay: float = BUILD_DELAY) -> None:
        start_new_thread(self._build_after, (delay,))

    def _build_after(self, delay: float) -> None:
        import time

        time.sleep(delay)
        try:
            self.get()
        except Exception:  # noqa: BLE001 - the next line builds it again and is refused if that fails
            if os.environ.get("TCG_DEBUG", "") not in ("", "0"):
                import traceback

                traceback.print_exc(file=sys.stderr)

    def get(self) -> Any:
        """The decider, built now if it is not yet (raises what the build raised)."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the session has ended")
            if self._built is None:
                self._built = self._build()
            return self._built[0]

    @property
    def failmode(self) -> str:
        built = self._built
        if built is not None:
            return str(built[0].failmode)
        return failmode_text(DEFAULT_FAILMODE[self._actor], DEFAULT_TIMEOUT_MS)

    def answer(self, req: ch.Request, send: Callable[[bytes], None],
               sibling: Callable[[bytes], None] | None = None) -> None:
        if req.kind == "H":
            send(hello_response(req, self._env, self._session, request_actor(self._actor, req)))
            return
        self.get().answer(req, send, sibling)

    def close(self) -> bool:
        """The session ended: the decider settles the shells' last lines and the
        recorder writes what is queued; False when some events were still being
        written when it gave up. Waits for a build in progress."""
        with self._lock:
            built, self._built, self._closed = self._built, None, True
        if built is None:
            return True
        decider, recorder = built
        decider.close()
        return bool(recorder.close())
