"""Surface forms of the test vectors, with the dictionary and with the ending table."""

from __future__ import annotations

import pytest

from tcg.entities.morph import available_backends, surface_forms

BACKENDS = [("table",)]
if "pymorphy3" in available_backends():
    BACKENDS.append(("pymorphy3", "table"))

SIX = {
    ("Петров", "m"): "Петров Петрова Петрову Петрова Петровым Петрове",
    ("Петрова", "f"): "Петрова Петровой Петровой Петрову Петровой Петровой",
    ("Сулейманов", "m"): "Сулейманов Сулейманова Сулейманову Сулейманова Сулеймановым Сулейманове",
    ("Шевченко", "m"): "Шевченко Шевченко Шевченко Шевченко Шевченко Шевченко",
    ("Дильноза", "f"): "Дильноза Дильнозы Дильнозе Дильнозу Дильнозой Дильнозе",
    ("Ахмедова", "f"): "Ахмедова Ахмедовой Ахмедовой Ахмедову Ахмедовой Ахмедовой",
}


def full(fs, gender=None):
    return [f.text for f in fs.forms if f.shape == "full" and f.number == "sing"
            and (gender is None or f.gender == gender)]


@pytest.mark.parametrize("backends", BACKENDS, ids="+".join)
@pytest.mark.parametrize(("value", "gender"), list(SIX))
def test_six_cases(backends, value, gender):
    fs = surface_forms(value, "person", gender, backends)
    want = SIX[(value, gender)].split()
    got = {f.case: f.text for f in fs.forms if f.shape == "full" and f.number == "sing"}
    assert [got[c] for c in ("nomn", "gent", "datv", "accs", "ablt", "loct")] == want


@pytest.mark.parametrize("backends", BACKENDS, ids="+".join)
def test_unknown_gender_gives_both(backends):
    texts = {f.text for f in surface_forms("Петров", "person", None, backends).forms}
    assert {"Петров", "Петрова", "Петрову", "Петровым", "Петрове", "Петровой"} <= texts


@pytest.mark.parametrize("backends", BACKENDS, ids="+".join)
def test_person_shapes_and_initials(backends):
    texts = {f.text for f in surface_forms("Алексей Петров", "person", None, backends).forms}
    assert {"Алексей Петров", "Алексея Петрова", "Петров Алексей", "А. Петров", "Петров А.",
            "Петрову А."} <= texts
    # no patronymic registered: any middle initial (a wildcard letter)
    assert any(t.startswith("Петров А.") and "\x01" in t for t in texts)
    texts = {f.text for f in surface_forms("Петров Алексей Иванович", "person", None, backends).forms}
    assert {"Петров А.И.", "А.И. Петров", "Алексей Иванович", "Алексеем Ивановичем Петровым",
            "Алексей Петров"} <= texts


@pytest.mark.parametrize("backends", BACKENDS, ids="+".join)
def test_organisations(backends):
    assert full(surface_forms("Ромашка", "company", None, backends)) == \
        "Ромашка Ромашки Ромашке Ромашку Ромашкой Ромашке".split()
    assert full(surface_forms("Газпромнефть", "company", None, backends))[4] == "Газпромнефтью"
    assert full(surface_forms("Северная звезда", "company", None, backends))[1] == "Северной звезды"
    assert set(full(surface_forms("ООО «Ромашка»", "company", None, backends))) == {"ООО «Ромашка»"}
    assert set(full(surface_forms("Acme Corp", "company", None, backends))) == {"Acme Corp"}


def test_common_noun_needs_the_dictionary():
    pytest.importorskip("pymorphy3", reason="optional tcg[morph]")
    assert surface_forms("Ромашка", "company").common_noun
    assert not surface_forms("Газпромнефть", "company").common_noun
