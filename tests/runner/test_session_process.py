"""`tcg_shell session` as a process: arguments, the terminal it needs and leaves
as it found it, the shell's exit status, its masking process (restarted when it
dies, following policy edits)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tcg.runner.session import Options, SessionOutput, UsageProblem, parse_args, shell_argv
from tcg.runner.session_mask import FollowingMasker

TCG_SHELL = str(Path(sys.executable).with_name("tcg_shell"))
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def test_parse_args():
    o = parse_args(["--login", "zsh", "--", "-x", "--norc"])
    assert (o.shell, o.login, o.args) == ("zsh", True, ["-x", "--norc"])
    assert parse_args(["--shell=/bin/bash"]).shell == "/bin/bash"
    for bad in (["--shell"], ["--frob"], ["bash", "zsh"], ["--shell="]):
        with pytest.raises(UsageProblem):
            parse_args(bad)
    assert isinstance(Options(), Options)


def test_login_shells_get_a_dash_argv0():
    assert shell_argv("/usr/bin/zsh", True, ["-i"]) == ["-zsh", "-i"]
    assert shell_argv("/usr/bin/bash", False, []) == ["bash"]


def test_without_a_terminal_it_refuses_clearly():
    r = subprocess.run([TCG_SHELL, "session", "bash"], stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "needs a terminal" in r.stderr and "hint:" in r.stderr
    r = subprocess.run([TCG_SHELL, "session", "--frob"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "usage:" in r.stderr


def test_exit_status_terminal_modes_and_masking_through_a_real_pty(tmp_path):
    """Under pexpect: the shell's status comes back, the terminal's modes are
    the same before and after (also after a signal), and output is masked."""
    pexpect = pytest.importorskip("pexpect")
    (tmp_path / "tok.txt").write_text(TOKEN + "\n")
    script = (
        "stty -g > before; "
        f"'{TCG_SHELL}' session --shell bash -- --norc --noprofile -c 'cat tok.txt; exit 7'; "
        "echo status=$?; stty -g > after; "
        f"'{TCG_SHELL}' session --shell bash -- --norc --noprofile -c 'kill -TERM $$'; "
        "echo status=$?; stty -g > after2"
    )
    child = pexpect.spawn("bash", ["--norc", "--noprofile", "-c", script], cwd=str(tmp_path),
                          env=dict(os.environ, TERM="xterm"), timeout=120, encoding="utf-8")
    child.expect("status=7")
    child.expect("status=143")
    child.expect(pexpect.EOF)
    out = child.before
    child.close()
    assert TOKEN not in out
    before = (tmp_path / "before").read_text()
    assert (tmp_path / "after").read_text() == before == (tmp_path / "after2").read_text()


def test_station_forwards_termination_to_the_shell(tmp_path):
    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn(TCG_SHELL, ["session", "--shell", "bash", "--", "--norc", "--noprofile"],
                          cwd=str(tmp_path), env=dict(os.environ, TERM="xterm", PS1="SP> "),
                          timeout=120, encoding="utf-8")
    child.expect("SP> ")
    child.sendline("echo $$ > shell.pid")
    child.expect("SP> ")
    shell_pid = int((tmp_path / "shell.pid").read_text())
    os.kill(child.pid, signal.SIGHUP)
    child.expect(pexpect.EOF)
    child.close()
    time.sleep(0.2)
    with pytest.raises(ProcessLookupError):
        os.kill(shell_pid, 0)


def test_masking_process_is_restarted_and_fails_closed(capfd):
    """The masking process writes to the terminal (fd 1) itself; when it dies,
    what it was handed is withheld, a notice says so and a new one takes over."""
    out = SessionOutput(dict(os.environ), 1)
    out.feed(b"hello\n")
    text = ""
    deadline = time.monotonic() + 60
    while "hello" not in text:  # the first process is up and writing
        assert time.monotonic() < deadline
        time.sleep(0.05)
        text += capfd.readouterr().out
    os.kill(out.proc.pid, signal.SIGKILL)
    time.sleep(0.5)  # gone (not reaped: SessionOutput does that)
    # EPIPE: nobody took it; the new process does, less the rest of the line being
    # written (the dead one may have held its start: tcg.runner.session_resume)
    out.feed(b"rest-of-line " + TOKEN.encode() + b"\nnext-line " + TOKEN.encode() + b"\n")
    out.feed(TOKEN.encode() + b"\n")
    out.flush()
    text += capfd.readouterr().out
    assert "the masking process stopped" in text and "restarting it" in text
    assert "rest-of-line" not in text
    assert "next-line <SECRET:github-pat-classic:" in text  # not left waiting for more output
    assert TOKEN not in text and text.count("<SECRET:github-pat-classic:") == 2
    assert out.restarts == 1


def test_a_key_split_by_a_killed_masking_process_is_not_shown(capfd):
    """The reviewers' `kill` case: `k=AKIAQWER`, held by the masking process, which is
    killed; the rest of the key arrives after the restart. Its successor has no
    context, so the rest of that line is withheld, and the next line is shown."""
    body = b"QWERTZUIOPLK7Y3X"
    out = SessionOutput(dict(os.environ), 1)
    out.feed(b"hello\n")
    text = ""
    deadline = time.monotonic() + 60
    while "hello" not in text:
        assert time.monotonic() < deadline
        time.sleep(0.05)
        text += capfd.readouterr().out
    out.feed(b"k=AKIA" + body[:4])
    time.sleep(0.2)
    os.kill(out.proc.pid, signal.SIGKILL)
    time.sleep(0.5)
    for c in body[4:]:  # a byte at a time, as a slow program writes it
        out.feed(bytes([c]))
    out.feed(b"\r\nafter\r\n")
    out.flush()
    text += capfd.readouterr().out
    assert "restarting it" in text and "after" in text
    assert [body[i : i + 4] for i in range(len(body) - 3) if body[i : i + 4].decode() in text] == []
    assert "TZUIOP" not in text


def test_a_masking_process_that_dies_under_an_unusable_policy_ends_the_session(tmp_path, monkeypatch, capfd):
    """The policy became unusable and the masking process is gone: no restarts
    over and over (each would fail the same way) — the session ends at once with
    the policy's message and hint, nothing shown unmasked."""
    out = SessionOutput(dict(os.environ), 1)
    ended = []
    out.on_fatal = lambda: ended.append(True)
    out.feed(b"hello\n")
    os.kill(out.proc.pid, signal.SIGKILL)
    time.sleep(0.5)  # gone (not reaped: SessionOutput does that)
    bad = tmp_path / "bad.toml"
    bad.write_text("[detect\n")
    monkeypatch.setenv("TCG_POLICY", str(bad))
    out.env["TCG_POLICY"] = str(bad)
    for _ in range(3):
        out.feed(b"after " + TOKEN.encode() + b"\n")
    text = capfd.readouterr().out
    assert ended == [True] and out.restarts == 0
    assert "tcg: output is withheld and the session ends: the policy cannot be used:" in text
    assert str(bad) in text and "\r\nhint: " in text
    assert TOKEN not in text and "after" not in text


def test_masking_follows_a_policy_edit(tmp_path, monkeypatch):
    policy = tmp_path / "p.toml"
    policy.write_text("")
    monkeypatch.setenv("TCG_POLICY", str(policy))
    m = FollowingMasker("terminal", recheck=0.0)
    first = m.feed(TOKEN.encode() + b"\n") + m.flush()
    assert b"<SECRET:github-pat-classic:" in first
    policy.write_text('[detect]\ndisabled_rules = ["github-pat-classic"]\n')
    second = m.feed(TOKEN.encode() + b"\n") + m.flush()
    assert m.fingerprint != "" and b"github-pat-classic" not in second
    policy.write_text("[detect\n")  # invalid: the last valid policy stays
    third = m.feed(b"x\n") + m.flush()
    assert third == b"x\n"


def count_snapshot_loads(monkeypatch) -> list[int]:
    """Calls of tcg.policy.load.load_sources: a policy built or read from its signed
    snapshot, the part of a load a session's memo skips while the files are unchanged."""
    import tcg.policy.load as load_mod

    calls: list[int] = []
    real = load_mod.load_sources

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(load_mod, "load_sources", counted)
    return calls


def test_unchanged_policy_files_are_not_loaded_again(tmp_path, monkeypatch):
    """The masking process and the station look at the policy after every quiet
    second; while its files are unchanged each look reads them and keeps the
    policy it has, and an edit is loaded at the next look."""
    from tcg.runner.session_decide import SessionStation

    policy = tmp_path / "p.toml"
    policy.write_text('[decisions.human]\nsecret-store-read = "block"\n')
    monkeypatch.setenv("TCG_POLICY", str(policy))
    monkeypatch.setattr("tcg.runner.session_decide.POLICY_RECHECK", 0.0)
    calls = count_snapshot_loads(monkeypatch)
    m = FollowingMasker("terminal", recheck=0.0)
    station = SessionStation(dict(os.environ), None)
    first = station.load_policy(str(tmp_path))
    assert len(calls) == 2  # one load each
    for _ in range(3):
        assert m.feed(b"x\n") + m.flush() == b"x\n"
        assert station.load_policy(str(tmp_path)) is first
    assert len(calls) == 2
    policy.write_text('[decisions.human]\nsecret-store-read = "ask"\n')
    m.feed(b"y\n")
    assert station.load_policy(str(tmp_path)).fingerprint == m.fingerprint != first.fingerprint
    assert len(calls) == 4


def test_a_policy_edit_in_the_middle_of_a_key_does_not_show_its_rest(tmp_path, monkeypatch):
    """The new masker continues the old one's stream (handover/prime): what the old
    one held is masked by the new one, with the released text as context."""
    policy = tmp_path / "p.toml"
    policy.write_text("")
    monkeypatch.setenv("TCG_POLICY", str(policy))
    body = b"QWERTZUIOPLK7Y3X"
    m = FollowingMasker("terminal", recheck=0.0)
    out = m.feed(b"ok\r\nk=AKIA" + body[:4])
    policy.write_text('[detect]\ndisabled_rules = ["github-pat-classic"]\n')
    for c in body[4:]:
        out += m.feed(bytes([c]))
    out += m.feed(b"\r\n") + m.flush()
    assert m.fingerprint != "" and b"github-pat-classic" not in out
    assert out.startswith(b"ok\r\nk=<SECRET:aws-access-key-id:") and out.endswith(b">\r\n")
    assert [body[i : i + 4] for i in range(len(body) - 3) if body[i : i + 4] in out] == []


def test_a_masking_process_that_keeps_failing_ends_the_session(monkeypatch, capfd):
    from tcg.runner.session_screen import FirstScreen

    class Dead:
        error = RuntimeError("it died")
        pid = None

        def start(self):
            pass

        def feed(self, data):
            return b""

        def flush(self):
            return b""

    monkeypatch.setattr(SessionOutput, "_new", lambda self, start=True: Dead())
    ended = []
    out = SessionOutput(dict(os.environ), 1)
    out.on_fatal = lambda: ended.append(True)
    out.prepare(FirstScreen(None, None))
    for _ in range(6):
        out.feed(b"secret-free output\n")
    text = capfd.readouterr().out
    assert ended == [True]
    assert text.count("restarting it") == 3 and "keeps failing" in text
    assert "secret-free output" not in text  # withheld, never shown unmasked


def test_output_the_terminal_does_not_take_by_the_exit_is_withheld_with_a_notice(monkeypatch):
    """At the end the station waits a bounded time for the masking process to write
    what it holds; a terminal that takes nothing meanwhile gets the rest withheld,
    never unmasked, and a notice that says so (not a silent cut). The masking
    process writes to the station's fd 1 itself: here a pipe nobody reads yet."""
    import select
    import threading

    from tcg.runner import maskproc

    monkeypatch.setattr(maskproc, "WAIT_LIMIT", 1.0)
    r, w = os.pipe()
    saved = os.dup(1)
    env = dict(os.environ, TCG_MASK_SERVER="0")
    line = b"x" * 99 + b"\n"
    os.dup2(w, 1)  # what the masking process inherits as the terminal
    try:
        out = SessionOutput(env, w)
        out.feed(b"first " + TOKEN.encode() + b"\n")
        out.proc.start()
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    assert select.select([r], [], [], 120)[0], "the masking process never wrote"  # it is loaded
    out.feed(line * 8000)  # ~800 KB: far more than the pipe holds
    got = bytearray()
    flushed = threading.Event()

    def drain() -> None:  # the terminal wakes up only after the station gave up
        flushed.wait(120)
        while True:
            chunk = os.read(r, 1 << 16)
            if not chunk:
                return
            got.extend(chunk)

    t = threading.Thread(target=drain)
    t.start()
    timer = threading.Timer(3.0, flushed.set)  # flush() blocks on the notice until drained
    timer.start()
    out.flush()
    os.close(w)
    t.join(120)
    text = got.decode("utf-8", "replace")
    assert "first <SECRET:github-pat-classic:" in text and TOKEN not in text
    assert "tcg: the end of the output was withheld (masking process did not finish; killed)" in text
    assert text.count("x" * 99) < 8000
