"""The first screen shown before the masking process is ready
(tcg/runner/session_screen.py): only bytes the masker confirmed clean, under
the same policy and detector, by their keyed hash; the masking process drops
its own copy exactly once."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from tcg.runner import session_screen as ss
from tcg.runner.session_mask import FollowingMasker, SkipShown, read_header

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
TCG_SHELL = str(Path(sys.executable).with_name("tcg_shell"))


def cache(env=None):
    opened = ss.open_cache(dict(os.environ, **(env or {})))
    assert opened is not None
    return opened


def confirm(data: bytes) -> bool:
    c, policy = cache()
    return ss.confirm_clean(c, policy, "terminal", data)


def test_only_clean_first_screens_are_remembered_and_never_their_bytes(tcg_home):
    assert confirm(b"\x1b[?2004huser@host:~$ ")
    assert not confirm(f"motd {TOKEN}\r\n$ ".encode())  # something to mask
    assert not confirm(b"$ AKIA")  # a tail the masker would hold back
    c, _ = cache()
    assert [e[0] for e in c.entries()] == [len(b"\x1b[?2004huser@host:~$ ")]
    raw = Path(c.path).read_bytes()
    assert b"user@host" not in raw and TOKEN.encode() not in raw


def test_entries_belong_to_one_policy(tcg_home, tmp_path, monkeypatch):
    confirm(b"$ ")
    c, _ = cache()
    policy = tmp_path / "p.toml"
    policy.write_text('[mask]\nterminal-hold-ms = 300\n')
    monkeypatch.setenv("TCG_POLICY", str(policy))
    other, _ = cache()
    assert other.path != c.path and other.entries() == []


def test_a_forged_cache_file_reads_as_empty(tcg_home):
    confirm(b"$ ")
    c, _ = cache()
    Path(c.path).write_bytes(b"0" * 64 + b"\n2 " + b"a" * 64 + b"\n")
    assert c.entries() == []


def test_first_screen_matching():
    c = ss.ScreenCache("/nonexistent", b"k" * 32, "fp", "sig")
    c.entries = lambda: [(len(s), c.mac(s), c.head_mac(s)) for s in (b"$ ", b"hello\r\n$ ")]
    f = ss.FirstScreen(c, None)
    f.pending += b"$"
    assert f.match() is None  # could still become "$ "
    f.pending += b" "
    assert f.match() == 2
    g = ss.FirstScreen(c, None)
    g.pending += b"% other prompt"
    assert g.match() == 0
    h = ss.FirstScreen(c, None)
    h.pending += b"$ AKIAIOSFODNN7EXAMPL"  # a known screen and more in the same output
    assert h.match() == 0


def test_output_that_cannot_become_a_longer_known_screen_is_not_held():
    c = ss.ScreenCache("/nonexistent", b"k" * 32, "fp", "sig")
    long = b"\x1b]0;user@host: ~/src/project\x07T054.123456> "
    c.entries = lambda: [(len(b"$ "), c.mac(b"$ "), c.head_mac(b"$ ")),
                         (len(long), c.mac(long), c.head_mac(long))]
    f = ss.FirstScreen(c, None)
    f.pending += long[:20]
    assert f.match() is None  # the head agrees: it may still become the long screen
    g = ss.FirstScreen(c, None)
    g.pending += b"\x1b]0;root@box: ~/other\x07T"  # differs within the head
    assert g.match() == 0
    h = ss.FirstScreen(c, None)
    h.pending += b"hello"  # shorter than the head: nothing to compare yet
    assert h.match() is None
    c.entries = lambda: [(len(long), c.mac(long), "")]  # a line from before heads were kept
    old = ss.FirstScreen(c, None)
    old.pending += b"\x1b]0;user@host: ~/other\x07T"
    assert old.match() is None


def test_first_screen_is_measured_up_to_the_first_pause():
    got = []
    c = ss.ScreenCache("/nonexistent", b"k" * 32, "fp", "sig")
    c.entries = lambda: []
    f = ss.FirstScreen(c, got.append)
    t = 100.0
    f.first_at = t
    f.collect(b"\x1b[?2004h", t)
    f.collect(b"$ ", t + 0.01)
    assert f.collect_deadline() == pytest.approx(t + 0.01 + ss.PAUSE)
    f.collect(b"l", t + 1.0)  # a key's echo after the pause: not part of it
    assert got == [len(b"\x1b[?2004h$ ")]


def test_masking_process_confirms_the_screen_the_station_measured(tcg_home):
    r, w = os.pipe()
    try:
        m = FollowingMasker("terminal")
        conf = ss.ScreenConfirmer(m, r, lambda: m.policy, "terminal")
        screen = b"\x1b[?2004hhost$ "
        out = conf.feed(screen)
        os.write(w, b"screen %d\n" % len(screen))
        out += conf.feed(b"l")  # the next output (a key's echo) lets it read the message
        assert out == b"\x1b[?2004hhost$ l"
        c, _ = cache()
        assert [e[0] for e in c.entries()] == [len(screen)]
        os.write(w, b"screen 999999\n")  # longer than what it kept: ignored
        conf.flush()
        assert [e[0] for e in c.entries()] == [len(screen)]
    finally:
        os.close(w)


def test_the_station_may_name_the_screen_before_its_bytes_arrive(tcg_home):
    """The first session after an install: the masking process is still loading
    when the station (which reads the shell's output first) sends ``screen N``;
    the screen is confirmed once its N bytes are there, not dropped."""
    r, w = os.pipe()
    try:
        m = FollowingMasker("terminal")
        conf = ss.ScreenConfirmer(m, r, lambda: m.policy, "terminal")
        screen = b"\x1b[?2004h" + b"dev@laptop ~/work/some/project (main) % " * 3
        os.write(w, b"screen %d\n" % len(screen))
        conf.feed(screen[:40])  # reads the word: 40 of its bytes are here
        assert cache()[0].entries() == []
        conf.feed(screen[40:] + b"l")  # the rest, and a key's echo
        assert [e[0] for e in cache()[0].entries()] == [len(screen)]
    finally:
        os.close(w)


class Echo:
    def __init__(self):
        self.out = b""

    def feed(self, data):
        return data

    def flush(self):
        return b""

    def release_idle(self):
        return b""

    def idle_deadline(self):
        return None


@pytest.mark.parametrize("cuts", [[1] * 8, [3], [4], [5], [2, 1, 1], [8]])
def test_skip_shown_drops_exactly_the_shown_bytes_in_any_chunking(cuts):
    notices = []
    s = SkipShown(Echo(), 4, notices.append)
    data, out, pos = b"$ > ls\r\n", b"", 0
    for n in cuts:
        out += s.feed(data[pos:pos + n])
        pos += n
    out += s.feed(data[pos:]) + s.flush()
    assert out == data[4:] and notices == []


def test_skip_shown_writes_the_masked_form_when_the_screen_was_stale(tcg_home):
    notices = []
    shown = f"x {TOKEN}\r\n".encode()  # shown early (a stale cache entry), then masked here
    s = SkipShown(FollowingMasker("terminal"), len(shown), notices.append)
    out = s.feed(shown + b"next\r\n") + s.flush()
    assert notices and b"stale" in notices[0]
    assert b"<SECRET:github-pat-classic:" in out and TOKEN.encode() not in out


def test_worker_header():
    r, w = os.pipe()
    os.write(w, ss.header(12) + b"rest of the output")
    os.close(w)
    assert read_header(r) == (12, b"rest of the output")
    os.close(r)


def test_a_second_session_shows_its_first_screen_once(tmp_path, tcg_home):
    """End to end: the first session confirms its prompt; the second shows it
    early, and the screen still has it once (the masker dropped its copy)."""
    pexpect = pytest.importorskip("pexpect")
    env = dict(os.environ, PS1="same-prompt> ", TERM="xterm")
    argv = ["session", "--shell", "bash", "--", "--norc", "--noprofile", "-i"]
    for n in range(2):
        child = pexpect.spawn(TCG_SHELL, argv, cwd=str(tmp_path), env=env, timeout=120,
                              encoding="utf-8")
        child.expect("same-prompt> ")
        if n == 0:
            time.sleep(1.0)  # the first screen ends with a pause
            child.send("#")  # output after it: the masking process then reads the station's word
            deadline = time.monotonic() + 60
            while not cache()[0].entries():
                assert time.monotonic() < deadline, "the first screen was never confirmed"
                time.sleep(0.1)
            child.send("\x15")  # ^U: drop the "#"
        child.sendline(f"echo {TOKEN[:4]}''{TOKEN[4:]}; exit")
        child.expect(pexpect.EOF)
        seen = child.before
        child.close()
        assert "same-prompt> " not in seen  # no second copy of the prompt after the first
        assert TOKEN not in seen and "<SECRET:github-pat-classic:" in seen
    assert cache()[0].entries()


def test_short_output_that_cannot_become_a_known_screen_is_not_held(tmp_path):
    """A short prompt that changes (zsh's ``T054.123456> ``: shorter than a head)
    goes to the masker at once when its first bytes differ from every longer
    known screen's, instead of waiting FIRST_WAIT for more."""
    c = ss.ScreenCache(str(tmp_path), b"k" * 32, "fp", "sig")
    assert c.add(b"T054.123456> ") and c.add(b"T054.987654> ")
    for other, held in ((b"T055.1", 0), (b"T054.1234", None), (b"X", 0), (b"T054.", None)):
        f = ss.FirstScreen(ss.ScreenCache(str(tmp_path), b"k" * 32, "fp", "sig"), None)
        f.pending += other
        assert f.match() == held, other
    f = ss.FirstScreen(ss.ScreenCache(str(tmp_path), b"k" * 32, "fp", "sig"), None)
    f.pending += b"T054.987654> "
    assert f.match() == len(b"T054.987654> ")  # a known one is still shown early


def test_output_that_differs_after_the_head_is_not_held(tmp_path):
    """zsh starts its first screen with 18 bytes of attribute resets, the same
    every time (the head): a changing prompt after them goes to the masker as soon
    as a kept prefix (32, 64, … bytes) of it differs."""
    reset = b"\r\x1b[0m\x1b[27m\x1b[24m\x1b[J"
    c = ss.ScreenCache(str(tmp_path), b"k" * 32, "fp", "sig")
    assert c.add(reset + b"T685.509868145> \x1b[K\x1b[?1h\x1b=\x1b[?2004h")
    f = ss.FirstScreen(ss.ScreenCache(str(tmp_path), b"k" * 32, "fp", "sig"), None)
    f.pending += reset + b"T686.12345678> \x1b[K"  # shorter than the known one, same head
    assert f.match() == 0
    g = ss.FirstScreen(ss.ScreenCache(str(tmp_path), b"k" * 32, "fp", "sig"), None)
    g.pending += reset + b"T685.509868145> "  # may still become it
    assert g.match() is None


def test_the_first_screen_ends_at_the_first_key():
    """A key sent to the shell ends the first screen even without a pause: its
    echo is not the shell's own first output. (Remembered with the echo, the
    screen made every later session's prompt, a prefix of it, wait FIRST_WAIT.)"""
    from tcg.runner.session import SessionOutput

    class Proc:
        def control(self, data):
            got.append(data)

    got: list[bytes] = []
    out = SessionOutput.__new__(SessionOutput)
    out.proc = Proc()
    c = ss.ScreenCache("/nonexistent", b"k" * 32, "fp", "sig")
    c.entries = lambda: []
    out.first = ss.FirstScreen(c, out.confirm_first_screen)
    t = 100.0
    out.first.collect(b"\x1b[?2004h$ ", t)
    out.input_seen()
    out.first.collect(b"exit\r\n", t + 0.01)  # the echo, well within PAUSE
    out.input_seen()
    assert got == [b"screen %d\n" % len(b"\x1b[?2004h$ ")]
    assert out.first.collect_deadline() is None


def test_a_session_typed_into_at_once_remembers_only_its_prompt(tmp_path, tcg_home):
    """End to end, with real bash: ``exit`` typed as soon as the prompt shows (no
    pause) leaves the prompt as the remembered first screen, not prompt + echo.
    A first session builds the detector's caches, so that the second one's
    prompt is on the screen well within PAUSE of the shell printing it (as after
    login: no fork server)."""
    pexpect = pytest.importorskip("pexpect")
    argv = ["session", "--shell", "bash", "--", "--norc", "--noprofile", "-i"]
    screens = []
    for prompt, pause in ((b"warm-up> ", 1.0), (b"quick-prompt> ", 0.0)):
        # no fork server: a served masking process is ready at once and never waits
        env = dict(os.environ, PS1=prompt.decode(), TERM="xterm", TCG_MASK_SERVER="0")
        child = pexpect.spawn(TCG_SHELL, argv, cwd=str(tmp_path), env=env, timeout=120)
        child.delaybeforesend = None  # typed the moment the prompt shows
        child.expect(prompt)
        screens.append(len(child.before + child.after))
        time.sleep(pause)
        child.sendline(b"exit")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0
    deadline = time.monotonic() + 60
    while len(cache()[0].entries()) < 2:  # each masking process confirms as it ends
        assert time.monotonic() < deadline, f"not both first screens confirmed: {cache()[0].entries()}"
        time.sleep(0.1)
    assert sorted(e[0] for e in cache()[0].entries()) == sorted(screens)
