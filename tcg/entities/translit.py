"""Latin spellings of a Cyrillic name, so «Petrov» and «Romashka» are matched too.

Two systems, because both are in use: the ICAO one printed in Russian passports
(й → i, ю → iu, я → ia, х → kh) and the popular one (й → y, ю → yu, я → ya).
Full-width and mathematical letters fold to ASCII (tcg.entities.normal), so
«Ｒｏｍａｓｈｋａ» is matched through these spellings.
"""

from __future__ import annotations

_COMMON = {
    "а": "a", "б": "b", "в": "v", "г": "g", "д": "d", "е": "e", "ё": "e", "ж": "zh", "з": "z",
    "и": "i", "к": "k", "л": "l", "м": "m", "н": "n", "о": "o", "п": "p", "р": "r", "с": "s",
    "т": "t", "у": "u", "ф": "f", "х": "kh", "ц": "ts", "ч": "ch", "ш": "sh", "щ": "shch",
    "ъ": "", "ы": "y", "ь": "", "э": "e",
}
ICAO = {**_COMMON, "й": "i", "ъ": "ie", "ю": "iu", "я": "ia"}
POPULAR = {**_COMMON, "й": "y", "ю": "yu", "я": "ya", "ё": "yo"}
SYSTEMS = (ICAO, POPULAR)


def transliterate(text: str, table: dict[str, str]) -> str:
    out = []
    for ch in text:
        low = ch.lower()
        lat = table.get(low)
        if lat is None:
            out.append(ch)
        elif ch != low and lat:
            out.append(lat.upper() if _next_upper(text, len(out)) else lat[0].upper() + lat[1:])
        else:
            out.append(lat)
    return "".join(out)


def _next_upper(text: str, i: int) -> bool:
    """An all-capitals word (ООО, РОМАШКА) keeps all capitals in Latin."""
    nxt = text[i + 1 : i + 2]
    return bool(nxt) and nxt.isupper()


def spellings(text: str) -> list[str]:
    """The distinct Latin spellings of ``text`` (none when it has no Cyrillic)."""
    if not any("\u0400" <= c <= "\u04ff" for c in text):
        return []
    out: list[str] = []
    for table in SYSTEMS:
        lat = transliterate(text, table)
        if lat not in out:
            out.append(lat)
    return out
