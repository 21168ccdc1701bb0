"""The alias stream is chunk-invariant, and it follows the secret masker."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tcg.entities.stream import AliasStream, Chained, replace_bytes

TEXT = ("Договор с ООО «Ромашка» подписал Петров А.И., копия Алексею Петрову.\n"
        "Петровка 38; петров день; Ро\u200bмашка и \x1b[31mСулейманов\x1b[0m.\n" + "x" * 3000
        + " Ромашкой\nконец без перевода строки Дильноза").encode()


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(1, 700), max_size=40))
def test_chunk_invariance(matcher, cuts):
    whole = replace_bytes(TEXT, matcher.find_bytes(TEXT))
    s = AliasStream(matcher)
    out, i = b"", 0
    for n in cuts:
        out += s.feed(TEXT[i : i + n])
        i += n
    out += s.feed(TEXT[i:]) + s.flush()
    assert out == whole
    assert "Ромашк".encode() not in out and "Петров А".encode() not in out


def test_holds_only_an_unfinished_line(matcher):
    s = AliasStream(matcher)
    assert s.feed("Петров пришёл\nПетр".encode()) == b"CTXG_PERSON_1 \xd0\xbf\xd1\x80\xd0\xb8\xd1\x88\xd1\x91\xd0\xbb\n"
    assert s.feed("овка".encode()) == b""
    assert s.flush() == "Петровка".encode()


def test_chained_after_the_secret_masker(matcher):
    from tcg.detect.engine import load_detector
    from tcg.keyhash import KeyedHasher
    from tcg.mask import Masker

    m = Chained(Masker(load_detector(), KeyedHasher(b"k" * 32), "strict"), AliasStream(matcher))
    data = "Петров: AKIAZ7VRSQ2YRBX3GHKQ\n".encode()
    out = m.feed(data[:9]) + m.feed(data[9:]) + m.flush()
    assert out.startswith(b"CTXG_PERSON_1: <SECRET:aws-access-key-id:")
    assert m.count == 1  # the masker's attributes pass through
