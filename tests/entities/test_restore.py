"""Alias -> real: exact, token-bounded, endings, escaping; real -> alias -> real is the identity."""

from __future__ import annotations

import json
import shlex

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tcg.entities.restore import restore_text
from tcg.entities.stream import replace_bytes

CB_VALUE = 'Зорька "Рассвет"'


def restored(ents, text, **kw):
    r = restore_text(text, ents, **kw)
    return r.text, [p.reason for p in r.problems]


@pytest.mark.parametrize(("text", "want"), [
    ("CTXG_COMPANY_A", "Ромашка"),
    ("у CTXG_PERSON_1а", "у Петрова Алексея Ивановича"),
    ("с CTXG_COMPANY_Aой", "с Ромашкой"),
    ("CTXG_COMPANY_Aы", "Ромашки"),  # not the entity's own ending: the usual genitive one
    ("CTXG_PERSON_2ом", "Сулеймановым"),
    ("CTXG_PERSON_4у", "Шевченко"),  # indeclinable
    ("(CTXG_COMPANY_A).", "(Ромашка)."),
])
def test_restores(ents, text, want):
    assert restored(ents, text) == (want, [])


@pytest.mark.parametrize(("text", "reason"), [
    ("CTXG_COMPANY_AB", "unknown-alias"),
    ("ctxg_company_a", "alias-case"),
    ("Ctxg_Company_A", "alias-case"),
    ("CTXG_COMPANY_A_orders", "alias-in-word"),
    ("client_CTXG_COMPANY_A", "alias-in-word"),
    ("xCTXG_PERSON_1", "alias-in-word"),
    ("CTXG_PERSON_12", "unknown-alias"),
    ("CTXG_COMPANY_Aя", "ambiguous-ending"),
    ("CTXG_COMPANY_Aщ", "unknown-ending"),
    ("CTXG_COMPANY_AИ", "unknown-ending"),
    ("CTXG_PERSON_1и", "ambiguous-ending"),
    ("<SECRET:aws-access-key-id:0123abcd>", "placeholder"),
])
def test_asks_never_guesses(ents, text, reason):
    out, reasons = restored(ents, text)
    assert reason in reasons
    assert "Ромашк" not in out and "Петров" not in out


def test_retired_alias(ents):
    from tcg.entities.registry import remove_entity

    from .conftest import registry

    reg = registry()
    remove_entity(reg, "CTXG_COMPANY_A")
    from tcg.entities.runtime import Entities

    e = Entities.from_registry(reg)
    assert restored(e, "CTXG_COMPANY_A")[1] == ["retired-alias"]


def test_placeholder_keep_policy(ents):
    assert restored(ents, "k=<PII:email:0123abcd>", placeholders="keep") == ("k=<PII:email:0123abcd>", [])


# ---------------------------------------------------------------- escaping

def test_json_yaml_shell_escaping(ents):
    out, _ = restored(ents, json.dumps({"n": "CTXG_COMPANY_B", "l": ["CTXG_COMPANY_B"]}), context="json")
    assert json.loads(out) == {"n": CB_VALUE, "l": [CB_VALUE]}
    doc = "a: CTXG_COMPANY_B\nb: \"CTXG_COMPANY_B\"\nc: 'CTXG_COMPANY_B'\nd: [x]  # CTXG_COMPANY_B\n"
    out, _ = restored(ents, doc, context="yaml")
    assert yaml.safe_load(out) == {"a": CB_VALUE, "b": CB_VALUE, "c": CB_VALUE, "d": ["x"]}
    line = "echo CTXG_COMPANY_B 'CTXG_COMPANY_B' \"CTXG_COMPANY_B\" $'CTXG_COMPANY_B' x-CTXG_COMPANY_A"
    out, _ = restored(ents, line, context="shell")
    assert shlex.split(out)[1:4] == [CB_VALUE] * 3
    out, _ = restored(ents, 'name = "CTXG_COMPANY_B"', context="code")
    assert out == 'name = "Зорька \\"Рассвет\\""'


SPECIAL = ['Ромашка "Плюс"', "O'Brien & Co", "Back\\slash $HOME", "Две\nстроки", "Обычное Имя"]


@pytest.fixture(scope="module")
def special_ents():
    from tcg.entities.registry import Registry, add_entity
    from tcg.entities.runtime import Entities

    reg = Registry("/p")
    for v in SPECIAL:
        add_entity(reg, v, "other", "", decline=False) if "\n" not in v else None
    return Entities.from_registry(reg), {e.alias: e.value for e in reg.entities}


def _dump(kind, obj):
    if kind == "json":
        return json.dumps(obj, ensure_ascii=False)
    return yaml.safe_dump(obj, allow_unicode=True)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["json", "yaml"]), st.lists(st.tuples(st.text(
    alphabet="abcйцу :-#'\"\\", max_size=8), st.integers(0, 3)), min_size=1, max_size=5))
def test_structured_contexts_keep_values(special_ents, kind, items):
    """An aliased document, restored, parses to the document with the real values."""
    ents, values = special_ents
    aliases = sorted(values)
    aliased = {f"k{i}": f"{pre}{aliases[n]}" if pre.strip() == "" else aliases[n]
               for i, (pre, n) in enumerate(items)}
    real = {k: v.replace(a, values[a]) for k, v in aliased.items() for a in [v.strip()]}
    out, problems = restored(ents, _dump(kind, aliased), context=kind)
    assert not problems
    loaded = json.loads(out) if kind == "json" else yaml.safe_load(out)
    assert loaded == real


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["plain", "single", "double", "ansi"]), min_size=1, max_size=4),
       st.lists(st.integers(0, 3), min_size=4, max_size=4))
def test_shell_words_keep_values(special_ents, quoting, picks):
    ents, values = special_ents
    aliases = sorted(values)
    words, want = [], []
    for q, n in zip(quoting, picks, strict=False):
        a = aliases[n]
        words.append({"plain": a, "single": f"'{a}'", "double": f'"{a}"', "ansi": f"$'{a}'"}[q])
        want.append(values[a])
    out, problems = restored(ents, "printf '%s\\n' " + " ".join(words), context="shell")
    assert not problems
    import subprocess

    got = subprocess.run(["bash", "-c", out], capture_output=True, text=True, check=True).stdout
    assert got.split("\n")[:-1] == want


# ---------------------------------------------------------------- identity

WORDS = st.sampled_from(["и", "с", "у", "договор", "—", ",", ".", "\n", "клиент:", "(", ")"])


@st.composite
def prose(draw, forms):
    parts = draw(st.lists(st.one_of(WORDS, st.sampled_from(forms)), min_size=1, max_size=12))
    return " ".join(parts)


def canonical_forms(reg):
    out = []
    for e in reg.entities:
        for text, token in e.forms:
            if token != e.alias and not any(c.isascii() and c.isalpha() for c in text):
                out.append(text)
    infl = [e for e in reg.entities]
    return sorted(set(out + [e.value for e in infl if "\"" not in e.value]))


def test_identity_in_random_text(reg, ents, matcher):
    """real -> alias -> real is the identity for the registered forms (full name, all cases)."""
    forms = [t for t in canonical_forms(reg)
             if restore_text(replace_bytes(t.encode(), matcher.find_bytes(t.encode())).decode(), ents).text == t]
    # the full-name forms of every case of every entity are among them
    assert {"Петрова Алексея Ивановича", "Ромашкой", "Сулеймановым", "Дильнозе", "Шевченко"} <= set(forms)

    @settings(max_examples=200, deadline=None)
    @given(prose(forms))
    def check(text):
        data = text.encode()
        masked = replace_bytes(data, matcher.find_bytes(data)).decode()
        for f in forms:
            assert f not in masked
        assert restore_text(masked, ents).text == text

    check()
