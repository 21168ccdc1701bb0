"""Russian declension by ending: the fallback when no morphology library is installed.

A small, explicit table of the patterns that cover names and organisation names
(surnames in -ов/-ев/-ин and -ский, first names and patronymics, nouns of the
three declensions, indeclinable endings such as -енко, -ых, -ко and foreign
vowels). It is the last resort: tcg.entities.morph prefers pymorphy3's
dictionary and petrovich's rules when they are installed, and
bench/entity_morph.py measures all three on the same data.

Every function returns the six singular case forms keyed by OpenCorpora case
names (``nomn gent datv accs ablt loct``); a value that does not decline maps
every case to itself.
"""

from __future__ import annotations

CASES = ("nomn", "gent", "datv", "accs", "ablt", "loct")

_VELAR_SIBILANT = set("гкхжшщч")  # ы -> и after these
_SIBILANT_C = set("жшщчц")  # unstressed о -> е after these (ой/ом -> ей/ем)
_VOWELS = set("аеёиоуыэюя")

# First names with a fleeting vowel or an irregular stem (the common ones).
_STEMS = {"павел": "павл", "лев": "льв", "пётр": "петр", "петр": "петр"}


def _table(word: str, endings: tuple[str, str, str, str, str, str], cut: int) -> dict[str, str]:
    stem = word[: len(word) - cut] if cut else word
    return {case: (word if end == "=" else stem + end) for case, end in zip(CASES, endings, strict=True)}


def _indeclinable(word: str) -> dict[str, str]:
    return dict.fromkeys(CASES, word)


def _y(stem: str) -> str:
    """ы, or и after a velar or sibilant (spelling rule)."""
    return "и" if stem[-1:].lower() in _VELAR_SIBILANT else "ы"


def _o(stem: str) -> str:
    """о, or е after ж ш щ ч ц (for unstressed endings; stress is unknown here)."""
    return "е" if stem[-1:].lower() in _SIBILANT_C else "о"


def a_declension(word: str, animate: bool) -> dict[str, str]:
    """Nouns and names in -а/-я (Дильноза, Ромашка, Никита, Илья, Мария)."""
    low = word.lower()
    if low.endswith("ия"):
        return _table(word, ("=", "и", "и", "ю", "ей", "и"), 1)
    if low.endswith("ья"):
        return _table(word, ("=", "и", "е", "ю", "ёй", "е"), 1)
    if low.endswith("я"):
        return _table(word, ("=", "и", "е", "ю", "ей", "е"), 1)
    stem = word[:-1]
    return _table(word, ("=", _y(stem), "е", "у", _o(stem) + "й", "е"), 1)


def soft_sign_feminine(word: str) -> dict[str, str]:
    """Third declension (нефть, Газпромнефть, Любовь)."""
    return _table(word, ("=", "и", "и", "=", "ью", "и"), 1)


def consonant_masculine(word: str, animate: bool) -> dict[str, str]:
    """Second declension masculine (Иван, Сбербанк, Игорь, Алексей, Василий)."""
    low = word.lower()
    acc = "а" if animate else "="
    if low in _STEMS:
        base = _STEMS[low]
        stem = base.upper() if word.isupper() else base.capitalize() if word[:1].isupper() else base
        return {"nomn": word, "gent": stem + "а", "datv": stem + "у",
                "accs": stem + "а" if animate else word, "ablt": stem + "ом", "loct": stem + "е"}
    if low.endswith("ий"):
        return _table(word, ("=", "ия", "ию", "ия" if animate else "=", "ием", "ии"), 2)
    if low.endswith(("й", "ь")):
        acc_s = "я" if animate else "="
        return _table(word, ("=", "я", "ю", acc_s, "ем", "е"), 1)
    return _table(word, ("=", "а", "у", acc, _o(word) + "м", "е"), 0)


def neuter(word: str) -> dict[str, str]:
    """Neuter in -о/-е (Агентство, Поле)."""
    low = word.lower()
    if low.endswith("ие"):
        return _table(word, ("=", "я", "ю", "=", "ем", "и"), 1)
    if low.endswith("е"):
        return _table(word, ("=", "я", "ю", "=", "ем", "е"), 1)
    return _table(word, ("=", "а", "у", "=", "ом", "е"), 1)


def surname(word: str, gender: str) -> dict[str, str]:
    """A surname of ``gender`` ("m" or "f")."""
    low = word.lower()
    if low.endswith(("енко", "ко", "ых", "их", "аго", "яго", "о", "е", "и", "у", "ю", "э")):
        return _indeclinable(word)
    if gender == "m":
        if low.endswith(("ский", "цкий", "ской", "цкой")):
            return _table(word, ("=", "ого", "ому", "ого", "им", "ом"), 2)
        if low.endswith(("ой", "ый")):  # Толстой, Белый
            return _table(word, ("=", "ого", "ому", "ого", "ым", "ом"), 2)
        if low.endswith(("ов", "ев", "ёв", "ин", "ын")):
            return _table(word, ("=", "а", "у", "а", "ым", "е"), 0)
        if low.endswith(("а", "я")):
            return a_declension(word, animate=True)
        if low[-1:] in _VOWELS:
            return _indeclinable(word)
        return consonant_masculine(word, animate=True)
    # feminine
    if low.endswith(("ова", "ева", "ёва", "ина", "ына")):
        return _table(word, ("=", "ой", "ой", "у", "ой", "ой"), 1)
    if low.endswith(("ская", "цкая", "ая")):
        return _table(word, ("=", "ой", "ой", "ую", "ой", "ой"), 2)
    if low.endswith(("а", "я")):
        return a_declension(word, animate=True)
    return _indeclinable(word)  # Шмидт, Кац (f): do not decline


def first_name(word: str, gender: str) -> dict[str, str]:
    low = word.lower()
    if low.endswith(("а", "я")):
        return a_declension(word, animate=True)
    if gender == "f":
        if low.endswith("ь"):
            return soft_sign_feminine(word)
        return _indeclinable(word)
    if low[-1:] in _VOWELS:
        return _indeclinable(word)  # Отто, Анри
    return consonant_masculine(word, animate=True)


def patronymic(word: str, gender: str) -> dict[str, str]:
    low = word.lower()
    if low.endswith(("вич", "ьич", "ич")):
        return _table(word, ("=", "а", "у", "а", "ем", "е"), 0)
    if low.endswith(("вна", "чна", "шна")):
        return _table(word, ("=", "ы", "е", "у", "ой", "е"), 1)
    return _indeclinable(word)  # оглы, кызы, улы


def noun(word: str) -> dict[str, str]:
    """An organisation or project name read as an inanimate noun."""
    low = word.lower()
    if not any("а" <= c <= "я" or c == "ё" for c in low):
        return _indeclinable(word)  # Latin and other scripts: not declined in Russian text
    if low.endswith(("а", "я")):
        return a_declension(word, animate=False)
    if low.endswith("ь"):
        return soft_sign_feminine(word)
    if low.endswith(("о", "е")) and len(low) > 3 and low[-2:] not in ("ко",):
        return neuter(word)
    if low[-1:] in _VOWELS:
        return _indeclinable(word)
    return consonant_masculine(word, animate=False)


def surname_plural(word: str, gender: str) -> dict[str, str] | None:
    """The family plural of a -ов/-ин/-ский surname (Петровы, Петровых); None when the
    plural is not formed by a rule here."""
    low = word.lower()
    if gender == "f":
        if low.endswith(("ова", "ева", "ёва", "ина", "ына")):
            word, low = word[:-1], low[:-1]
        elif low.endswith(("ская", "цкая")):
            word, low = word[:-2] + "ий", low[:-2] + "ий"
        else:
            return None
    if low.endswith(("ов", "ев", "ёв", "ин", "ын")):
        return _table(word, ("ы", "ых", "ым", "ых", "ыми", "ых"), 0)
    if low.endswith(("ский", "цкий")):
        return _table(word, ("ие", "их", "им", "их", "ими", "их"), 2)
    return None


def guess_gender(words: list[str]) -> str | None:
    """"m"/"f" from a patronymic or a surname ending; None when unknown."""
    for w in words:
        low = w.lower()
        if low.endswith(("вич", "ьич", "оглы", "улы", "уулу")):
            return "m"
        if low.endswith(("вна", "чна", "кызы", "гызы")):
            return "f"
    for w in words:
        low = w.lower()
        if low.endswith(("ова", "ева", "ёва", "ина", "ына", "ская", "цкая")):
            return "f"
        if low.endswith(("ов", "ев", "ёв", "ин", "ын", "ский", "цкий")):
            return "m"
    return None


def surname_for_gender(word: str, gender: str) -> str:
    """The surname as a person of ``gender`` bears it: Петров -> Петрова (f),
    Петровская -> Петровский (m); other surnames do not change."""
    low = word.lower()
    up = word.isupper() and len(word) > 1

    def tail(t: str) -> str:
        return t.upper() if up else t

    if gender == "f":
        if low.endswith(("ов", "ев", "ёв", "ин", "ын")):
            return word + tail("а")
        if low.endswith(("ский", "цкий")):
            return word[:-2] + tail("ая")
    elif gender == "m":
        if low.endswith(("ова", "ева", "ёва", "ина", "ына")):
            return word[:-1]
        if low.endswith(("ская", "цкая")):
            return word[:-2] + tail("ий")
    return word
