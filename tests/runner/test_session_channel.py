"""The verdict channel's framing and the station's answers, without a shell:
the wire format (NUL framing, resynchronisation after a torn record, history
lines), responses a shell's `read` splits correctly, and SessionDecider on the
real policy engine (actor escalation, ASK, refusals, fail modes)."""

from __future__ import annotations

import os
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tcg.policy.model import Decision, Reason, Verdict
from tcg.runner import session_channel as ch
from tcg.runner.session_decide import SessionDecider, question_for

text = st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=200)


def request(kind, seq, flags, pwd, line) -> bytes:
    return (ch.MAGIC + f"{kind} {seq} {flags}".encode() + b"\0" + pwd.encode() + b"\0"
            + line.encode() + b"\0")


@given(st.lists(st.tuples(st.sampled_from("HLCD"), st.integers(0, 10**6), st.sampled_from(["", "a"]),
                          text, text), max_size=8),
       st.lists(st.integers(1, 64), max_size=20))
def test_requests_survive_any_chunking(reqs, cuts):
    stream = b"".join(request(k, str(s), f, p, ln) for k, s, f, p, ln in reqs)
    reader = ch.RequestReader()
    got = []
    pos = 0
    for n in cuts + [len(stream)]:
        got += reader.feed(stream[pos:pos + n])
        pos += n
    got += reader.feed(stream[pos:])
    assert [(r.kind, r.seq, r.flags, r.pwd, r.line) for r in got] == \
        [(k, str(s), f, p, ln) for k, s, f, p, ln in reqs]
    assert all(r.error is None for r in got)


def test_a_torn_record_does_not_shift_the_next_ones():
    torn = ch.MAGIC + b"L 1 \0/home\0"  # the writer died before the line
    good = request("L", "2", "", "/tmp", "echo ok")
    got = list(ch.RequestReader().feed(torn + good))
    assert [(r.seq, r.line) for r in got] == [("2", "echo ok")]
    noise = b"garbage without magic\0\0"
    got = list(ch.RequestReader().feed(noise + good))
    assert [(r.seq, r.line) for r in got] == [("2", "echo ok")]


def test_malformed_and_oversized_requests_are_refused_not_dropped(monkeypatch):
    got = list(ch.RequestReader().feed(ch.MAGIC + b"X 7 \0/\0line\0"))
    assert got[0].error == "malformed request"
    monkeypatch.setattr(ch, "MAX_FIELD", 16)
    reader = ch.RequestReader()
    big = ch.MAGIC + b"L 9 \0/\0" + b"x" * 100
    got = list(reader.feed(big))
    assert got and got[0].seq == "9" and got[0].error
    after = list(reader.feed(b"y" * 10 + b"\0" + request("L", "10", "", "/", "ok")))
    assert [(r.seq, r.line) for r in after] == [("10", "ok")]


@pytest.mark.parametrize(("raw", "line"), [
    ("    1  echo hi\n", "echo hi"),
    ("  123* for i in 1 2; do echo $i; done\n", "for i in 1 2; do echo $i; done"),
    ("99999  cat <<EOF\nbody\nEOF\n", "cat <<EOF\nbody\nEOF"),
    ("    7   leading space kept\n", " leading space kept"),
])
def test_bash_history_format_is_stripped_exactly(raw, line):
    assert ch.strip_history_number(raw) == line
    got = list(ch.RequestReader().feed(request("L", "1", "h", "/", raw)))
    assert got[0].line == line


def test_history_format_matches_real_bash():
    script = "set -o history; HISTTIMEFORMAT=; history -s 'echo  two  spaces'; history 1"
    out = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], capture_output=True,
                         text=True).stdout
    assert ch.strip_history_number(out) == "echo  two  spaces"


@given(text, text, text)
def test_response_fields_split_back_with_the_shells_separator(seq, msg, hint):
    line = ch.response(seq, ch.REFUSE, "warn:2000", msg, hint).decode("utf-8", "surrogateescape")
    assert line.endswith("\n") and line.count("\n") == 1
    fields = line[:-1].split("\x1f")
    assert len(fields) == 5
    assert fields[1:3] == [ch.REFUSE, "warn:2000"]


@given(st.text(max_size=40), st.text(max_size=6000), st.text(max_size=6000))
def test_a_response_fits_one_atomic_pipe_write_and_keeps_what_fits(seq, msg, hint):
    """At most MAX_RESPONSE bytes (two in one write stay under PIPE_BUF, 4096 on
    Linux: the bash hook times out only the first byte of an answer); a message
    and a hint that fit are kept whole, longer ones are cut and end in "…"."""
    data = ch.response(seq, ch.REFUSE, "warn:2000", msg, hint)
    assert len(data) <= ch.MAX_RESPONSE and 2 * ch.MAX_RESPONSE <= 4096
    fields = data.decode("utf-8", "surrogateescape")[:-1].split("\x1f")
    assert len(fields) == 5
    whole = [ch._clean(msg), ch._clean(hint)]  # the fields uncut
    size = len("\x1f".join([*fields[:3], *whole]).encode("utf-8", "surrogateescape")) + 1
    fits = size <= ch.MAX_RESPONSE
    for got, full in zip(fields[3:], whole, strict=True):
        assert got == full or (not fits and got.endswith("…") and full.startswith(got[:-1]))


def test_response_is_read_by_bash_read_with_empty_fields_kept():
    """As the bash hook reads it: the first byte with a timeout, the rest of the line
    without (tcg/shells/hook.bash, _tcg_trip)."""
    line = ch.response("s1", ch.OK, "warn:2000").decode()
    script = ("IFS=$'\\037' read -r -N 1 -t 2 id && IFS=$'\\037' read -r id2 v f m1 m2; id+=$id2; "
              "printf '[%s]' \"$id\" \"$v\" \"$f\" \"$m1\" \"$m2\"")
    out = subprocess.run(["bash", "--norc", "-c", script], input=line, capture_output=True, text=True)
    assert out.stdout == "[s1][ok][warn:2000][][]"
    line = ch.response("s2", ch.REFUSE, "block:500", "", "hint: x").decode()
    out = subprocess.run(["bash", "--norc", "-c", script], input=line, capture_output=True, text=True)
    assert out.stdout == "[s2][refuse][block:500][][hint: x]"


def test_channel_pipes_ends_are_numbered_high_and_only_the_shells_inherit():
    pipes = ch.ChannelPipes()
    try:
        assert pipes.shell_write >= ch.LOW_FD and pipes.shell_read >= ch.LOW_FD
        assert os.get_inheritable(pipes.shell_write) and os.get_inheritable(pipes.shell_read)
        assert not os.get_inheritable(pipes.requests) and not os.get_inheritable(pipes.responses)
        assert pipes.env_value() == f"{pipes.shell_write},{pipes.shell_read}"
        pipes.close_shell_ends()
        assert pipes.shell_write == -1
    finally:
        pipes.close()


def test_bash_gets_a_childrens_pipe_and_one_writers_token():
    """A subshell reads its answers from a pipe of its own, and every writer takes
    the one token byte first (the station puts one back after each request, never
    a second one beside it; a subshell that kept it puts it back itself)."""
    import fcntl
    import termios

    pipes = ch.ChannelPipes(children=True)
    try:
        env = pipes.env()
        assert env[ch.ENV_CHANNEL] == pipes.env_value()
        assert env[ch.ENV_CHILD_CHANNEL] == (f"{pipes.shell_child_read},{pipes.shell_token},"
                                             f"{pipes.shell_token_back}")
        for fd in (pipes.shell_child_read, pipes.shell_token, pipes.shell_token_back):
            assert fd >= ch.LOW_FD and os.get_inheritable(fd)
        for fd in (pipes.child_responses, pipes.token, pipes.token_drain):
            assert not os.get_inheritable(fd)
        # The shell's ends block: bash's `read -t` on a non-blocking one fails at once
        # when another process took the byte it woke up for (O_NONBLOCK is shared by
        # a dup: the station drains extras through a second open file).
        for fd in (pipes.shell_read, pipes.shell_child_read, pipes.shell_token, pipes.shell_token_back):
            assert os.get_blocking(fd), fd
        assert not os.get_blocking(pipes.token_drain)

        def waiting() -> int:
            n = bytearray(4)
            fcntl.ioctl(pipes.shell_token, termios.FIONREAD, n)
            return int.from_bytes(n, "little")

        assert waiting() == 1
        pipes.put_token()
        assert waiting() == 1  # never two
        assert os.read(pipes.shell_token, 8) == ch.TOKEN
        pipes.put_token("hck")  # a subshell kept it: it gives it back itself
        assert waiting() == 0
        os.write(pipes.shell_token_back, ch.TOKEN)  # ... as it does
        os.write(pipes.shell_token_back, ch.TOKEN)  # a second one (a writer had given up)
        pipes.put_token()
        assert waiting() == 1  # the extra is taken out
        assert os.read(pipes.shell_token, 8) == ch.TOKEN
        pipes.put_token()
        assert waiting() == 1
        pipes.close_shell_ends()
        assert pipes.shell_child_read == pipes.shell_token == pipes.shell_token_back == -1
    finally:
        pipes.close()
    plain = ch.ChannelPipes()
    try:
        assert ch.ENV_CHILD_CHANNEL not in plain.env() and plain.token == -1
        plain.put_token()  # no token pipe: nothing to do
    finally:
        plain.close()


# ------------------------------------------------------------------ the decider

class Asker:
    def __init__(self, answer: bool):
        self.answer = answer
        self.questions: list[str] = []

    def ask(self, question: str) -> bool:
        self.questions.append(question)
        return self.answer


def decide(line, *, env=None, asker=None, flags="", cwd=None, kind="L"):
    recorded = []
    sent = []
    d = SessionDecider(dict(os.environ, **(env or {})), asker, lambda *a: recorded.append(a))
    d.answer(ch.Request(kind, "s1", flags, cwd or os.getcwd(), line), sent.append)
    return [ln.decode().rstrip("\n").split("\x1f") for ln in sent], recorded


def test_hello_answers_the_session_and_the_default_fail_mode():
    sent, recorded = decide("", kind="H")
    assert sent[0][1] == "hello" and sent[0][2] == "warn:2000" and recorded == []
    sent, _ = decide("", kind="H", env={"TCG_ACTOR": "agent"})
    assert sent[0][2] == "block:2000"


def test_an_allowed_line_is_ok_and_recorded_after(tmp_path):
    sent, recorded = decide("ls -la", cwd=str(tmp_path))
    assert sent == [["s1", "ok", "warn:2000", "", ""]]
    (line, verdict, policy, actor, fields), = recorded
    assert line == "ls -la" and actor == "human" and verdict.decision is Decision.ALLOW
    assert fields["mode"] == "session" and fields["exit_code"] is None


def test_a_request_can_make_the_actor_stricter_never_looser(tmp_path):
    (tmp_path / ".env").write_text("A=1\n")
    sent, recorded = decide("cat .env", flags="a", cwd=str(tmp_path))
    assert sent[0][1] == "refuse" and sent[0][3].startswith("tcg: blocked (secret-store-read)")
    assert sent[0][4].startswith("hint: ") and recorded[0][3] == "agent"
    assert recorded[0][4]["exit_code"] == 126
    sent, recorded = decide("cat .env", env={"TCG_ACTOR": "agent"}, cwd=str(tmp_path))
    assert sent[0][1] == "refuse" and recorded[0][3] == "agent"  # no flag: still the agent
    sent, _ = decide("cat .env", cwd=str(tmp_path))
    assert sent[0][1] == "ok"  # a person: runs, masked


def test_the_shells_working_directory_decides(tmp_path):
    """`cat *` reads a credentials file only where there is one: the shell's
    directory is the one that counts, not the station's."""
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "credentials").write_text("x\n")
    (tmp_path / "empty").mkdir()
    sent, _ = decide("cat *", flags="a", cwd=str(tmp_path / "keys"))
    assert sent[0][1] == "refuse"
    sent, _ = decide("cat *", flags="a", cwd=str(tmp_path / "empty"))
    assert sent[0][1] == "ok"


def test_ask_sends_wait_then_the_answer(tmp_path, monkeypatch):
    policy = tmp_path / "p.toml"
    policy.write_text('[decisions.human]\nsecret-store-read = "ask"\n')
    monkeypatch.setenv("TCG_POLICY", str(policy))  # the station's environment is the process's
    env: dict[str, str] = {}
    for answer, verdict in ((True, "ok"), (False, "refuse")):
        asker = Asker(answer)
        sent, recorded = decide("cat .env", env=env, asker=asker, cwd=str(tmp_path))
        assert [s[1] for s in sent] == ["wait", verdict]
        assert "run it anyway?" in asker.questions[0] and "secret-store-read: " in asker.questions[0]
        assert recorded[0][4]["answer"] == ("yes" if answer else "no")
    asker = Asker(True)
    sent, _ = decide("cat .env", env=dict(env, TCG_ACTOR="agent"), asker=asker, cwd=str(tmp_path))
    assert [s[1] for s in sent] == ["refuse"] and asker.questions == []  # an agent is never asked
    sent, _ = decide("cat .env", env=env, asker=None, cwd=str(tmp_path))
    assert [s[1] for s in sent] == ["refuse"]  # nobody to ask


def test_a_subshell_is_answered_on_its_pipe_only_when_it_says_it_reads_it(tmp_path, monkeypatch):
    """bash: a request with flag ``c`` is answered on the children's pipe; without it
    (a hook pasted into an rc file before the pipe existed) on the shell's, which that
    hook reads. A question sends a ``wait`` to the other reader too, but to the
    children's pipe only while it is empty: sent on every question and read only when
    a subshell asks, it would fill the pipe in a long session."""
    from tcg.runner.session_channel import ChannelService

    policy = tmp_path / "p.toml"
    policy.write_text('[decisions.human]\nsecret-store-read = "ask"\n')
    monkeypatch.setenv("TCG_POLICY", str(policy))
    pipes = ch.ChannelPipes(children=True)
    try:
        service = ChannelService(pipes, SessionDecider(dict(os.environ), Asker(False), lambda *a: None))

        def ask(kind: str, seq: str, flags: str, line: str) -> None:
            os.write(pipes.shell_write, ch.MAGIC + f"{kind} {seq} {flags}\0{tmp_path}\0{line}\0".encode())
            service.ready()

        def taken(fd: int) -> list[list[str]]:
            os.set_blocking(fd, False)
            try:
                data = os.read(fd, 1 << 16)
            except BlockingIOError:
                return []
            return [ln.split("\x1f")[:2] for ln in data.decode().splitlines()]

        ask("C", "7.1.5.9", "c", "echo hi")  # a subshell of the new hook
        assert taken(pipes.shell_child_read) == [["7.1.5.9", "ok"]] and taken(pipes.shell_read) == []
        ask("C", "7.2.5.9", "", "echo hi")  # the same from an older hook: the shell's pipe
        assert taken(pipes.shell_read) == [["7.2.5.9", "ok"]] and taken(pipes.shell_child_read) == []
        for n in range(3, 8):  # questions about the shell's own lines (bash `history 1`)
            ask("L", f"7.{n}.5.7", "h", f"{n:5d}  cat .env\n")
        assert [v for _, v in taken(pipes.shell_read)] == ["wait", "refuse"] * 5
        assert taken(pipes.shell_child_read) == [["7.3.5.7", "wait"]]  # one, not five
    finally:
        pipes.close()


def test_fail_mode_follows_the_policy(tmp_path, monkeypatch):
    policy = tmp_path / "p.toml"
    policy.write_text('[session]\non-station-gone-human = "block"\nverdict-timeout-ms = 750\n')
    monkeypatch.setenv("TCG_POLICY", str(policy))
    sent, _ = decide("true")
    assert sent[0][2] == "block:750"


def test_an_invalid_policy_refuses_every_line(tmp_path, monkeypatch):
    policy = tmp_path / "p.toml"
    policy.write_text("[decisions.human\n")
    monkeypatch.setenv("TCG_POLICY", str(policy))
    sent, recorded = decide("true")
    assert sent[0][1] == "refuse" and "policy-invalid" in sent[0][3]


def test_question_text_names_the_line_masked_where_and_why(tmp_path):
    """The question shows what `tcg approve` shows (tcg.guard.approval.AskRequest),
    line by line for a raw terminal; the line is masked."""
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    d = SessionDecider(dict(os.environ), None, lambda *a: None)
    st = d.station
    st.decide(f"rm -rf build; echo {token}", cwd=str(tmp_path))
    v = Verdict(Decision.ASK, (Reason("delete-outside-trash", Decision.ASK, "rm deletes 3 files"),))
    text = question_for(st, v)
    assert text.startswith("tcg: this line needs your yes:\r\n  rm -rf build; echo <SECRET:")
    assert f"\r\n  in {tmp_path}\r\n" in text
    assert "why it needs you: delete-outside-trash: rm deletes 3 files" in text
    assert text.endswith("\r\ntcg: run it anyway?") and token not in text and "\n\n" not in text


def test_the_delete_guard_saves_for_the_shell_that_sent_the_line(tmp_path, monkeypatch):
    """RELOCATE is prepared for the sending shell's pid (a process of the session:
    here this test's own child) and settled at that shell's next line; a request
    naming a pid outside the session is refused and nothing is deleted."""
    import subprocess
    import sys

    from tcg.runner.session_decide import sender_pid, session_shell

    assert sender_pid("123.4.5678") == 123 and sender_pid("x.1") is None and sender_pid("1.2.3") is None
    assert session_shell(os.getppid()) is None  # not below this process
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "f.txt").write_text("keep\n")
    sent: list[bytes] = []
    d = SessionDecider(dict(os.environ), None, lambda *a: None)
    d.answer(ch.Request("L", f"{os.getppid()}.1.1", "", str(tmp_path), "rm -rf build"), sent.append)
    assert b"refuse" in sent[-1] and b"trash-failed" in sent[-1]
    assert (tmp_path / "build" / "f.txt").read_text() == "keep\n"
    shell = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        d.answer(ch.Request("L", f"{shell.pid}.2.1", "", str(tmp_path), "rm -rf build"), sent.append)
        assert sent[-1].split(b"\x1f")[1] == b"ok"
        assert d.station.guard_fields["txid"] and not (tmp_path / "build" / "f.txt").exists()  # the stand-in
        d.answer(ch.Request("L", f"{shell.pid}.3.1", "", str(tmp_path), "true"), sent.append)
        assert (tmp_path / "build" / "f.txt").read_text() == "keep\n"  # rm never ran: given back
    finally:
        shell.kill()
        shell.wait()
