"""Combining marks after a Latin letter, and after a name's last letter.

The view composes a letter with the marks after it as NFC does (so a decomposed
«Jose\u0301» is «José», a macOS file name reads as its precomposed twin) and
deletes the marks NFC leaves apart like an invisible character («Ac\u0332me» is
Acme); a match takes the marks after its last letter. The fast path (prefilter
triggers) and the stream find what the view finds on the whole text."""

from __future__ import annotations

import random
import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcg.entities.matcher import EntitySpec, Matcher
from tcg.entities.normal import View
from tcg.entities.registry import Registry, add_entity
from tcg.entities.restore import restore_text
from tcg.entities.stream import AliasStream, replace_bytes

from .test_stream_edges import reference, streamed

ENTITIES = [
    ("Петров Алексей Иванович", "person", None),  # Petrov, Aleksei, ...
    ("Acme Corp", "company", None),
    ("José Garcia", "person", "m"),
    ("Müller GmbH", "company", None),
    ("Nguyễn Trần", "person", "m"),
    ("Ли", "person", None),
]
#: marks NFC composes with no Latin letter: deleted by the view wherever they stand
LONE_MARKS = "\u0332\u0334\u0336\u0305\u0353"
#: marks NFC composes with many letters (é, Ü, ñ, ầ, ...)
COMPOSING_MARKS = "\u0301\u0300\u0308\u0302\u0303\u0306\u030c"


@pytest.fixture(scope="module")
def mm() -> Matcher:
    reg = Registry("/p")
    for value, kind, gender in ENTITIES:
        add_entity(reg, value, kind, "h", gender=gender)
    m = Matcher([EntitySpec(e.alias, e.capital, tuple(e.forms)) for e in reg.entities])
    assert m._prefilter() is not None, "the fast path needs hyperscan"
    return m


@pytest.fixture(scope="module")
def ents():
    from tcg.entities.runtime import Entities

    reg = Registry("/p")
    for value, kind, gender in ENTITIES:
        add_entity(reg, value, kind, "h", gender=gender)
    return Entities.from_registry(reg)


def tokens(m: Matcher, text: str) -> list[str]:
    return [x.token for x in m.find_text(text)]


def canonical(text: str) -> str:
    """What the view reads ``text`` as: NFC, then the marks NFC left apart dropped."""
    return re.sub("[\u0300-\u036f]", "", unicodedata.normalize("NFC", text))


def check_paths(m: Matcher, text: str, rnd: random.Random) -> bytes:
    """Whole text (view) == fast path == streamed in random chunks; no mark is left
    glued after an alias. Returns the aliased bytes."""
    data = text.encode()
    want = reference(m, text)
    assert replace_bytes(data, m.find_bytes(data)) == want, text
    cuts = sorted(rnd.sample(range(len(data) + 1), rnd.randint(1, 5)))
    assert streamed(m, data, cuts) == want, (text, cuts)
    reach = AliasStream(m)._reach
    c = rnd.randrange(len(data))
    assert streamed(m, data, [c + reach, c + reach + 1]) == want, (text, c)
    for x in m.find_text(text):  # no mark left to be drawn on the alias's last character
        assert not unicodedata.combining(text[x.end : x.end + 1] or "a"), (text, x)
    return want


def _latin_forms(m: Matcher) -> list[str]:
    forms = {t for e in m.entities for t, _ in e.forms}
    return sorted(f for f in forms if not any("\u0400" <= c <= "\u04ff" for c in f))


def test_latin_forms_are_registered(mm):
    forms = _latin_forms(mm)
    assert {"Petrov", "Acme Corp", "José Garcia", "Müller GmbH", "Nguyễn Trần"} <= set(forms)


@pytest.mark.parametrize("case", [str, str.upper, str.lower, str.title])
def test_a_lone_mark_after_any_latin_letter_is_ignored(mm, case):
    """A mark NFC composes with nothing, after each letter of each Latin form in turn
    (decomposed, too) in four casings: found exactly where the unmarked text is."""
    rnd = random.Random(hash(case.__name__) & 0xFFFF)
    found = 0
    for form in _latin_forms(mm):
        for spelled in {case(form), unicodedata.normalize("NFD", case(form))}:
            plain = f"a у {spelled}, " + " y" * rnd.randint(0, 200) + "\n"
            want_tokens = tokens(mm, plain)
            for i, c in enumerate(spelled):
                if not c.isalpha():
                    continue
                j = i + 1  # after the letter's own marks (one before them blocks NFC)
                while j < len(spelled) and unicodedata.combining(spelled[j]):
                    j += 1
                marked = spelled[:j] + rnd.choice(LONE_MARKS) + spelled[j:]
                text = plain.replace(spelled, marked, 1)
                assert tokens(mm, text) == want_tokens, text
                found += bool(want_tokens)
                check_paths(mm, text, rnd)
    assert found > 20  # lower case: companies only (a person needs a capital)


@pytest.mark.parametrize("case", [str, str.upper, str.title])
def test_a_composing_mark_reads_as_the_precomposed_letter(mm, case):
    """A mark after each letter in turn: the text is matched as its NFC twin is (José
    decomposed is José; Pe\u0301trov is Pétrov, no registered name), whole and streamed."""
    rnd = random.Random(5)
    for form in _latin_forms(mm):
        nfd = unicodedata.normalize("NFD", case(form))
        variants = {nfd}
        for i, c in enumerate(nfd):
            if c.isalpha():
                variants.add(nfd[: i + 1] + rnd.choice(COMPOSING_MARKS) + nfd[i + 1 :])
        for v in sorted(variants):
            text = f"x {v}. " + " y" * rnd.randint(0, 150) + "\n"
            assert tokens(mm, text) == tokens(mm, canonical(text)), text
            check_paths(mm, text, rnd)


@pytest.mark.parametrize(("text", "want"), [
    ("Jose\u0301 Garcia", "CTXG_PERSON_2"),  # decomposed é
    ("JOSE\u0301 GARCIA", "CTXG_PERSON_2"),
    ("Mu\u0308ller GmbH", "CTXG_COMPANY_B"),
    ("Nguye\u0302\u0303n Tra\u0302\u0300n", "CTXG_PERSON_3"),  # two marks: ễ, ầ
    ("Nguye\u0303\u0302n Tra\u0300\u0302n", "x"),  # NFC: ẽ + U+0302 is no letter
    ("Ac\u0332me Corp", "CTXG_COMPANY_A"),
    ("Pe\u0336trov", "CTXG_PERSON_1"),
    ("Pe\u0301trov", "Pe\u0301trov"),  # Pétrov, as the precomposed text: another name
    ("Acme\u0301 Corp", "Acme\u0301"),  # Acmé
])
def test_examples(mm, text, want):
    out = check_paths(mm, text, random.Random(1)).decode()
    if want == "x":
        assert "CTXG_PERSON_3" not in out
    else:
        assert out.split()[0] == want


@pytest.mark.parametrize(("text", "want"), [
    ("Petrov\u0301 ushel", "CTXG_PERSON_1 ushel"),
    ("Petrov\u0332\u0301, da", "CTXG_PERSON_1, da"),
    ("Петров\u0301 пришёл", "CTXG_PERSON_1 пришёл"),
    ("у Петрова\u0301.", "у CTXG_PERSON_1а."),
    ("Ли\u0301 и Ли", "CTXG_PERSON_4 и CTXG_PERSON_4"),
    ("Acme Corp\u0332\u0332", "CTXG_COMPANY_A"),
    ("Jose\u0301 Garcia\u0332!", "CTXG_PERSON_2!"),
])
def test_a_mark_after_the_last_letter_goes_with_the_name(mm, ents, text, want):
    """Latin and Cyrillic alike: the alias stands clean, and the raw span (what Edit
    and Write put back) holds the marks, so restoring with it is the identity."""
    out = check_paths(mm, text, random.Random(2)).decode()
    assert out == want
    spans = mm.find_text(text)
    spell: dict[str, list[str]] = {}
    for x in spans:
        spell.setdefault(x.token, []).append(text[x.start : x.end])
    assert restore_text(out, ents, spellings=spell).text == text
    plain = restore_text(out, ents)
    assert plain.ok and "CTXG" not in plain.text


def test_no_mark_no_name():
    """Marks after words that are no registered name alias nothing (Vietnamese,
    decomposed file names)."""
    reg = Registry("/p")
    add_entity(reg, "Acme Corp", "company", "h")
    m = Matcher([EntitySpec(e.alias, e.capital, tuple(e.forms)) for e in reg.entities])
    for text in ["Tiê\u0301ng Viê\u0323t co\u0301 da\u0302\u0301u", "Re\u0301sume\u0301.pdf",
                 "Ac\u0301me Corp", "Acme\u0301 Corp", "A\u0300cme Corp"]:
        data = text.encode()
        assert m.find_text(text) == [] and m.find_bytes(data) == [], text


_PIECES = st.sampled_from(["Petrov", "PETROV", "Acme Corp", "José Garcia", "Müller GmbH",
                           "Nguyễn Trần", "Петров", "Ли", "Tiếng Việt", "e", "A", "и", " ", ",",
                           "\n", "\u200b", "\x1b[0m", "x" * 40])
_MARKS = st.sampled_from(list(LONE_MARKS + COMPOSING_MARKS))


@st.composite
def marked_text(draw):
    parts = draw(st.lists(st.tuples(_PIECES, st.lists(st.tuples(st.integers(0, 60), _MARKS),
                                                      max_size=3)), min_size=1, max_size=8))
    out = []
    for piece, marks in parts:
        piece = unicodedata.normalize(draw(st.sampled_from(["NFC", "NFD"])), piece)
        for at, mark in marks:
            at = at % (len(piece) + 1)
            piece = piece[:at] + mark + piece[at:]
        out.append(piece)
    return " ".join(out)


def test_streamed_is_the_whole_text_view(mm):
    """Property: marks anywhere, any chunking: fast path and stream == the view; the
    view is as long as the text."""
    @settings(max_examples=300, deadline=None)
    @given(marked_text(), st.lists(st.integers(0, 400), max_size=5))
    def check(text, cuts):
        assert len(View(text).full) == len(text)
        data = text.encode()
        want = reference(mm, text)
        assert replace_bytes(data, mm.find_bytes(data)) == want
        cs = sorted(c % (len(data) + 1) for c in cuts)
        assert streamed(mm, data, cs) == want

    check()


def test_read_then_edit_puts_the_marked_bytes_back(ents, tmp_path):
    """The twin path through the hook functions: Read shows the aliases clean (no mark
    after them), an Edit written with them puts the file's own bytes back, marks
    included, Latin and Cyrillic."""
    from tcg.entities.hooks import post_tool_use, pre_tool_use

    line = "Jose\u0301 Garcia\u0332 и Петров\u0301 из Ac\u0332me Corp\u0336\u0332"
    raw = line + "\nnext\n"
    path = tmp_path / "notes.txt"
    path.write_text(raw, encoding="utf-8")
    resp = {"type": "text", "file": {"filePath": str(path), "content": raw, "numLines": 2}}
    shown, n = post_tool_use("Read", resp, ents)
    seen = shown["file"]["content"].splitlines()[0]
    assert (n, seen) == (3, "CTXG_PERSON_2 и CTXG_PERSON_1 из CTXG_COMPANY_A")
    r = pre_tool_use("Edit", {"file_path": str(path), "old_string": seen,
                              "new_string": seen + " (CTXG_PERSON_1)", "replace_all": False},
                     ents, read_file=lambda p: open(p, encoding="utf-8").read())
    assert r.action == "update"
    assert r.tool_input["old_string"] == line
    assert r.tool_input["new_string"] == line + " (Петров Алексей Иванович)"  # a new one: the value
