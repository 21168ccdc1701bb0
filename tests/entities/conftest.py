"""Entity tests: a project with registered entities in the hermetic TCG_HOME."""

from __future__ import annotations

import os

import pytest

from tcg.entities.matcher import EntitySpec, Matcher
from tcg.entities.registry import Registry, Store, add_entity

# (value, type, gender) registered by the ``project`` fixture, in this order
ENTITIES = [
    ("Петров Алексей Иванович", "person", None),  # CTXG_PERSON_1
    ("Ромашка", "company", None),  # CTXG_COMPANY_A
    ("Сулейманов", "person", "m"),  # CTXG_PERSON_2
    ("Дильноза", "person", "f"),  # CTXG_PERSON_3
    ("Шевченко", "person", None),  # CTXG_PERSON_4
    ('Зорька "Рассвет"', "company", None),  # CTXG_COMPANY_B: a value that needs escaping
]


def registry(backends=None) -> Registry:
    reg = Registry("/p")
    for value, kind, gender in ENTITIES:
        add_entity(reg, value, kind, f"hint for {kind}", gender=gender, backends=backends)
    return reg


def matcher_of(reg: Registry) -> Matcher:
    return Matcher([EntitySpec(e.alias, e.capital, tuple(e.forms)) for e in reg.entities])


@pytest.fixture(scope="session")
def reg() -> Registry:
    return registry()


@pytest.fixture(scope="session")
def matcher(reg) -> Matcher:
    return matcher_of(reg)


@pytest.fixture(scope="session")
def ents(reg):
    from tcg.entities.runtime import Entities

    return Entities.from_registry(reg)


@pytest.fixture
def project(tmp_path, hermetic_home):
    """A git work tree with ENTITIES registered (the real registry in TCG_HOME)."""
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    store = Store(str(proj))
    with store.locked() as r:
        for value, kind, gender in ENTITIES:
            add_entity(r, value, kind, f"hint for {kind}", gender=gender)
    from tcg.entities.runtime import compile_store

    compile_store(store)
    old = os.getcwd()
    os.chdir(proj)
    try:
        yield proj
    finally:
        os.chdir(old)
