"""Escape sequences never glue text onto a secret nor hide one: cursor moves leave a
boundary in the clean view, malformed / over-long / paused sequences are parsed as a
terminal parses them, and a clipboard (OSC 52) payload too long to check is replaced.
Real detector, the masker's public API."""

from __future__ import annotations

import base64
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcg.mask.view import View
from tests.mask.helpers import masker, run

AKIA = b"AKIAQWERTZUIOPLK7Y3X"
GHP = b"ghp_Zq8Rt5Lm2Np9Vx4Kc7Bw1Hs6Jd3Fg0Ty5UaQ"
SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _leaks(out: bytes) -> bool:
    return any(s in out for s in (AKIA[4:], GHP[4:], AKIA[:12], GHP[:14]))


def _clipboard_leaks(out: bytes) -> bool:
    for m in re.finditer(rb"\x1b\]52;[^;\x07\x1b]*;([A-Za-z0-9+/=]*)", out):
        payload = m.group(1)
        if GHP[4:] in base64.b64decode(payload[: len(payload) // 4 * 4] or b""):
            return True
    return False


def _both(data: bytes, sizes: tuple[int, ...] = ()) -> list[bytes]:
    return [run(data, sizes, mode) for mode in ("strict", "terminal")]


@pytest.mark.parametrize("data", [
    b"\"secret.txt\" 2L, 62 bytes\x1b[1;1H" + AKIA + b"\r\n",  # vim
    b"Wed Dec  2 2026\x1b[3;1H" + AKIA + b"\r\n",  # watch
    b"x\x1b[5C" + AKIA + b"\n", b"x\x1b[2J" + AKIA + b"\n", b"x\x1b8" + AKIA + b"\n",
    b"x\x1bE" + AKIA + b"\n", b"x\x1b[?25l" + AKIA + b"\n",
])
def test_cursor_moves_leave_a_boundary(data: bytes) -> None:
    for out in _both(data):
        assert not _leaks(out)
        assert AKIA not in out


_NON_JOIN_FINAL = st.sampled_from([bytes([b]) for b in range(0x40, 0x7F) if b not in b"mK"])


@SETTINGS
@given(params=st.text("0123456789;:?<>=", max_size=12).map(str.encode),
       inter=st.text(" !\"#$%", max_size=2).map(str.encode), final=_NON_JOIN_FINAL,
       left=st.sampled_from([b"bytes", b"2026", b"key", b"x"]))
def test_any_cursor_csi_between_two_words_never_joins_them(params: bytes, inter: bytes,
                                                           final: bytes, left: bytes) -> None:
    v = View()
    v.append(left + b"\x1b[" + params + inter + final + b"word", final=True)
    assert left + b"word" not in bytes(v.view)
    for out in _both(left + b"\x1b[" + params + inter + final + AKIA + b"\n"):
        assert not _leaks(out)


def test_colour_and_erase_in_line_still_join_a_split_token() -> None:
    """``grep --color`` writes ``ESC[01;31m ESC[K`` inside a word: still one word."""
    data = b"x " + GHP[:11] + b"\x1b[01;31m\x1b[K" + GHP[11:25] + b"\x1b[m\x1b[K" + GHP[25:] + b" y\n"
    for out in _both(data):
        assert not _leaks(out) and b"<SECRET:github-pat-classic:" in out


MALFORMED = [
    b"\x1b[" + b"1;" * 40 + b"1m",  # over CSI_MAX parameter bytes
    b"\x1b[" + b"0" * 200 + b"31m",
    b"\x1b[3\x001m",  # a NUL inside (terminals ignore it)
    b"\x1b[1 1m",  # a parameter after an intermediate: ignored sequence
    b"\x1b[1\x181m",  # CAN cancels the sequence, "1m" is text
    b"\x1b[1\x1a31m",  # SUB likewise
    b"\x1b[1\xc3\xa9m",  # non-ASCII bytes inside: ignored sequence
    b"\x1b]0;title\x01more\x07",  # a control inside a string sequence
    b"\x1b\x01",  # ESC + a control
]


@pytest.mark.parametrize("seq", MALFORMED)
def test_malformed_escape_before_a_token_hides_nothing(seq: bytes) -> None:
    data = b"abc " + seq + GHP + b"\x1b[0m\n" + b"k " + seq + AKIA + b"\n"
    for sizes in ((), (1,) * len(data), (5, 3, 40, 7)):
        for out in _both(data, sizes):
            assert not _leaks(out), (seq, sizes)


def _paused(chunks: list[bytes]) -> bytes:
    m = masker("terminal")
    out = b""
    for c in chunks:
        out += m.feed(c)
        out += m.release_idle()  # as if output paused after every write
    return out + m.flush()


@pytest.mark.parametrize("chunks", [
    [b"abc \x1b[1", b"m" + GHP + b"\n"],
    [b"abc \x1b[1;", b"3", b"1m" + GHP + b"\n"],
    [b"abc \x1b", b"[31m" + GHP + b"\n"],
    [b"\x1b]8;;https://e.com/?t=", GHP + b"\x07 txt\x1b]8;;\x07\n"],
    [b"\x1b]8;;https://e.com/?t=" + b"a" * 5000, b"&t=" + GHP + b"\x07 txt\x1b]8;;\x07\n"],
    [b"x \x1b[" + b"1;" * 60, b"1;" * 30 + b"m" + GHP + b"\n"],
])
def test_an_escape_cut_by_a_pause_hides_nothing(chunks: list[bytes]) -> None:
    out = _paused(chunks)
    assert not _leaks(out)
    assert b"<SECRET:github-pat-classic:" in out


def _osc52(text: bytes) -> bytes:
    return b"\x1b]52;c;" + base64.b64encode(text) + b"\x07"


BIG_CLIP = b"y" * 3500 + b"\nTOKEN=" + GHP + b"\n"


@pytest.mark.parametrize("size", [3500, 10_000, 300_000])
def test_a_clipboard_payload_too_long_to_check_is_replaced(size: int) -> None:
    clip = b"y" * size + b"\nTOKEN=" + GHP + b"\n"
    data = b"before\n" + _osc52(clip) + b"after\n"
    for sizes in ((), (4096,) * 200, (1000, 7, 13000)):
        for out in _both(data, sizes):
            assert not _clipboard_leaks(out) and not _leaks(out)
            assert b"\x1b]<SECRET:" + b"clipboard-oversize" + b":" in out
            assert out.startswith(b"before\n") and out.endswith(b"\x07after\n")


def test_a_long_clipboard_payload_cut_by_pauses_is_replaced_whole() -> None:
    data = _osc52(BIG_CLIP * 3) + b"after\n"
    chunks = [data[i : i + 3000] for i in range(0, len(data), 3000)]
    out = _paused(chunks)
    assert not _clipboard_leaks(out) and not _leaks(out)
    assert out.endswith(b"\x07after\n") and out.count(b"<SECRET:") == 1


def test_clipboard_payload_under_the_limit_passes_or_is_masked() -> None:
    plain = _osc52(b"hello clipboard\n")
    for out in _both(b"a" + plain + b"b\n"):
        assert out == b"a" + plain + b"b\n"
    for out in _both(b"a" + _osc52(b"y" * 200 + b"\nTOKEN=" + GHP + b"\n") + b"b\n"):
        assert not _clipboard_leaks(out)


def test_a_long_hyperlink_url_is_scanned() -> None:
    url = b"https://e.com/" + b"a" * 4100 + b"?t=" + GHP
    data = b"\x1b]8;;" + url + b"\x07link\x1b]8;;\x07\n"
    for sizes in ((), (1000,) * 10):
        for out in _both(data, sizes):
            assert not _leaks(out)
    clean = b"\x1b]8;;https://e.com/" + b"a" * 6000 + b"\x07link\x1b]8;;\x07\n"
    for out in _both(clean, (1000,) * 10):
        assert out == clean


def test_terminal_features_pass_byte_exact() -> None:
    data = (b"\x1b[?1049h\x1b[?2004h\x1b[?1000h\x1b[H\x1b[2J\x1b]0;my title\x07"
            b"\x1b[38;2;255;0;0mred\x1b[0m\x1b[3;5Hmoved\x1b7\x1b[10;1Hx\x1b8\x1b[K"
            b"\x1b]8;;https://example.com/doc\x1b\\link\x1b]8;;\x1b\\\r\n"
            b"\x1b[?1000l\x1b[?2004l\x1b[?1049l")
    for sizes in ((), (1,) * len(data), (3, 9, 2)):
        for out in _both(data, sizes):
            assert out == data


_PIECES = st.sampled_from([
    b"word ", b"\n", b"\x1b[1;1H", b"\x1b[3;1H", b"\x1b[m", b"\x1b[01;31m\x1b[K", b"\x1b[1 1m",
    b"\x1b[3\x001m", b"\x1b[" + b"1;" * 40 + b"1m", b"\x1b]8;;https://e.com/?t=", b"\x07",
    b"\x1b\\", b"\x1b]0;t", b"\x1b", b"[", AKIA, GHP, b"\x08", b"\r",
    _osc52(BIG_CLIP), _osc52(b"short"), "\u200b".encode(), "\u00ad".encode(), b"\xe2", b"\xe2\x80",
    "\u2014 caf\u00e9 \u00a0".encode(),
])


@SETTINGS
@given(parts=st.lists(_PIECES, max_size=12), cuts=st.lists(st.integers(1, 700), max_size=12))
def test_strict_output_is_the_same_however_the_stream_is_cut(parts: list[bytes],
                                                             cuts: list[int]) -> None:
    data = b"".join(parts)
    assert run(data, cuts) == run(data)


FORMAT_CHARS = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]


@pytest.mark.parametrize("ch", FORMAT_CHARS)
def test_an_invisible_format_character_inside_a_token_hides_nothing(ch: str) -> None:
    data = b"tok " + GHP[:10] + ch.encode() + GHP[10:] + b" and " + AKIA[:7] + ch.encode() * 2 + AKIA[7:] + b"\n"
    for sizes in ((), (1,) * len(data), (11, 3)):
        for out in _both(data, sizes):
            assert out.count(b"<SECRET:") == 2, (ch, sizes)


def test_other_text_with_the_same_lead_bytes_passes_byte_exact() -> None:
    data = "a \u2014 caf\u00e9 \u00a0 \u2500\u2502 \ufffd \u20ac1 \u201cq\u201d\n".encode() + b"\xe2\x28\xc2\n"
    for sizes in ((), (1,) * len(data)):
        for out in _both(data, sizes):
            assert out == data
