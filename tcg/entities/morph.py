"""Surface forms of an entity's value, generated once when it is registered.

Matching is done on these exact forms (tcg.entities.matcher), never on stems:
a stem regex for «Петров» also hits Петровка, Петровна and Петровский. The
forms are computed here and stored in the registry, so nothing on the
per-command path imports a morphology library.

Word declension has two sources, tried in this order (each word separately):
1. **pymorphy3** (optional extra ``tcg[morph]``: the OpenCorpora dictionary) —
   declines the names and nouns it knows (irregular stems such as Игорёк →
   Игорька), tells a first name from a surname, and a proper name from a common
   noun (``ромашка`` the flower);
2. **the ending table** in tcg.entities.suffixes — always there, and what
   declines names the dictionary does not know (Сулейманов).
petrovich was measured as a third source and not adopted: on the same data it
declined fewer names right than the table (bench/entity_morph.py; the figures
are in docs/entities.md).
"""

from __future__ import annotations

import functools
import unicodedata
from dataclasses import dataclass

from tcg.entities import suffixes
from tcg.entities.suffixes import CASES

PERSON = "person"
KINDS = ("person", "company", "project", "product", "place", "other")
BACKENDS = ("pymorphy3", "table")
WILDCARD = "\x01"  # in a form: any one letter (an unknown middle initial)

_PATRONYMIC_ENDS = ("вич", "ьич", "вна", "чна", "шна", "оглы", "кызы", "гызы", "улы", "уулу")
_SURNAME_ENDS = ("ов", "ев", "ёв", "ин", "ын", "ова", "ева", "ёва", "ина", "ына", "ский", "цкий",
                 "ская", "цкая", "енко", "ко", "ых", "их", "дзе", "швили", "ян", "янц")
_ADJ_ENDS = {"ая": "f", "яя": "f", "ый": "m", "ий": "m", "ой": "m", "ое": "n", "ее": "n"}


@dataclass(frozen=True)
class Form:
    """One surface form: its text and what it is (for restoring the right one)."""

    text: str
    case: str  # one of CASES
    number: str = "sing"  # "sing" | "plur"
    gender: str = ""  # "m" | "f" | "" (not a person, or both)
    shape: str = "full"  # full | last | first-middle | initials | reordered

    def to_json(self) -> dict[str, str]:
        return {"t": self.text, "c": self.case, "n": self.number, "g": self.gender, "s": self.shape}

    @classmethod
    def from_json(cls, d: dict[str, str]) -> Form:
        return cls(d["t"], d["c"], d.get("n", "sing"), d.get("g", ""), d.get("s", "full"))


@dataclass(frozen=True)
class FormSet:
    """The forms of one value and how they were made."""

    forms: tuple[Form, ...]
    gender: str  # "m" | "f" | "mf" (unknown: both) | "" (not a person)
    sources: tuple[str, ...]  # backends that declined at least one word
    common_noun: bool  # the value is also an ordinary lowercase word (case rule: capital)


# ------------------------------------------------------------------ backends


def available_backends() -> tuple[str, ...]:
    return tuple(b for b in BACKENDS if _backend(b) is not None)


@functools.cache
def _backend(name: str) -> object | None:
    try:
        if name == "pymorphy3":
            import pymorphy3

            return pymorphy3.MorphAnalyzer()
    except Exception:  # noqa: BLE001 - missing or broken optional dependency: use the next source
        return None
    return "table" if name == "table" else None


_PM_GENDER = {"m": "masc", "f": "femn"}
_PM_ROLE = {"first": "Name", "middle": "Patr", "last": "Surn"}


def recase(template: str, word: str) -> str:
    """``word`` (lowercase from a dictionary) in the letter case of ``template``."""
    if template.isupper() and len(template) > 1:
        return word.upper()
    if template.islower():
        return word
    # Title-like: each hyphen part capitalised as in the template
    parts_t = template.split("-")
    parts_w = word.split("-")
    if len(parts_t) == len(parts_w):
        return "-".join(
            w.upper() if t.isupper() and len(t) > 1 else (w[:1].upper() + w[1:]) if t[:1].isupper() else w
            for t, w in zip(parts_t, parts_w, strict=True)
        )
    return word[:1].upper() + word[1:]


def _pymorphy_decline(word: str, role: str, gender: str) -> tuple[dict[str, str], dict[str, str] | None] | None:
    m = _backend("pymorphy3")
    if m is None:
        return None
    want_tag = _PM_ROLE.get(role)
    best = None
    for p in m.parse(word.lower()):  # type: ignore[attr-defined]
        tag = p.tag
        if "nomn" not in tag or "sing" not in tag or "NOUN" not in tag:
            continue
        if want_tag is not None:
            if want_tag not in tag:
                continue
            g = _PM_GENDER.get(gender)
            if g is not None and g not in tag and "ms-f" not in tag:
                continue
        elif any(t in tag for t in ("Name", "Surn", "Patr")):
            continue
        best = p
        break
    if best is None:
        return None
    sing: dict[str, str] = {"nomn": word}
    plur: dict[str, str] = {}
    for case in CASES[1:]:
        f = best.inflect({case, "sing"})
        if f is None:
            return None
        sing[case] = recase(word, f.word)
    if role == "last":
        for case in CASES:
            f = best.inflect({case, "plur"})
            if f is not None:
                plur[case] = recase(word, f.word)
    if "Fixd" in best.tag:
        sing = dict.fromkeys(CASES, word)
    return sing, (plur if len(plur) == len(CASES) else None)


def _table_decline(word: str, role: str, gender: str) -> dict[str, str]:
    if role == "last":
        return suffixes.surname(word, gender)
    if role == "first":
        return suffixes.first_name(word, gender)
    if role == "middle":
        return suffixes.patronymic(word, gender)
    return suffixes.noun(word)


def decline_word(word: str, role: str, gender: str, backends: tuple[str, ...]
                 ) -> tuple[dict[str, str], dict[str, str] | None, str]:
    """Six singular forms (and the family plural for a surname) of one word, and the
    backend that produced them. ``role``: first | middle | last | noun."""
    if not _is_cyrillic_word(word):
        return dict.fromkeys(CASES, word), None, "none"
    if role == "last":
        word = suffixes.surname_for_gender(word, gender)
    plural = suffixes.surname_plural(word, gender) if role == "last" else None
    for b in backends:
        if b == "pymorphy3":
            got = _pymorphy_decline(word, role, gender)
            if got is not None:
                return got[0], got[1] or plural, b
        elif b == "table":
            return _table_decline(word, role, gender), plural, b
    return _table_decline(word, role, gender), plural, "table"


def _is_cyrillic_word(word: str) -> bool:
    return any("CYRILLIC" in unicodedata.name(c, "") for c in word)


# ------------------------------------------------------------------ persons


def person_roles(words: list[str], backends: tuple[str, ...]) -> list[str]:
    """first | middle | last | initial for each word of a person's name."""
    roles = ["?"] * len(words)
    for i, w in enumerate(words):
        if _is_initial(w):
            roles[i] = "initial"
        elif w.lower().endswith(_PATRONYMIC_ENDS) and len(words) > 1:
            roles[i] = "middle"
    rest = [i for i, r in enumerate(roles) if r == "?"]
    if len(rest) == 1:
        if len(words) == 1:
            # a single word: a first name when the dictionary says so or it does not
            # look like a surname (Дильноза), else a surname (Петров, Шевченко)
            w = words[0]
            first = _known_first_name(w, backends) or not _looks_like_surname(w)
            roles[0] = "first" if first else "last"
        else:
            roles[rest[0]] = "first" if "middle" in roles else "last"
        return roles
    if not rest:
        return roles
    if "middle" in roles:
        mid = roles.index("middle")
        # Петров Алексей Иванович (last first middle) or Алексей Иванович Петров
        before = [i for i in rest if i < mid]
        if len(before) >= 2:
            roles[before[0]], roles[before[-1]] = "last", "first"
        elif before:
            roles[before[0]] = "first"
        for i in rest:
            if roles[i] == "?":
                roles[i] = "last"
        return roles
    a, b = rest[0], rest[-1]
    if _known_first_name(words[a], backends) and not _known_first_name(words[b], backends):
        roles[a], roles[b] = "first", "last"
    elif _known_first_name(words[b], backends) and not _known_first_name(words[a], backends):
        roles[a], roles[b] = "last", "first"
    elif _looks_like_surname(words[a]) and not _looks_like_surname(words[b]):
        roles[a], roles[b] = "last", "first"
    else:
        roles[a], roles[b] = "first", "last"
    for i in rest:
        if roles[i] == "?":
            roles[i] = "first"
    return roles


def _is_initial(w: str) -> bool:
    return w.endswith(".") and len(w.rstrip(".")) <= 2


def _looks_like_surname(w: str) -> bool:
    return w.lower().endswith(_SURNAME_ENDS)


def _known_first_name(w: str, backends: tuple[str, ...]) -> bool:
    if "pymorphy3" not in backends:
        return False
    m = _backend("pymorphy3")
    if m is None:
        return False
    return any("Name" in p.tag and "nomn" in p.tag and p.score >= 0.1
               for p in m.parse(w.lower()))  # type: ignore[attr-defined]


def person_gender(words: list[str], roles: list[str], backends: tuple[str, ...]) -> str | None:
    g = suffixes.guess_gender([w for w, r in zip(words, roles, strict=True) if r in ("middle", "last")])
    if g is not None:
        return g
    m = _backend("pymorphy3") if "pymorphy3" in backends else None
    if m is not None:
        for w, r in zip(words, roles, strict=True):
            if r == "first":
                for p in m.parse(w.lower()):  # type: ignore[attr-defined]
                    if "Name" in p.tag and "nomn" in p.tag:
                        if "masc" in p.tag:
                            return "m"
                        if "femn" in p.tag:
                            return "f"
    for w, r in zip(words, roles, strict=True):
        if r == "first" and w.lower().endswith(("а", "я")) and w.lower() not in (
            "никита", "илья", "кузьма", "фома", "лука", "савва", "саша", "женя", "миша", "ваня",
            "дима", "коля", "петя", "вова", "лёша", "алёша", "гоша", "паша",
        ):
            return "f"
        if r == "first" and not w.lower().endswith(("а", "я", "ь")):
            return "m"
    return None


def person_forms(value: str, gender: str | None, backends: tuple[str, ...]) -> FormSet:
    words = value.split()
    roles = person_roles(words, backends)
    # a surname alone names a family: both genders' forms (Петров, Петровой), unless told
    g = gender or (None if roles == ["last"] else person_gender(words, roles, backends))
    genders = (g,) if g in ("m", "f") else ("m", "f")
    forms: list[Form] = []
    used: set[str] = set()
    for gg in genders:
        declined: dict[int, dict[str, str]] = {}
        plural_last: dict[str, str] | None = None
        for i, (w, r) in enumerate(zip(words, roles, strict=True)):
            if r == "initial":
                declined[i] = dict.fromkeys(CASES, w)
                continue
            sing, plur, src = decline_word(w, r, gg, backends)
            declined[i] = sing
            used.add(src)
            if r == "last":
                plural_last = plur
        idx = {r: i for i, r in reversed(list(enumerate(roles)))}

        def phrase(order: list[int], case: str, _d: dict[int, dict[str, str]] = declined) -> str:
            return " ".join(_d[i][case] for i in order)

        orders = [("full", list(range(len(words))))]
        if "first" in idx and "last" in idx:
            f, la = idx["first"], idx["last"]
            mid = [idx["middle"]] if "middle" in idx else []
            orders += [("reordered", [f, *mid, la]), ("reordered", [la, f, *mid])]
            if mid:
                orders += [("reordered", [f, la]), ("reordered", [la, f]),
                           ("first-middle", [f, *mid])]
        if "last" in idx and len(words) > 1:
            orders.append(("last", [idx["last"]]))
        for shape, order in orders:
            for case in CASES:
                forms.append(Form(phrase(order, case), case, "sing", gg, shape))
        if plural_last is not None and "last" in idx:
            for case in CASES:
                forms.append(Form(plural_last[case], case, "plur", "", "last"))
        if "first" in idx and "last" in idx:
            fi = _initial(words[idx["first"]])
            mi = _initial(words[idx["middle"]]) if "middle" in idx else WILDCARD + "."
            for case in CASES:
                last = declined[idx["last"]][case]
                for text in (f"{fi} {last}", f"{last} {fi}", f"{fi}{mi} {last}", f"{last} {fi}{mi}"):
                    forms.append(Form(text, case, "sing", gg, "initials"))
    return FormSet(_dedupe(value, forms), g if g else "mf", tuple(sorted(used - {"none"})), False)


def _initial(word: str) -> str:
    return word[:1].upper() + "."


# ------------------------------------------------------------------ other kinds


def noun_forms(value: str, backends: tuple[str, ...]) -> FormSet:
    """Organisation, project, product or place names: decline the head noun and the
    adjectives agreeing with it; quoted names and non-Cyrillic values stay as written."""
    words = value.split()
    forms: list[Form] = []
    used: set[str] = set()
    quoted = any(q in value for q in "«»\"'„“”")
    if quoted or not words or not any(_is_cyrillic_word(w) for w in words):
        forms = [Form(value, c) for c in CASES]
        return FormSet(_dedupe(value, forms), "", (), _common_noun(value, backends))
    head = len(words) - 1
    declined: list[dict[str, str]] = []
    noun_gender = None
    sing, _plur, src = decline_word(words[head], "noun", "m", backends)
    used.add(src)
    noun_gender = _noun_gender(words[head], backends)
    for i, w in enumerate(words):
        if i == head:
            declined.append(sing)
        elif _is_cyrillic_word(w) and w.lower()[-2:] in _ADJ_ENDS:
            declined.append(_adjective(w, noun_gender or _ADJ_ENDS[w.lower()[-2:]], backends))
        else:
            declined.append(dict.fromkeys(CASES, w))
    for case in CASES:
        forms.append(Form(" ".join(d[case] for d in declined), case))
    return FormSet(_dedupe(value, forms), "", tuple(sorted(used - {"none"})), _common_noun(value, backends))


def _noun_gender(word: str, backends: tuple[str, ...]) -> str | None:
    m = _backend("pymorphy3") if "pymorphy3" in backends else None
    if m is not None:
        for p in m.parse(word.lower()):  # type: ignore[attr-defined]
            if "NOUN" in p.tag and "nomn" in p.tag:
                return "f" if "femn" in p.tag else "n" if "neut" in p.tag else "m"
    low = word.lower()
    if low.endswith(("а", "я", "ь")):
        return "f"
    if low.endswith(("о", "е")):
        return "n"
    return "m"


def _adjective(word: str, gender: str, backends: tuple[str, ...]) -> dict[str, str]:
    m = _backend("pymorphy3") if "pymorphy3" in backends else None
    if m is not None:
        for p in m.parse(word.lower()):  # type: ignore[attr-defined]
            if "ADJF" in p.tag and "nomn" in p.tag:
                pg = {"m": "masc", "f": "femn", "n": "neut"}[gender]
                out = {"nomn": word}
                for case in CASES[1:]:
                    grams = {case, "sing", pg}
                    if case == "accs" and gender != "f":
                        grams.add("inan")
                    f = p.inflect(grams)
                    if f is None:
                        break
                    out[case] = recase(word, f.word)
                else:
                    return out
    stem, end = word[:-2], word[-2:].lower()
    soft = end in ("ий", "яя", "ее") and stem[-1:].lower() not in "гкхжшщч"
    o = "е" if soft else "о"
    y = "и" if soft or stem[-1:].lower() in "гкхжшщч" else "ы"
    if gender == "f":
        ends = ("", f"{o}й", f"{o}й", "юю" if soft else "ую", f"{o}й", f"{o}й")
    else:
        ends = ("", f"{o}г{o}", f"{o}му", "", f"{y}м", f"{o}м")
    return {c: (word if not e else stem + e) for c, e in zip(CASES, ends, strict=True)}


def _common_noun(value: str, backends: tuple[str, ...]) -> bool:
    """True when the (lowercased) value is an ordinary word in the dictionary (the
    flower «ромашка»): such a name is matched only when it starts with a capital."""
    m = _backend("pymorphy3") if "pymorphy3" in backends else None
    if m is None or " " in value.strip():
        return False
    proper = ("Name", "Surn", "Patr", "Orgn", "Geox", "Trad", "Abbr")
    for p in m.parse(value.lower()):  # type: ignore[attr-defined]
        if "UNKN" in p.tag or "LATN" in p.tag:
            continue
        if not any(t in p.tag for t in proper) and p.methods_stack and \
                type(p.methods_stack[0][0]).__name__ == "DictionaryAnalyzer":
            return True
    return False


# ------------------------------------------------------------------ entry point


def surface_forms(value: str, kind: str, gender: str | None = None,
                  backends: tuple[str, ...] | None = None, decline: bool = True) -> FormSet:
    """Every surface form of ``value`` as an entity of ``kind``.

    ``gender``: "m"/"f" for a person when known (else guessed; unknown = both).
    ``backends``: which declension sources to use, in order (default: all installed).
    """
    value = " ".join(value.split())
    bk = available_backends() if backends is None else tuple(b for b in backends if _backend(b) is not None)
    if not decline:
        return FormSet((Form(value, "nomn"),), "", (), False)
    if kind == PERSON:
        return person_forms(value, gender, bk)
    return noun_forms(value, bk)


def _dedupe(value: str, forms: list[Form]) -> tuple[Form, ...]:
    """The registered value first (as nominative), then each distinct (text, case,
    number, gender) once."""
    seen: set[tuple[str, str, str, str]] = set()
    out: list[Form] = []
    first = Form(value, "nomn", "sing", forms[0].gender if forms else "", "full")
    for f in [first, *forms]:
        key = (f.text, f.case, f.number, f.gender)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return tuple(out)
