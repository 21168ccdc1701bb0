"""The fast path (prefilter + alias stream) finds what the view finds on the whole
text at two edges: a stream cut inside a colour sequence before a name, and an
ASCII name typed in Cyrillic look-alike letters only."""

from __future__ import annotations

import itertools
import random

import pytest

from tcg.entities.matcher import EntitySpec, Match, Matcher
from tcg.entities.registry import Registry, add_entity
from tcg.entities.stream import AliasStream, replace_bytes

ENTITIES = [
    ("Петров Алексей Иванович", "person", None),
    ("Ли", "person", None),
    ("Acme Corp", "company", None),
    ("Texas Oil", "company", None),
    ("Kompas", "company", None),
    ("Mocco", "company", None),
    ("Dock", "company", None),
    ("Swiq", "company", None),
]


@pytest.fixture(scope="module")
def matcher() -> Matcher:
    reg = Registry("/p")
    for value, kind, gender in ENTITIES:
        add_entity(reg, value, kind, f"hint for {kind}", gender=gender)
    m = Matcher([EntitySpec(e.alias, e.capital, tuple(e.forms)) for e in reg.entities])
    assert m._prefilter() is not None, "the fast path needs hyperscan"
    return m


def reference(matcher: Matcher, text: str) -> bytes:
    """The whole text aliased from the view's matches (no prefilter, no stream)."""
    def at(i: int) -> int:
        return len(text[:i].encode("utf-8"))

    data = text.encode("utf-8")
    return replace_bytes(data, [Match(at(m.start), at(m.end), m.token, 0)
                                for m in matcher.find_text(text)])


def streamed(matcher: Matcher, data: bytes, cuts: list[int]) -> bytes:
    s = AliasStream(matcher)
    out, at = b"", 0
    for c in [*cuts, len(data)]:
        out += s.feed(data[at:c])
        at = max(at, c)
    return out + s.flush()


# ------------------------------------------------- a cut inside a colour sequence

SEQUENCES = ["\x1b[0m", "\x1b[?25l", "\x1b[0m\x1b[K", "\x1b[01;31m\x1b[K", "\x1b[1_", "\x1b[38;5;208m"]
AFTER = ["Petrov", "PETROV", "Acme Corp", "Петров", "Ли", "Kompas"]


@pytest.mark.parametrize("seq", SEQUENCES)
@pytest.mark.parametrize("name", AFTER)
def test_a_cut_inside_a_colour_sequence_keeps_the_name_after_it(matcher, seq, name):
    """On a line longer than the stream's look-ahead, a release may end anywhere; if
    it ended inside «ESC[0m» the held bytes would start «[0m»/«0m» and their «m»
    would read as a letter glued to the name. Every byte of the sequence as the
    cut: the output is the whole text's."""
    text = "a " + seq + name + " y" * 300 + "\n"
    data = text.encode()
    want = reference(matcher, text)
    assert b"CTXG_" in want
    reach = AliasStream(matcher)._reach
    for c in range(2, 2 + len(seq) + 2):
        # the first feed releases up to byte 2, the second moves the cut to c
        assert streamed(matcher, data, [2 + reach, c + reach]) == want, (seq, name, c)
        assert streamed(matcher, data, [c + reach, c + reach + 1]) == want, (seq, name, c)


def test_random_chunkings_of_coloured_lines(matcher):
    rnd = random.Random(7)
    reach = AliasStream(matcher)._reach
    words = [*AFTER, "АСМЕ Corp", "у Петрова", "x", "петиция", ",", " y" * 150]
    for _ in range(150):
        parts = []
        for _ in range(rnd.randint(1, 6)):
            parts += [rnd.choice(SEQUENCES + [" ", "", "\n"]), rnd.choice(words)]
        text = " ".join(parts) + " y" * rnd.randint(0, 200) + "\n"
        data = text.encode()
        want = reference(matcher, text)
        cuts = sorted(rnd.sample(range(len(data) + 1), min(len(data) + 1, rnd.randint(1, 8))))
        assert streamed(matcher, data, cuts) == want, (text, cuts)
        near = [c + reach + d for c in cuts[:2] for d in (0, 1, 2)]
        assert streamed(matcher, data, sorted(near)) == want, (text, near)


def test_csi_start_moves_only_a_cut_inside_a_sequence():
    from tcg.entities.normal import csi_start

    data = b"ab\x1b[01;31mcd\x1b[Ke"
    assert [csi_start(data, i) for i in range(len(data) + 1)] == \
        [0, 1, 2, *[2] * 7, 10, 11, 12, 12, 12, 15, 16]
    assert csi_start(b"a\x1b[0\n", 3) == 3  # no sequence: left alone


# ------------------------------------- an ASCII name in Cyrillic look-alike letters

def _cyrillic_words(matcher: Matcher) -> list[tuple[str, str]]:
    """(ASCII word, its all-Cyrillic look-alike spelling) for every registered ASCII
    word whose letters all have one (і for i, ...)."""
    from tcg.entities.normal import skeleton_char

    twin = {}
    for cp in range(0x430, 0x460):
        sk = skeleton_char(chr(cp))
        if sk.isascii() and sk.isalpha() and chr(cp) != "ё":
            twin.setdefault(sk, chr(cp))
    out = set()
    for value, _, _ in ENTITIES:
        for w in value.split():
            if w.isascii() and all(c in twin for c in w.lower()):
                out.add((w, "".join(twin[c] for c in w.lower())))
    return sorted(out)


def _casings(word: str) -> set[str]:
    return {"".join(c.upper() if up else c for c, up in zip(word, ups, strict=True))
            for ups in itertools.product((False, True), repeat=len(word))}


def test_every_all_lookalike_word_has_a_cyrillic_spelling(matcher):
    words = dict(_cyrillic_words(matcher))
    assert {"Acme", "Texas", "Kompas", "Mocco", "Corp"} - set(words) == {"Corp"}
    assert words["Acme"] == "асме"


def test_an_ascii_name_in_cyrillic_lookalikes_is_found(matcher):
    """Every casing of every such word (е/ё both ways), alone and inside sentences,
    whole and streamed in random chunks: the fast path finds what the view does."""
    rnd = random.Random(11)
    values = {w: v for v, _, _ in ENTITIES for w in v.split()}
    found = 0
    for word, cyr in _cyrillic_words(matcher):
        spellings = _casings(cyr) | {s.replace("е", "ё").replace("Е", "Ё") for s in _casings(cyr)}
        for sp in sorted(spellings):
            value = values[word].replace(word, sp)
            for text in (value, f"у {value}.", f"{value}\n", f"Договор с «{value}», копия"):
                data = text.encode()
                want = reference(matcher, text)
                fast = replace_bytes(data, matcher.find_bytes(data))
                assert fast == want, text
                found += b"CTXG_" in want
                cuts = sorted(rnd.sample(range(len(data) + 1), rnd.randint(1, 4)))
                assert streamed(matcher, data, cuts) == want, (text, cuts)
    assert found > 100  # the view does find most of them


def test_a_cyrillic_acme_in_a_long_stream(matcher):
    text = ("x" * 5000 + "\n" + "у АСМЕ Corp. и асме corp\n") * 3
    data = text.encode()
    want = reference(matcher, text)
    assert want.count(b"CTXG_COMPANY") == 6
    assert streamed(matcher, data, [5000, 5003, 10000]) == want
    assert replace_bytes(data, matcher.find_bytes(data)) == want


@pytest.mark.parametrize("text", ["ԁоск", "у Ԁоск и ԁОСК.", "ѕԝіԛ", "SԜIԚ", "Ѕԝіq"])
def test_lookalikes_past_u045f_fire_a_trigger(matcher, text):
    """d, q, w have Cyrillic look-alikes only past U+045F (ԁ, ԛ, ԝ): no piece spells
    them, a trigger fires on each."""
    data = text.encode()
    assert replace_bytes(data, matcher.find_bytes(data)) == reference(matcher, text)


# ------------------------------------- combining marks after a Cyrillic letter

@pytest.mark.parametrize(("text", "token"), [
    ("Сулеи\u0306манов", None),  # not registered here: see the next test's names
    ("Е\u0308лкин", None),
    ("Петро\u0301в пришёл", "CTXG_PERSON_1"),
    ("у ПЕТРО\u0301ВА", "CTXG_PERSON_1"),
    ("Алексе\u0301и\u0306 Петро\u0300в", "CTXG_PERSON_1"),
    ("Ли\u0301 и Ли", "CTXG_PERSON_2"),
])
def test_combining_marks_after_a_cyrillic_letter(matcher, text, token):
    data = text.encode()
    want = reference(matcher, text)
    if token is not None:
        assert token.encode() in want
    assert replace_bytes(data, matcher.find_bytes(data)) == want


@pytest.fixture(scope="module")
def marked_matcher() -> Matcher:
    reg = Registry("/p")
    for value, kind, gender in [("Сулейманов", "person", "m"), ("Ёлкин", "person", "m"),
                                ("Петров Алексей Иванович", "person", None), ("Ли", "person", None)]:
        add_entity(reg, value, kind, "h", gender=gender)
    return Matcher([EntitySpec(e.alias, e.capital, tuple(e.forms)) for e in reg.entities])


def test_decomposed_letters_and_stress_marks_are_found(marked_matcher):
    """й written и+U+0306 (macOS file names), ё as е+U+0308, stress marks: the view
    composes or deletes them and the fast path fires on them, whole and streamed in
    random chunks; one mark after every Cyrillic letter of a form in turn."""
    m = marked_matcher
    rnd = random.Random(3)
    forms = sorted({t for e in m.entities for t, _ in e.forms})
    assert "Сулейманов" in forms and "Ёлкин" in forms
    reach = AliasStream(m)._reach
    found = 0
    for form in rnd.sample(forms, 60) + ["Сулейманов", "Ёлкин", "Сулейманову", "Ли"]:
        spelled = form.replace("й", "и\u0306").replace("Ё", "Е\u0308").replace("ё", "е\u0308")
        variants = {spelled}
        for i, c in enumerate(spelled):
            if "\u0400" <= c <= "\u04ff":
                variants.add(spelled[: i + 1] + rnd.choice("\u0301\u0300\u0306\u0308") + spelled[i + 1 :])
        for v in sorted(variants):
            text = f"a у {v}, " + " y" * rnd.randint(0, 200) + "\n"
            data = text.encode()
            want = reference(m, text)
            found += b"CTXG_" in want
            assert replace_bytes(data, m.find_bytes(data)) == want, text
            cuts = sorted(rnd.sample(range(len(data) + 1), rnd.randint(1, 5)))
            assert streamed(m, data, cuts) == want, (text, cuts)
            c = rnd.randrange(len(data))
            assert streamed(m, data, [c + reach, c + reach + 1]) == want, (text, c)
    assert found > 300
