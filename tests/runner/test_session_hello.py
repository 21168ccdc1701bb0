"""The station's answers before its decision code is loaded (tcg.runner.session_hello):
the hook's hello is answered without building the decider, a line waits for
the one build, a build that fails refuses the line (fail closed) and is tried
again, and the session's end writes the recorder's queue."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

from tcg.runner import session_channel as ch
from tcg.runner.session_channel import ChannelService
from tcg.runner.session_hello import LazyDecider
from tests.helpers.waiting import wait_for


class FakeDecider:
    failmode = "block:3000"

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.closed = False

    def answer(self, req, send, sibling=None):
        self.asked.append(req.line)
        send(ch.response(req.seq, ch.OK, self.failmode))

    def close(self) -> None:
        self.closed = True


class FakeRecorder:
    def __init__(self, written: bool = True) -> None:
        self.written = written

    def close(self) -> bool:
        return self.written


def _lines(sent: list[bytes]) -> list[list[str]]:
    return [b.decode().rstrip("\n").split("\x1f") for b in sent]


def test_a_hello_is_answered_without_building_the_decider():
    def build():
        raise AssertionError("built for a hello")

    sent: list[bytes] = []
    lazy = LazyDecider(build, {"PATH": "/usr/bin"}, "sess1")
    lazy.answer(ch.Request("H", "7.1", "", "/", ""), sent.append)
    assert _lines(sent) == [["7.1", "hello", "warn:2000", "sess1", ""]]
    sent.clear()
    lazy.answer(ch.Request("H", "7.2", "a", "/", ""), sent.append)  # a request can only tighten
    assert _lines(sent)[0][2] == "block:2000"
    assert LazyDecider(build, {"TCG_ACTOR": "agent"}, "s").failmode == "block:2000"
    assert lazy.close()  # nothing was built: nothing to write


def test_a_line_builds_the_decider_once_even_while_the_thread_builds_it():
    started, release = threading.Event(), threading.Event()
    builds: list[FakeDecider] = []

    def build():
        started.set()
        release.wait(60)
        builds.append(FakeDecider())
        return builds[-1], FakeRecorder()

    lazy = LazyDecider(build, {}, "s")
    waiting = threading.Event()
    lock = lazy._lock

    class Spy:  # the lock, noting when the line's thread waits on it
        def __enter__(self):
            if threading.current_thread().name == "line":
                waiting.set()
            return lock.__enter__()

        def __exit__(self, *exc):
            return lock.__exit__(*exc)

    lazy._lock = Spy()  # type: ignore[assignment]
    lazy.build_soon(0)
    assert started.wait(60)
    sent: list[bytes] = []
    asker = threading.Thread(target=lazy.answer, args=(ch.Request("L", "7.3", "", "/", "ls"), sent.append),
                             name="line")
    asker.start()
    assert waiting.wait(60)  # the line asks while the thread's build is still running
    release.set()
    asker.join(60)
    assert len(builds) == 1 and builds[0].asked == ["ls"]
    assert _lines(sent) == [["7.3", "ok", "block:3000", "", ""]]
    assert lazy.failmode == "block:3000"  # the built decider's, from here on
    assert lazy.close() and builds[0].closed


def test_a_failed_build_refuses_the_line_and_is_tried_again():
    attempts: list[int] = []

    def build():
        attempts.append(1)
        if len(attempts) == 1:
            raise ImportError("tcg.runner.session_decide is missing")
        return FakeDecider(), FakeRecorder()

    pipes = ch.ChannelPipes(children=False)
    try:
        service = ChannelService(pipes, LazyDecider(build, {}, "s"))

        def ask(seq: str) -> list[str]:
            os.write(pipes.shell_write, ch.MAGIC + f"L {seq} \0/\0cat notes.txt\0".encode())
            service.ready()
            return os.read(pipes.shell_read, 4096).decode().rstrip("\n").split("\x1f")

        refused = ask("7.4")
        assert refused[:3] == ["7.4", "refuse", "warn:2000"] and "internal-error" in refused[3]
        assert ask("7.5")[:2] == ["7.5", "ok"]
        assert len(attempts) == 2
    finally:
        pipes.close()


def test_the_sessions_end_settles_and_reports_unwritten_events():
    decider = FakeDecider()
    lazy = LazyDecider(lambda: (decider, FakeRecorder(written=False)), {}, "s")
    lazy.get()
    assert lazy.close() is False and decider.closed


def test_no_build_after_the_session_ended():
    """The delayed build must not start the decision code of a session that has ended."""
    builds: list[int] = []
    lazy = LazyDecider(lambda: (builds.append(1), FakeRecorder()), {}, "s")  # type: ignore[arg-type,func-returns-value]
    assert lazy.close()
    lazy._build_after(0)  # what build_soon's thread runs, after its delay
    assert builds == []


def test_the_thread_builds_the_decider_after_its_delay():
    built = threading.Event()

    def build():
        built.set()
        return FakeDecider(), FakeRecorder()

    lazy = LazyDecider(build, {}, "s")
    lazy.build_soon(0.01)
    wait_for(built.is_set, 60, "the build on its thread")
    assert lazy.close()


def test_answering_a_hello_loads_no_decision_code():
    """What a new terminal's first prompt waits for must not import the policy
    engine, the event log or the decision code (~15 ms of a busy start)."""
    code = ("import sys; from tcg.runner import session_channel as ch; "
            "from tcg.runner.session_hello import LazyDecider; "
            "LazyDecider(None, {}, 's').answer(ch.Request('H', '1.1', '', '/', 'TMPDIR=/t\\x1f'), lambda b: None); "
            "print(sorted(m for m in sys.modules if m.startswith(('tcg.policy', 'tcg.events', 'tcg.runner.station', "
            "'tcg.runner.session_decide', 'tcg.detect', 'tcg.mask', 'typing', 're'))))")
    out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True,
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    assert out.stdout.strip() == "[]"
