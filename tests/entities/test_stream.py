"""The alias stream is chunk-invariant, and it follows the secret masker."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
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


@pytest.mark.parametrize("lead", [0, 1, 300, 5000])
@pytest.mark.parametrize("held", ["", "Вчера у ", "Петров и Ш"])
def test_a_name_after_released_context_is_found(matcher, lead, held):
    """A buffer's prefilter hits are matched around in the buffer with the released
    context before it (their offsets moved by it): names after a long released line,
    after held bytes, as the whole stream gives them."""
    first = ("x" * lead + "\n" + held).encode()
    second = ("шевченко, Петровым и Ромашкой " * 200 + "\nСулейманов Дильнозой " + "x" * 600
              + "\n").encode()
    s = AliasStream(matcher)
    out = s.feed(first) + s.feed(second) + s.flush()
    whole = first + second
    assert out == replace_bytes(whole, matcher.find_bytes(whole))
    assert out.count(b"CTXG_") >= 402


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


def test_a_command_in_an_install_without_registries_costs_no_hash(tmp_path):
    """Every mediated command asks for the project's entities: without any registry
    that is one stat, and hashlib (OpenSSL) is never loaded."""
    import os
    import subprocess
    import sys

    code = ("import sys; from tcg.entities.stream import entities_for; "
            "print(entities_for(), 'hashlib' in sys.modules)")
    env = {**os.environ, "HOME": str(tmp_path), "TCG_HOME": str(tmp_path / "tcg")}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env,
                       cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["None", "False"]


def test_the_project_id_is_the_sha256_of_the_real_path(tmp_path):
    import hashlib

    from tcg.entities.locate import project_id

    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    expect = hashlib.sha256(str((tmp_path / "real").resolve()).encode()).hexdigest()[:16]
    assert project_id(str(tmp_path / "link")) == expect == project_id(str(tmp_path / "real"))


# a chunk after held bytes is scanned apart from them (AliasStream._split): the same
# output, chunk by chunk, as scanning them together
NAMES = ["Petrov", "petrovka", "Suleymanova", "SULEIMANOV", "Romashka", "Петров", "Ромашкой",
         "Петровка", "Ро\u200bмашка", "Sh\u200bevchenko", "\uff50etrov", "P\u03bftrov", "Bae"]
FILL = ["\n", "\r", "\r\n", " ", "-", "x", "_", "7", "é", "\u2500", "\u2026", "\x1b[1m", "\x1b[0m",
        "\x1b[", "m", "\xa0", "ok ", "done\n", "ab"]
PIECES = NAMES + FILL * 30  # mostly text without a name: the shortcut's case
STREAM_TEXT = st.lists(st.sampled_from(PIECES), max_size=160).map("".join)


def _feed_all(matcher, data: bytes, cuts: list[int]) -> list[bytes]:
    s = AliasStream(matcher)
    outs, i = [], 0
    for n in cuts:
        outs.append(s.feed(data[i : i + n]))
        i += n
    outs.append(s.feed(data[i:]))
    outs.append(s.flush())
    return outs


@settings(max_examples=300, deadline=None)
@given(STREAM_TEXT, st.lists(st.integers(1, 80), max_size=30), st.sampled_from([1, 3, 8, 8192]))
@example("ok ok\nabc\rdef", [2], 8192)  # the last break is a \r after the last \n
@example("ok\rok Petr", [3, 5], 8192)  # a \r before the first \n, a name at the end
def test_split_scan_releases_what_the_joined_scan_does(matcher, text, cuts, junction):
    """Held bytes + a new chunk scanned apart (names, breaks, colour sequences and
    rare characters at every chunk edge): each feed() releases exactly what it
    releases when they are scanned together, and the whole is what the matcher
    finds in the whole text."""
    import tcg.entities.stream as stream

    data = text.encode()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(stream, "SPLIT_MIN", 10**9)
        joined = _feed_all(matcher, data, cuts)
        mp.setattr(stream, "SPLIT_MIN", 1)
        mp.setattr(stream, "SPLIT_JUNCTION", junction)
        split = _feed_all(matcher, data, cuts)
    assert split == joined
    assert b"".join(split) == replace_bytes(data, matcher.find_bytes(data))


@settings(max_examples=300, deadline=None)
@given(STREAM_TEXT.map(lambda t: t.replace("\n", "").replace("\r", "")), STREAM_TEXT)
def test_split_scan_has_no_hit_only_where_the_joined_one_has_none(matcher, tail, text):
    """The shortcut's claim itself: when both of its scans are empty, so is the scan
    of the held bytes and the chunk together; when not, the hits it hands on (matched
    around, not scanned again) stand for every hit of the joined scan — each lies at
    most the thinning distance (32 bytes) after one of them, as within one scan."""
    pre = matcher._prefilter()
    if pre is None:
        pytest.skip("hyperscan is not installed")
    s = AliasStream(matcher)
    t, d = tail.encode(), text.encode()
    out = s._split(t, d) if t else None
    if isinstance(out, bytes):
        assert pre.scan(t + d) == []
    elif out is not None and out[0] is not None:
        joined = pre.scan(t + d)
        assert joined is not None
        for h in joined:
            assert any(0 <= h - k <= 32 for k in out[0]), (h, out[0])


def _bytes_consumed(pattern: bytes) -> set[int]:
    """Every byte some match of ``pattern`` may consume (re's parse of it)."""
    try:
        import re._constants as c
        import re._parser as sre
    except ImportError:  # Python 3.10
        import sre_constants as c  # type: ignore[no-redef]
        import sre_parse as sre  # type: ignore[no-redef]
    ANY, AT, BRANCH, IN, LITERAL, NEGATE = c.ANY, c.AT, c.BRANCH, c.IN, c.LITERAL, c.NEGATE
    MAX_REPEAT, MIN_REPEAT, NOT_LITERAL, RANGE, SUBPATTERN = (
        c.MAX_REPEAT, c.MIN_REPEAT, c.NOT_LITERAL, c.RANGE, c.SUBPATTERN)

    out: set[int] = set()

    def walk(items) -> None:
        for op, av in items:
            if op is LITERAL:
                out.add(av)
            elif op in (NOT_LITERAL, ANY):
                out.update(range(256))
            elif op is IN:
                if any(o is NEGATE for o, _ in av):
                    out.update(range(256))
                for o, a in av:
                    if o is LITERAL:
                        out.add(a)
                    elif o is RANGE:
                        out.update(range(a[0], a[1] + 1))
                    elif o is not NEGATE:
                        out.update(range(256))  # a category: assume anything
            elif op in (MAX_REPEAT, MIN_REPEAT):
                walk(av[2])
            elif op is SUBPATTERN:
                walk(av[-1])
            elif op is BRANCH:
                for sub in av[1]:
                    walk(sub)
            elif op is not AT:
                out.update(range(256))

    walk(sre.parse(pattern))
    return out


def test_no_prefilter_hit_spans_a_line_break(matcher):
    """What the split scan rests on: no expression of either database holds a \\n or
    \\r inside it (pieces, rare characters, triggers, the stop and lead classes); one
    may start with one (the byte before a piece) or end with one (the byte after a
    piece, after a lead byte cut short), which both scans see with the bytes around."""
    from tcg.entities.prefilter import (
        _CYRILLIC_LEAD_CLASS,
        _LONE_LEAD,
        LEFT_CONTEXT,
        RIGHT_CONTEXT,
        _lead_class,
        _literal_bytes,
        _trigger_expressions,
        case_triggers,
        prefilter_literals,
    )

    trig = _trigger_expressions()
    rare = [b for t in trig if (b := _literal_bytes(t)) is not None]
    exprs = [*trig, _lead_class(rare), _CYRILLIC_LEAD_CLASS,
             *case_triggers(p for p, _ in prefilter_literals(matcher._texts))]
    edges = {_LONE_LEAD: rb"[\xd0\xd1]"}  # an expression -> its part before its last byte
    for expr in exprs:
        assert not _bytes_consumed(edges.get(expr, expr)) & {0x0A, 0x0D}, expr
    assert _LONE_LEAD.startswith(edges[_LONE_LEAD]) and _bytes_consumed(_LONE_LEAD[10:]) >= {0x0A}
    # the contexts: one byte after a piece; before it, one byte or a continuation byte
    # after one (never a break), and a break only as that first byte
    assert re.fullmatch(rb"\[[^\]]*\]", RIGHT_CONTEXT)
    assert re.fullmatch(LEFT_CONTEXT, b"\n") and re.fullmatch(LEFT_CONTEXT, b"\n\x80")
    assert not re.fullmatch(LEFT_CONTEXT, b"\x80\n") and not re.fullmatch(LEFT_CONTEXT, b"\n\n")
    assert _bytes_consumed(rb"a\nb") >= {0x0A}  # the walker sees a break where there is one
    assert _bytes_consumed(rb"[^x]") >= {0x0A, 0x0D}
    for piece, _bound in prefilter_literals(matcher._texts):
        assert b"\n" not in piece and b"\r" not in piece
