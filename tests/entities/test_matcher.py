"""Matching vectors, and the fast path against the view (the reference)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

P1, CA, P2, P3, P4 = "CTXG_PERSON_1", "CTXG_COMPANY_A", "CTXG_PERSON_2", "CTXG_PERSON_3", "CTXG_PERSON_4"

MATCH = [
    # persons: every form -> the right alias (with its case ending)
    ("Петров пришёл", P1), ("у Петрова", P1 + "а"), ("Петрову", P1 + "у"), ("Петровым", P1),
    ("Петрове", P1 + "е"), ("Алексей Петров", P1), ("А. Петров", P1), ("Петров А.И.", P1),
    ("Петров А. И.", P1), ("Алексея Ивановича Петрова", P1 + "а"),
    ("Сулейманов", P2), ("Сулейманова", P2 + "а"), ("Сулейманову", P2 + "у"),
    ("Сулеймановым", P2 + "ым"), ("Сулейманове", P2 + "е"), ("Дильнозой", P3 + "ой"),
    ("Дильноза", P3), ("Шевченко", P4),
    # case-insensitive, Latin spellings
    ("ПЕТРОВА", P1 + "а"), ("Petrov", P1), ("Suleymanov", P2), ("Suleimanov", P2),
    # look-alikes, separators, invisible characters, NFKC
    ("Рoмашка", CA), ("POMAШKA", CA), ("Ро машка", CA), ("Ро-машка", CA), ("Ро\u200bмашка", CA),
    ("Ｒｏｍａｓｈｋａ", CA), ("ООО «Ромашка»", CA), ("Ромашкой", CA + "ой"),
    ("\x1b[31mРомашка\x1b[0m", CA), ("Рома\x1b[1mшка", CA), ("Ромашка\u00a0", CA),
]

NO_MATCH = ["Петровка", "Петровский", "Петровна", "Петровичи", "Петровская", "петров день",
            "ромашка на лугу", "Ромашкино", "Петров2", "xПетров", "Петров_id", "АлексейПетров"]


def replaced(matcher, text):
    data = text.encode()
    from tcg.entities.stream import replace_bytes

    return replace_bytes(data, matcher.find_bytes(data)).decode()


@pytest.mark.parametrize(("text", "token"), MATCH)
def test_match_vectors(matcher, text, token):
    out = replaced(matcher, text)
    assert token in out
    assert out.replace(token, "") == text.replace(text, "") or token in out
    for part in ("Петров", "Ромашк", "Сулейман", "Дильноз", "Шевченко", "машка"):
        assert part not in out.replace("Ро машка", "")


@pytest.mark.parametrize("text", NO_MATCH)
def test_must_not_match(matcher, text):
    assert replaced(matcher, text) == text
    assert matcher.replace_text(text)[0] == text


def test_longest_and_fewest_inserted(matcher):
    assert replaced(matcher, "Петров а также") == f"{P1} а также"
    assert replaced(matcher, "Петров Алексей Иванович пришёл") == f"{P1} пришёл"


# ---------------------------------------------------------------- fast path == view

FORMS = ["Петров", "Петрова", "Петровой", "Алексей Петров", "Петров А.И.", "Ромашка", "Ромашкой",
         "Сулейманов", "Дильнозе", "Шевченко", "Petrov", "Romashka"]
LOOKALIKE = {"о": "o", "а": "a", "е": "e", "р": "p", "с": "c", "Р": "P", "О": "O", "А": "A",
             "К": "K", "М": "M", "Т": "T", "В": "B", "Н": "H"}


@st.composite
def spelled(draw):
    """A form, respelled the ways texts respell names."""
    f = list(draw(st.sampled_from(FORMS)))
    for i in range(len(f)):
        r = draw(st.integers(0, 9))
        if r == 0 and f[i] in LOOKALIKE:
            f[i] = LOOKALIKE[f[i]]
        elif r == 1:
            f[i] = f[i].upper()
        elif r == 2:
            f[i] = f[i] + draw(st.sampled_from(["\u200b", "\u00ad", "\x1b[0m", " ", "-", "\u00a0"]))
        elif r == 3 and f[i].isascii() and f[i].isalpha():
            f[i] = chr(ord(f[i].lower()) - 0x61 + 0xFF41)  # full-width
    return "".join(f)


FILLER = st.lists(st.sampled_from(list("abc xyz.,\n-_1йцукенгшщ ёЁ«»\"'\t") + ["\x1b[1m"]),
                  max_size=30).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(FILLER, spelled()), max_size=5), FILLER)
def test_fast_path_equals_view(matcher, parts, tail):
    """find_bytes (prefilter + regions) finds exactly what the view finds on the whole text."""
    text = "".join(a + b for a, b in parts) + tail
    data = text.encode("utf-8")
    fast = [(m.start, m.end, m.token) for m in matcher.find_bytes(data)]
    view = matcher.find_text(text)
    slow = [(len(text[: m.start].encode()), len(text[: m.end].encode()), m.token) for m in view]
    assert fast == slow


def test_dense_text_and_no_hyperscan(matcher, monkeypatch):
    text = ("Петров и Ромашка, Петровка. " * 400)
    data = text.encode()
    want = matcher.find_bytes(data)
    assert len(want) == 800
    import tcg.entities.prefilter as prefilter

    monkeypatch.setattr(prefilter, "DENSE", 10)
    assert matcher.find_bytes(data) == want
    monkeypatch.setattr(matcher, "_hs", (None,))
    assert matcher.find_bytes(data) == want


# ---------------------------------------------------------------- the prefilter's shortcuts

def fast_and_view(matcher, text):
    data = text.encode("utf-8")
    fast = [(m.start, m.end, m.token) for m in matcher.find_bytes(data)]
    slow = [(len(text[: m.start].encode()), len(text[: m.end].encode()), m.token)
            for m in matcher.find_text(text)]
    return fast, slow


@pytest.mark.parametrize("piece", ["Петро", "ромаш", "Ёлкин", "ЩЕДРЁ", "Ли", "жёлудь"])
def test_every_casing_is_spelled_or_fires_a_trigger(piece):
    """The literals spell three casings of a Cyrillic piece; every other casing (all
    of them, with е/ё either way) holds one of the piece's casing triggers (its own
    letter pairs and triples, oddly cased)."""
    import itertools
    import re

    from tcg.entities.prefilter import _variants, case_triggers

    spelled = set(_variants(piece, limit=1 << 12))
    assert len(spelled) < 2 ** len(piece) or len(piece) < 3
    triggers = [re.compile(re.escape(t)) for t in case_triggers([piece.encode()])]
    assert triggers or len(piece) < 2
    for ups in itertools.product((False, True), repeat=len(piece)):
        cased = "".join(c.upper() if u else c.lower() for c, u in zip(piece, ups, strict=True))
        for yo in itertools.product(*[("е", "ё") if c in "её" else ("Е", "Ё") if c in "ЕЁ" else (c,)
                                      for c in cased]):
            spelling = "".join(yo)
            assert spelling in spelled or any(t.search(spelling.encode()) for t in triggers), spelling


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(FILLER, st.sampled_from(FORMS), st.lists(st.booleans(), min_size=24,
                                                                     max_size=24)), max_size=4),
       FILLER)
def test_any_casing_fast_path_equals_view(matcher, parts, tail):
    """Names in any mix of upper and lower case: the fast path finds what the view finds."""
    text = "".join(a + "".join(c.upper() if u else c.lower() for c, u in zip(f, ups, strict=False))
                   for a, f, ups in parts) + tail
    fast, slow = fast_and_view(matcher, text)
    assert fast == slow


# text with no byte 0xD0..0xD3 (no letter of U+0400..U+04FF): scanned with the smaller database
LATIN_FORMS = ["Petrov", "Petrova", "Romashka", "Suleymanov", "Suleimanov", "Shevchenko", "Dilnoza",
               "Suleymanovym", "SULEIMANOVA", "Shevchenkovskaya", "petrovka"]
NO_CYRILLIC_CHARS = list("abc xyz.,\n-_1\"'\t") + [
    "\x1b[1m", "\x1b[0m", "\u200b", "\u00ad", "\u2014", "\u2026", "\u2013", "\u00a0", "\u2009",
    "\u03bf", "\u03b1", "\uff50", "\uff52", "é", "ü"]
NO_CYRILLIC = st.lists(st.sampled_from(NO_CYRILLIC_CHARS), max_size=30).map("".join)
# the same with letters of each Cyrillic lead byte (U+0490, U+04E9: 0xD2, 0xD3)
SOME_CYRILLIC = st.lists(st.sampled_from(NO_CYRILLIC_CHARS + ["\u0490", "\u04e9", "\u0456", "й"]),
                         max_size=30).map("".join)


@st.composite
def latin_spelled(draw):
    f = list(draw(st.sampled_from(LATIN_FORMS)))
    for i in range(len(f)):
        r = draw(st.integers(0, 9))
        if r == 0:
            f[i] = f[i].swapcase()
        elif r == 1:
            f[i] += draw(st.sampled_from(["\u200b", "\x1b[0m", " ", "-", "\u2009"]))
        elif r == 2 and f[i].isascii() and f[i].isalpha():
            f[i] = chr(ord(f[i].lower()) - 0x61 + 0xFF41)  # full-width
        elif r == 3 and f[i] in "oa":
            f[i] = {"o": "\u03bf", "a": "\u03b1"}[f[i]]  # Greek look-alikes
    return "".join(f)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(NO_CYRILLIC, latin_spelled()), max_size=5), NO_CYRILLIC)
def test_no_cyrillic_database_gives_the_same_hits(matcher, parts, tail):
    """Without a Cyrillic lead byte the smaller database is scanned: the same hits
    as the full one, and the fast path still finds what the view finds."""
    from tcg.entities.prefilter import Prefilter, has_cyrillic_lead

    text = "".join(a + b for a, b in parts) + tail
    data = text.encode("utf-8")
    assert not has_cyrillic_lead(data)
    pre = matcher._prefilter()
    if pre is None:
        pytest.skip("hyperscan is not installed (the view is the only path)")
    assert pre.plain is not None
    full_only = Prefilter(pre.db, pre.first_literal, pre.whole)
    assert pre.scan(data) == full_only.scan(data)
    fast, slow = fast_and_view(matcher, text)
    assert fast == slow


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(SOME_CYRILLIC, latin_spelled()), max_size=5), SOME_CYRILLIC)
def test_either_database_gives_the_full_ones_hits(matcher, parts, tail):
    """Latin spellings beside letters of every Cyrillic lead byte (the smaller
    database leaves out the triggers for a Latin letter touching a Cyrillic one):
    the hits of the full database, and the view's matches."""
    from tcg.entities.prefilter import Prefilter

    text = "".join(a + b for a, b in parts) + tail
    data = text.encode("utf-8")
    pre = matcher._prefilter()
    if pre is None:
        pytest.skip("hyperscan is not installed (the view is the only path)")
    full_only = Prefilter(pre.db, pre.first_literal, pre.whole)
    assert pre.scan(data) == full_only.scan(data)
    fast, slow = fast_and_view(matcher, text)
    assert fast == slow


@pytest.mark.parametrize("text", ["xҐPetrov", "Petrovө", "ө\x1b[1mPetrova", "Ґ Suleymanovym Ґ"])
def test_a_latin_name_beside_an_extended_cyrillic_letter(matcher, text):
    fast, slow = fast_and_view(matcher, text)
    assert fast == slow


@pytest.mark.parametrize("text", ["Suleymanov", "Suleymanova.", "(Suleymanovym)", "SULEIMANOVU",
                                  "Shevchenko\n", "x Suleymanov\u2014y"])
def test_a_long_latin_form_in_any_case_ending(matcher, text):
    """An ASCII word longer than its prefilter piece, with case endings and in any
    ASCII case: found, as the view finds it."""
    fast, slow = fast_and_view(matcher, text)
    assert fast == slow != []


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=40).map(lambda b: bytes(x for x in b if not 0xD0 <= x <= 0xD3)),
       st.sampled_from([b"", b"a", b"\xd0\xb0", b"\xd0\x90\xd0\x91", b"\xd2\x91", b"P", b"a\x1b[1mb",
                        "\u00aa".encode(), "\uff50".encode()]))
def test_triggers_left_out_need_a_cyrillic_lead(noise, glue):
    """What the smaller database leaves out is a real trigger, and it matches only
    where a byte 0xD0..0xD3 is."""
    import re

    from tcg.entities.prefilter import _NEEDS_CYRILLIC_LEAD, _trigger_expressions, has_cyrillic_lead

    assert _NEEDS_CYRILLIC_LEAD <= set(_trigger_expressions())
    data = noise + glue + noise
    for expr in _NEEDS_CYRILLIC_LEAD:
        if re.search(expr, data):
            assert has_cyrillic_lead(data)


def test_prefilter_round_trip_keeps_both_databases(matcher):
    from tcg.entities.prefilter import Prefilter

    pre = matcher._prefilter()
    if pre is None:
        pytest.skip("hyperscan is not installed")
    back = Prefilter.from_bytes(pre.to_bytes())
    assert back is not None and back.plain is not None
    for text in ("Petrov и ПеТРОВ, Romashka\n", "plain Suleymanov \u2014 Sh\u200bevchenko", "пЕтров"):
        data = text.encode()
        assert back.scan(data) == pre.scan(data) != []


# ---------------------------------------------------------------- rare characters as one byte class

def test_rare_characters_are_whole_characters_the_class_covers(matcher):
    """The smaller database finds a rare character by its first byte and checks the
    bytes in Python: sound only when every rare literal is one whole UTF-8 character
    (its first byte gives its length, so one literal at most starts at a byte) and
    the class holds every first byte."""
    import re

    from tcg.entities.prefilter import (
        _lead_class,
        _literal_bytes,
        _trigger_expressions,
        has_cyrillic_lead,
        key_chars,
    )

    pre = matcher._prefilter()
    if pre is None:
        pytest.skip("hyperscan is not installed")
    spelled = {b for t in _trigger_expressions(key_chars(matcher._texts))
               if (b := _literal_bytes(t)) is not None and not has_cyrillic_lead(b)}
    assert pre.rare == spelled and len(spelled) > 1000
    cls = re.compile(_lead_class(spelled))
    for b in spelled:
        assert len(b.decode("utf-8")) == 1 and 2 <= len(b) <= 4
        assert len(b) == (2 if b[0] < 0xE0 else 3 if b[0] < 0xF0 else 4)  # as scan() takes it
        assert cls.fullmatch(b[:1])


#: rare characters of each first byte's kind (Latin-1, Greek, zero-width, full-width,
#: mathematical letters) and other non-ASCII characters that share their first bytes
RARE_MIX = ["\u00c0", "\u01c5", "\u03bf", "\u200b", "\u2009", "\uff50", "\U0001d40f", "\U0001d52d",
            "\u00e9", "\u00ab", "\u2014", "\u2026", "\u2500", "\u2501", "\U0001f600", "\ua7ff"]
RARE_TEXT = st.lists(st.sampled_from(list("ab xy.,\n-_1\t") + ["\x1b[1m"] + RARE_MIX),
                     max_size=40).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(RARE_TEXT, latin_spelled()), max_size=4), RARE_TEXT,
       st.binary(max_size=12).map(lambda b: bytes(x for x in b if not 0xD0 <= x <= 0xD3)))
def test_rare_class_gives_the_literals_hits(matcher, parts, tail, junk):
    """Rare characters, their neighbours by first byte, and broken UTF-8 around
    Latin names: the byte class and the check give the hits the spelled-out
    characters give (the full database), and the fast path finds what the view finds."""
    from tcg.entities.prefilter import Prefilter, has_cyrillic_lead

    text = "".join(a + b for a, b in parts) + tail
    data = junk + text.encode("utf-8") + junk
    assert not has_cyrillic_lead(data)
    pre = matcher._prefilter()
    if pre is None:
        pytest.skip("hyperscan is not installed")
    full_only = Prefilter(pre.db, pre.first_literal, pre.whole)
    assert pre.scan(data) == full_only.scan(data)
    fast, slow = fast_and_view(matcher, text)
    assert fast == slow


def test_many_first_bytes_fall_back_to_the_full_database(matcher, monkeypatch):
    """Text with more first bytes of possibly rare characters than RARE_LEADS (box
    drawing, accented prose) is scanned again with the full database: the same hits."""
    import tcg.entities.prefilter as prefilter

    pre = matcher._prefilter()
    if pre is None:
        pytest.skip("hyperscan is not installed")
    full_only = prefilter.Prefilter(pre.db, pre.first_literal, pre.whole)
    text = ("\u2500" * 40 + " Petrov \u00e9t\u00e9 Sh\u200bevchenko \uff50etrov\n") * 30 + "Romashka \u2009"
    data = text.encode()
    want = full_only.scan(data)
    assert want and pre.scan(data) == want
    for limit in (0, 1, 5, 100):
        monkeypatch.setattr(prefilter, "RARE_LEADS", limit)
        assert pre.scan(data) == want
    fast, slow = fast_and_view(matcher, text)
    assert fast == slow != []
