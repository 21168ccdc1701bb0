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
