"""Accuracy of the three declension sources tcg.entities.morph can use.

Two data sets:
- **vectors**: the names and organisations of the entity test vectors
  (docs/entities.md), each with its six singular case forms;
- **dictionary**: a deterministic sample of the OpenCorpora dictionary that
  pymorphy3 ships (surnames, first names and patronymics of both genders, and
  organisation names), with the dictionary's own forms as the truth — data
  nobody here wrote. pymorphy3 itself is not scored on this set (it would be
  grading its own dictionary); petrovich and the ending table are.

An entity counts as correct only when all six case forms are exactly right.

    .venv/bin/python bench/entity_morph.py [--per-tag N]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tcg.entities import morph  # noqa: E402
from tcg.entities.morph import CASES, available_backends  # noqa: E402

_PETROVICH_CASE = {"gent": 0, "datv": 1, "accs": 2, "ablt": 3, "loct": 4}


def petrovich_decline(word: str, role: str, gender: str) -> dict[str, str] | None:
    """petrovich (pip install petrovich) as a declension source, for comparison only."""
    try:
        p = _petrovich()
    except ImportError:
        return None
    if role not in ("first", "middle", "last"):
        return None
    fn = {"first": p.firstname, "middle": p.middlename, "last": p.lastname}[role]
    g = {"m": "male", "f": "female"}[gender]
    return {"nomn": word, **{c: fn(word, i, g) for c, i in _PETROVICH_CASE.items()}}


_P = []


def _petrovich():
    if not _P:
        from petrovich.main import Petrovich

        _P.append(Petrovich())
    return _P[0]


def with_petrovich(backends: tuple[str, ...]) -> None:
    """Patch tcg.entities.morph so "petrovich" is a source between pymorphy3 and the table."""
    orig = morph.decline_word

    def decline(word, role, gender, bk, _orig=orig):
        if "petrovich" in bk and role in ("first", "middle", "last") and morph._is_cyrillic_word(word):
            rest = tuple(b for b in bk if b != "petrovich")
            i = bk.index("petrovich")
            if "pymorphy3" in bk[:i]:
                got = morph._pymorphy_decline(word, role, gender)
                if got is not None:
                    return got[0], got[1], "pymorphy3"
            pet = petrovich_decline(word, role, gender)
            if pet is not None:
                return pet, None, "petrovich"
            return _orig(word, role, gender, rest)
        return _orig(word, role, gender, tuple(b for b in bk if b != "petrovich"))

    morph.decline_word = decline
    morph._backend.cache_clear()
    orig_backend = morph._backend

    def backend(name: str, _o=orig_backend):
        if name == "petrovich":
            try:
                return _petrovich()
            except ImportError:
                return None
        return _o(name)

    morph._backend = backend

# (value, kind, gender, the six singular forms: nomn gent datv accs ablt loct)
VECTORS = [
    ("Петров", "person", "m", "Петров Петрова Петрову Петрова Петровым Петрове"),
    ("Петрова", "person", "f", "Петрова Петровой Петровой Петрову Петровой Петровой"),
    ("Сулейманов", "person", "m", "Сулейманов Сулейманова Сулейманову Сулейманова Сулеймановым Сулейманове"),
    ("Шевченко", "person", "m", "Шевченко Шевченко Шевченко Шевченко Шевченко Шевченко"),
    ("Сидоренко", "person", "f", "Сидоренко Сидоренко Сидоренко Сидоренко Сидоренко Сидоренко"),
    ("Ахмедова", "person", "f", "Ахмедова Ахмедовой Ахмедовой Ахмедову Ахмедовой Ахмедовой"),
    ("Дильноза", "person", "f", "Дильноза Дильнозы Дильнозе Дильнозу Дильнозой Дильнозе"),
    ("Алексей Петров", "person", "m",
     "Алексей_Петров Алексея_Петрова Алексею_Петрову Алексея_Петрова Алексеем_Петровым Алексее_Петрове"),
    ("Ромашка", "company", None, "Ромашка Ромашки Ромашке Ромашку Ромашкой Ромашке"),
    ("Газпромнефть", "company", None,
     "Газпромнефть Газпромнефти Газпромнефти Газпромнефть Газпромнефтью Газпромнефти"),
]

CONFIGS = [
    ("pymorphy3+table (tcg[morph])", ("pymorphy3", "table")),
    ("pymorphy3+petrovich+table", ("pymorphy3", "petrovich", "table")),
    ("petrovich+table", ("petrovich", "table")),
    ("table only (tcg)", ("table",)),
]


def score_vectors(backends: tuple[str, ...]) -> tuple[int, int, list[str]]:
    ok = 0
    wrong: list[str] = []
    for value, kind, gender, expected in VECTORS:
        want = dict(zip(CASES, (w.replace("_", " ") for w in expected.split()), strict=True))
        fs = morph.surface_forms(value, kind, gender, backends)
        got = {f.case: f.text for f in fs.forms
               if f.shape == "full" and f.number == "sing" and f.gender in (gender or "", "")}
        if got == want:
            ok += 1
        else:
            wrong.append(value)
    return ok, len(VECTORS), wrong


def dictionary_sample(per_tag: int) -> list[tuple[str, str, str, dict[str, str]]]:
    """(word, role, gender, forms) from the OpenCorpora dictionary, every k-th entry."""
    import pymorphy3

    m = pymorphy3.MorphAnalyzer()
    groups: dict[tuple[str, str], list] = {}
    wanted = {("Surn", "masc"): "last", ("Surn", "femn"): "last", ("Name", "masc"): "first",
              ("Name", "femn"): "first", ("Patr", "masc"): "middle", ("Patr", "femn"): "middle",
              ("Orgn", "masc"): "noun", ("Orgn", "femn"): "noun"}
    for p in m.iter_known_word_parses(""):
        tag = p.tag
        if "nomn" not in tag or "sing" not in tag or "NOUN" not in tag or "Fixd" in tag:
            continue
        for (t, g), role in wanted.items():
            if t in tag and g in tag and p.word == p.normal_form or (t in tag and g in tag and g == "femn"
                                                                     and role != "noun"):
                groups.setdefault((t, g), []).append(p)
    out = []
    for (t, g), parses in sorted(groups.items()):
        seen: set[str] = set()
        uniq = [p for p in parses if not (p.word in seen or seen.add(p.word))]
        step = max(1, len(uniq) // per_tag)
        for p in uniq[::step][:per_tag]:
            forms = {}
            for case in CASES:
                f = p.inflect({case, "sing"})
                if f is None:
                    break
                forms[case] = f.word
            else:
                out.append((p.word, wanted[(t, g)], "m" if g == "masc" else "f", forms))
    return out


def score_dictionary(sample, backend: str) -> dict[str, tuple[int, int]]:
    res: dict[str, list[int]] = {}
    for word, role, gender, forms in sample:
        if backend == "petrovich" and role == "noun":
            continue
        got, _plur, src = morph.decline_word(word, role, gender, (backend,))
        key = f"{role}/{gender}" if role != "noun" else "organisation"
        r = res.setdefault(key, [0, 0])
        r[1] += 1
        if src == backend and {c: v.lower() for c, v in got.items()} == forms:
            r[0] += 1
    return {k: (v[0], v[1]) for k, v in sorted(res.items())}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--per-tag", type=int, default=150, help="dictionary entries per tag (default 150)")
    args = ap.parse_args()
    with_petrovich(("petrovich",))
    have = available_backends() + (("petrovich",) if petrovich_decline("Петров", "last", "m") else ())
    print(f"installed sources: {', '.join(have)}")
    print("\n## vectors (all six forms right)")
    for name, bk in CONFIGS:
        if not set(bk) <= set(have):
            print(f"{name:28s} not installed")
            continue
        ok, n, wrong = score_vectors(bk)
        print(f"{name:28s} {ok}/{n}" + (f"  wrong: {', '.join(wrong)}" if wrong else ""))
    if "pymorphy3" not in have:
        print("\n(dictionary set needs pymorphy3: pip install 'tcg[morph]')")
        return 0
    t0 = time.monotonic()
    sample = dictionary_sample(args.per_tag)
    print(f"\n## dictionary sample: {len(sample)} entries (OpenCorpora via pymorphy3, "
          f"{time.monotonic() - t0:.1f} s to collect)")
    for backend in ("petrovich", "table"):
        if backend not in have:
            continue
        scores = score_dictionary(sample, backend)
        tot_ok = sum(a for a, _ in scores.values())
        tot = sum(b for _, b in scores.values())
        parts = ", ".join(f"{k} {a}/{b}" for k, (a, b) in scores.items())
        print(f"{backend:10s} {tot_ok}/{tot} ({100 * tot_ok / max(tot, 1):.1f}%)  {parts}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
