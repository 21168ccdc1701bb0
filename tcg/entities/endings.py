"""Case endings on aliases: what the model sees for «у Петрова», and how it comes back.

A Russian text inflects names, and an agent writing Russian inflects aliases the
same way («у CTXG_PERSON_3а»). So a form is replaced by its alias plus the
form's ending relative to the registered value (Петров → Петрова: «а»;
Ромашка → Ромашкой: «ой»), and on the way back the ending picks the form again.
Endings are computed once per entity from its stored forms; for a name of
several words the word whose endings tell the forms apart best carries them
(«Дильноза Ахмедова»: the first name, since Ахмедовой is four cases at once).

Restoring an ending that is not one of the entity's own uses the usual
endings of each case (``ом`` is instrumental: Петровым); one that fits
several different forms is ambiguous and never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tcg.entities.morph import Form

MAX_ENDING = 3

# endings a writer may put on a word in each case, whatever the word's own are
GENERIC: dict[str, tuple[str, ...]] = {
    "а": ("gent", "accs"), "я": ("gent", "accs"), "ы": ("gent",), "и": ("gent", "datv", "loct"),
    "у": ("datv", "accs"), "ю": ("datv", "accs"), "е": ("datv", "loct"), "ё": ("datv", "loct"),
    "ом": ("ablt",), "ем": ("ablt",), "ём": ("ablt",), "ым": ("ablt",), "им": ("ablt",),
    "ой": ("ablt", "gent", "datv", "loct"), "ей": ("ablt", "gent", "datv", "loct"),
    "ою": ("ablt",), "ею": ("ablt",), "ёй": ("ablt",),
}


@dataclass(frozen=True)
class Inflection:
    """How one entity's alias carries case endings."""

    value: str
    endings: dict[str, tuple[str, ...]]  # ending -> the distinct forms it stands for
    by_case: dict[str, tuple[str, ...]]  # case -> distinct singular forms

    def to_json(self) -> dict[str, object]:
        return {"endings": {k: list(v) for k, v in self.endings.items()},
                "cases": {k: list(v) for k, v in self.by_case.items()}}

    @classmethod
    def from_json(cls, value: str, d: dict[str, dict[str, list[str]]]) -> Inflection:
        return cls(value, {k: tuple(v) for k, v in d.get("endings", {}).items()},
                   {k: tuple(v) for k, v in d.get("cases", {}).items()})

    def restore(self, ending: str) -> tuple[str | None, str]:
        """(the form ``ending`` stands for or None, why not)."""
        if not ending:
            return self.value, ""
        got = self.endings.get(ending)
        if got is not None:
            return (got[0], "") if len(got) == 1 else (None, "ambiguous")
        cases = GENERIC.get(ending)
        if cases is None:
            return None, "unknown-ending"
        texts = {t for c in cases for t in self.by_case.get(c, ())}
        if len(texts) == 1:
            return texts.pop(), ""
        return None, "ambiguous" if texts else "unknown-ending"


def _lcp(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a.lower(), b.lower()):  # noqa: B905 - prefix of the shorter
        if x != y:
            break
        n += 1
    return n


def _ending(word: str, base: str) -> str:
    return word[_lcp(word, base):].lower()


def assign(alias: str, value: str, forms: tuple[Form, ...]) -> tuple[list[tuple[str, str]], Inflection]:
    """[(form text, token)] for every form, and the entity's Inflection."""
    base_words = value.split()
    canon = [f for f in forms if f.shape == "full" or f.number == "plur"]

    def key(f: Form, w: int) -> str | None:
        if f.text == value:
            return ""
        words = f.text.split()
        if len(words) == len(base_words):
            e = _ending(words[w], base_words[w])
            # the other words must not differ where this one does not
        else:
            last = words[-1]
            best = max(base_words, key=lambda b: _lcp(last, b))
            e = _ending(last, best)
        if len(e) > MAX_ENDING or not all("а" <= c <= "я" or c == "ё" for c in e):
            return None
        return e

    sing = [f for f in canon if f.number == "sing"]
    plur = [f for f in canon if f.number != "sing"]
    best_w, best_bad = len(base_words) - 1, None
    for w in reversed(range(len(base_words))):
        table: dict[str, set[str]] = {}
        for f in sing:
            k = key(f, w)
            if k is not None:
                table.setdefault(k, set()).add(f.text)
        bad = sum(1 for texts in table.values() if len(texts) > 1)
        if best_bad is None or bad < best_bad:
            best_w, best_bad = w, bad
    endings: dict[str, set[str]] = {}
    form_key: dict[tuple[str, str, str], str] = {}
    for f in sing:
        k = key(f, best_w)
        if k is None:
            continue
        endings.setdefault(k, set()).add(f.text)
        form_key.setdefault((f.case, f.number, f.gender), k)
        form_key.setdefault((f.case, f.number, ""), k)
    for f in plur:  # the family plural, where its ending is free
        k = key(f, best_w)
        if k is not None and endings.get(k, {f.text}) == {f.text}:
            endings.setdefault(k, set()).add(f.text)
            form_key.setdefault((f.case, f.number, ""), k)
    by_case: dict[str, set[str]] = {}
    for f in canon:
        if f.number == "sing":
            by_case.setdefault(f.case, set()).add(f.text)
    tokens: list[tuple[str, str]] = []
    for f in forms:
        if f.shape == "translit":
            k = ""
        elif f.shape == "full":
            k = key(f, best_w) or ""
        else:
            k = form_key.get((f.case, f.number, f.gender), form_key.get((f.case, f.number, ""), ""))
        if k and len(endings.get(k, ())) > 1:
            k = ""  # an ambiguous ending would not come back: the bare alias
        tokens.append((f.text, alias + k))
    infl = Inflection(value, {k: tuple(sorted(v)) for k, v in endings.items() if k},
                      {c: tuple(sorted(v)) for c, v in by_case.items()})
    return tokens, infl
