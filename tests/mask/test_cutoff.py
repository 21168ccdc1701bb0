"""Secrets cut off mid-token: a stream that ends (strict mode) or pauses byte by byte
(terminal mode) inside a secret must not release its value raw."""

from __future__ import annotations

import subprocess

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.mask.helpers import PLACEHOLDER, leaks, masker, run, slices
from tests.runner.helpers import TCG_SHELL, station_env

GHP_CUT = b"ghp_" + b"R7kQm2Xz9LpW4vNc8TyB3hJd"  # 24 of a token's 36 body characters
AWS_CUT = b"AKIA" + b"QWER"


def test_strict_flush_masks_a_token_cut_off_at_end_of_stream():
    for data, value in ((GHP_CUT, GHP_CUT), (b"log: " + GHP_CUT, GHP_CUT),
                        (b"ok\nk=" + AWS_CUT, AWS_CUT)):
        out = run(data, cut_off_tails=True)
        assert out.endswith(b">") and b"<SECRET:partial:" in out, data[:6]
        assert leaks(out, slices(value[4:], 4)) == []
        # chunk-invariant like the rest of strict mode
        assert run(data, (1,) * len(data), cut_off_tails=True) == out \
            == run(data, (3, 5), idle=True, cut_off_tails=True)


def test_strict_flush_keeps_ordinary_tails_and_whole_matches():
    for data in (b"hello", b"see AKIA docs", b"ghp_", b"mysql --password\n", GHP_CUT + b"\n",
                 b"prefix ghp_ then text"):
        assert run(data, cut_off_tails=True) == data
    whole_key = b"k=AKIA" + b"QWERTZUIOPLK7Y3X"
    out = run(whole_key, cut_off_tails=True)
    assert out.startswith(b"k=<SECRET:aws-access-key-id:") and b"partial" not in out


def test_a_document_ends_where_it_ends():
    """A file, a hook's or an MCP reply is complete: a short token at its end is not
    a cut-off one (peers' near-miss test samples end so), so only a live command's
    output gets the partial placeholder (the station's masker)."""
    for data in (GHP_CUT, b"log: " + GHP_CUT, b"ok\nk=" + AWS_CUT):
        assert run(data) == data


def test_run_line_killed_mid_token_prints_no_value(tcg_home):
    """The reviewers' case: `timeout 1 sh -c 'printf <cut token>; sleep 5'` through the
    station agent (pipe mode, strict masking); and the same with kill -9."""
    value = GHP_CUT.decode()
    for line in (f"timeout 1 sh -c 'printf {value}; sleep 5'",
                 f"sh -c 'printf {value}; kill -9 $$'"):
        res = subprocess.run([TCG_SHELL, "run-line", line], capture_output=True, timeout=60,
                             env=station_env())
        assert PLACEHOLDER.fullmatch(res.stdout), res.stdout[:20]
        assert leaks(res.stdout, slices(GHP_CUT[4:], 4)) == []


class _Clock:
    """A stand-in for the masker's ``time`` module: the runner loop's clock, driven by the test."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


def _typed(data: bytes, gaps: list[float], monkeypatch, hold_ms: int = 500) -> bytes:
    """Feed ``data`` a byte at a time, ``gaps[i]`` seconds before byte ``i``, calling
    release_idle() whenever the deadline passes first (as the runner loops do)."""
    import tcg.mask.masker as masker_mod

    clock = _Clock()
    monkeypatch.setattr(masker_mod, "time", clock)
    m = masker("terminal", hold_ms)
    out = bytearray()
    for i in range(len(data)):
        arrive = clock.now + gaps[i % len(gaps)]
        deadline = m.idle_deadline()
        while deadline is not None and deadline <= arrive:
            clock.now = max(clock.now, deadline)
            out += m.release_idle()
            deadline = m.idle_deadline()
        clock.now = arrive
        out += m.feed(data[i : i + 1])
    deadline = m.idle_deadline()
    if deadline is not None:
        clock.now = deadline
        out += m.release_idle()
    return bytes(out + m.flush())


AWS_BODY = b"QWERTZUIOPLK7Y3X"
GHP_BODY = b"Zq8Rt5Lm2Np9Vx4Kc7Bw1Hs6Jd3Fg0Ty5UaQ"


def test_terminal_key_written_a_byte_at_a_time_is_masked_whole(monkeypatch):
    """The reviewers' `slow` case in-process: a byte every 100 ms (and typing at 120 ms,
    and gaps just under the hold) used to release all but the last byte."""
    for gap in (0.1, 0.12, 0.3, 0.49):
        for prefix, body in ((b"AKIA", AWS_BODY), (b"ghp_", GHP_BODY)):
            out = _typed(b"key=" + prefix + body + b"\r\n$ ", [gap], monkeypatch)
            assert leaks(out, slices(body, 4)) == [], (gap, prefix)
            # the placeholder is the one of the whole key, as if it had come at once
            m = masker("terminal")
            at_once = m.feed(b"key=" + prefix + body + b"\r\n") + m.flush()
            assert PLACEHOLDER.findall(out) == PLACEHOLDER.findall(at_once), (gap, prefix)
            assert out.endswith(b">\r\n$ ")


def test_terminal_ordinary_typing_is_not_held_after_an_idle_release(monkeypatch):
    """Only bytes that continue the candidate are held: after `AKIA-not-a-key` is
    released, the next word arrives at once; a gap longer than the hold still
    releases (documented limit), and the cap ends even a candidate that keeps growing."""
    import tcg.mask.masker as masker_mod

    clock = _Clock()
    monkeypatch.setattr(masker_mod, "time", clock)
    m = masker("terminal", 500)
    assert m.feed(b"AKIA-not") == b""
    clock.now += 0.6
    assert m.release_idle() == b"AKIA-not"
    assert m.feed(b" ls") == b" ls" and m.idle_deadline() is None
    # a candidate that keeps growing: released at the latest HOLD_CAP_PERIODS holds on
    m = masker("terminal", 500)
    assert m.feed(b"ghp_") == b""
    first = m.idle_deadline()
    for c in GHP_BODY[:20]:
        clock.now += 0.4
        assert m.feed(bytes([c])) == b""
        assert m.idle_deadline() == clock.now + 0.5  # restarted by each extending byte
    assert first is not None and m.idle_deadline() <= first - 0.5 + masker_mod.HOLD_CAP_PERIODS * 0.5


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(gaps=st.lists(st.floats(min_value=0.0, max_value=0.49), min_size=1, max_size=8),
       shape=st.sampled_from([(b"AKIA", 16, b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"),
                              (b"ghp_", 36, b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")]),
       rnd=st.randoms(use_true_random=False),
       prefix=st.sampled_from([b"", b"key=", b"$ echo ", b"x\r\n"]))
def test_property_gaps_below_the_hold_never_show_the_random_part(gaps, shape, rnd, prefix, monkeypatch):
    anchor, n, alphabet = shape
    body = bytes(rnd.choice(alphabet) for _ in range(n))
    assume(len(set(body)) >= n // 2)  # a random key, not the shrinker's AAAA…
    m = masker("terminal")
    at_once = m.feed(prefix + anchor + body + b"\r\n") + m.flush()
    assume(leaks(at_once, slices(body, 4)) == [])  # (a low-entropy body is no key at all)
    out = _typed(prefix + anchor + body + b"\r\n", gaps, monkeypatch)
    assert leaks(out, slices(body, 4)) == [], body
