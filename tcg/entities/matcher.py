"""Find registered entities' surface forms in text: one multi-pattern database.

Semantics (the reference, :meth:`Matcher.find_text`): a form matches where its
compact skeleton (tcg.entities.normal) occurs in the compact view of the text,
with at most MAX_GAP separator/invisible units between two of its letters, and
- a word boundary on each side that is a letter or digit (no letter, digit or
  ``_`` directly before/after, looking through invisible characters): «Петров»
  does not match inside «Петровка» or «Петровна»;
- for a name that is also an ordinary word (all persons; an organisation whose
  name is in the dictionary as a common noun) the first letter is a capital:
  «петров день» and «ромашка» the flower are left alone.
Overlapping matches: the leftmost wins; at one start, the one that inserts fewer
separators the form does not have (so «Петров а» is «Петров» + «а»), then the
longest.

Speed (the fast path, :meth:`Matcher.find_bytes`): one hyperscan database over
the raw UTF-8 bytes holds, for every distinct form prefix, an expression that
spells out each skeleton letter as the byte sequences of all its look-alikes
and case variants, and plain separators and colour sequences between them; a
second expression fires on the rare characters it does not spell out
(full-width letters, zero-width characters, typographic spaces). Only the
regions around a hit are decoded and matched on the view, so text without a
candidate costs one hyperscan pass (tcg.entities.prefilter). Without hyperscan
the whole text is matched on the view (same results, slower).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from tcg.entities.normal import MAX_GAP, WILDCARD, View, char_start, compact_skeleton, is_word
from tcg.entities.prefilter import INSERT_MIN_WORD, Prefilter, is_cyrillic

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

PROBE = 4  # characters of a form's key its lookup table is keyed by
CONTEXT = 32  # characters looked at on each side of a match for its boundary
EXTRA_CHARS = 24  # raw characters a match may hold beyond its letters (gaps, colours)
_MAX_CHAR_BYTES = 4


@dataclass(frozen=True)
class EntitySpec:
    """What the matcher needs of one registered entity (no morphology)."""

    alias: str
    capital: bool  # the first letter of a match must be upper-case
    forms: tuple[tuple[str, str], ...]  # (surface form, the token it is replaced by)


@dataclass(frozen=True)
class Match:
    start: int
    end: int
    token: str  # what replaces it: the alias, with the case ending when there is one
    entity: int  # index into the matcher's entities


@dataclass(frozen=True)
class _Form:
    key: str  # compact skeleton
    token: str
    entity: int
    capital: bool
    word_start: bool
    word_end: bool
    own_gaps: frozenset[int]  # k: the form has a separator between key[k-1] and key[k]
    insertable: frozenset[int]  # k: a separator may be inserted there (long Cyrillic word)


def _wild_ok(c: str) -> bool:
    return c.isalpha() and ord(c) < 0x530


def _form_shape(text: str) -> tuple[frozenset[int], frozenset[int]]:
    """(own separator positions, positions where one may be inserted) in the compact
    key of ``text``."""
    view = View(text)
    chars, off = view.chars, view.off
    own = {k for k in range(1, len(chars)) if view.separators(off[k - 1], off[k])}
    insertable: set[int] = set()
    start = 0
    for end in [*sorted(own), len(chars)]:
        word = text[off[start] : off[end - 1] + 1] if end > start else ""
        letters = [c for c in word if c.isalpha()]
        if len(letters) >= INSERT_MIN_WORD and all("\u0400" <= c <= "\u04ff" for c in letters):
            insertable |= set(range(start + 1, end))
        start = end
    return frozenset(own), frozenset(insertable)


class Matcher:
    """Compiled forms of a set of entities. Immutable; safe to share."""

    def __init__(self, entities: Sequence[EntitySpec]):
        self.entities = tuple(entities)
        forms: dict[str, _Form] = {}
        texts: list[str] = []
        for ei, ent in enumerate(self.entities):
            for text, token in ent.forms:
                key = compact_skeleton(text)
                if len(key) < 2 or key in forms:
                    continue  # first registered wins a shared form (the registry warns)
                own, insertable = _form_shape(text)
                forms[key] = _Form(key, token, ei, ent.capital, is_word(key[0]) or key[0] == WILDCARD,
                                   is_word(key[-1]) or key[-1] == WILDCARD, own, insertable)
                texts.append(text)
        self._setup(forms, texts)

    def _setup(self, forms: dict[str, _Form], texts: list[str]) -> None:
        self._loader: Callable[[], dict[str, object]] | None = None
        self._nforms = len(forms)
        self._forms = forms
        self._texts = texts
        # forms by their first PROBE characters (shorter keys, and keys with a
        # wildcard among those, by their first two: a second, short table)
        index: dict[str, list[_Form]] = {}
        short: dict[str, list[_Form]] = {}
        for f in forms.values():
            head = f.key[:PROBE]
            if len(head) == PROBE and WILDCARD not in head:
                index.setdefault(head, []).append(f)
            else:
                short.setdefault(f.key[:2], []).append(f)
        for lst in (*index.values(), *short.values()):
            lst.sort(key=lambda f: -len(f.key))
        self._index = index
        self._short = short
        longest = max((len(k) for k in forms), default=0)
        #: the most raw characters / bytes one match can span
        self.max_match_chars = longest + EXTRA_CHARS
        self.max_match_bytes = self.max_match_chars * _MAX_CHAR_BYTES
        #: raw bytes of context a region needs on each side
        self.context_bytes = CONTEXT * _MAX_CHAR_BYTES
        self._hs: tuple[Prefilter | None] | None = None
        #: first characters of forms that do not start with a letter or digit
        self._nonword_starts = frozenset(k[0] for k in forms if not is_word(k[0]) and k[0] != WILDCARD)

    # ------------------------------------------------------------ persistence

    def forms_state(self) -> dict[str, object]:
        """The forms (JSON-able; they hold the values' skeletons: keep it where the
        registry is)."""
        self._ensure()
        return {
            "entities": [[e.alias, e.capital] for e in self.entities],
            "forms": [[f.key, f.token, f.entity, f.capital, f.word_start, f.word_end,
                       sorted(f.own_gaps), sorted(f.insertable)] for f in self._forms.values()],
        }

    def header(self) -> dict[str, object]:
        """What a lazily loaded matcher needs before its forms."""
        return {"n_forms": len(self._forms), "max_match_chars": self.max_match_chars}

    @classmethod
    def lazy(cls, header: dict[str, object], prefilter: Prefilter | None,
             load_forms: Callable[[], dict[str, object]]) -> Matcher:
        """A matcher whose forms are read only when a prefilter hit needs them: a
        command whose output names no entity never parses them."""
        m = cls.__new__(cls)
        m.entities = ()
        m._setup({}, [])
        m._nforms = int(header["n_forms"])  # type: ignore[call-overload]
        m.max_match_chars = int(header["max_match_chars"])  # type: ignore[call-overload]
        m.max_match_bytes = m.max_match_chars * _MAX_CHAR_BYTES
        m._hs = (prefilter,)
        m._loader = load_forms
        return m

    def _ensure(self) -> None:
        loader = self._loader
        if loader is None:
            return
        self._loader = None
        state = loader()
        self.entities = tuple(EntitySpec(a, bool(c), ()) for a, c in state["entities"])  # type: ignore[attr-defined]
        forms = {}
        for key, token, ent, cap, ws, we, own, ins in state["forms"]:  # type: ignore[attr-defined]
            forms[key] = _Form(key, token, ent, cap, ws, we, frozenset(own), frozenset(ins))
        hs = self._hs
        self._setup(forms, [])
        self._hs = hs

    def __bool__(self) -> bool:
        return self._nforms > 0

    @classmethod
    def empty(cls) -> Matcher:
        return cls(())

    # ------------------------------------------------------------ reference

    def find_text(self, text: str, lo: int = 0, hi: int | None = None) -> list[Match]:
        """Every match (char offsets) starting in text[lo:hi], resolved; the text
        around the range is read for boundaries."""
        hi = len(text) if hi is None else hi
        self._ensure()
        if not self._forms or lo >= hi:
            return []
        vlo = max(0, lo - CONTEXT)
        vhi = min(len(text), hi + self.max_match_chars + CONTEXT)
        view = View(text, vlo, vhi)
        cands: list[tuple[int, int, int, int, _Form]] = []
        chars = view.chars
        index, short = self._index, self._short
        for i in _starts(view, lo, hi, self._nonword_starts):
            for lst in (index.get(chars[i : i + PROBE]), short.get(chars[i : i + 2])):
                if not lst:
                    continue
                for f in lst:
                    if _key_at(chars, i, f.key):
                        m = self._check(view, text, i, i + len(f.key), f)
                        if m is not None:
                            cands.append(m)
        return _resolve(cands)


    def _check(self, view: View, text: str, i: int, j: int, f: _Form
               ) -> tuple[int, int, int, int, _Form] | None:
        off = view.off
        inserted = 0
        for k in range(i + 1, j):
            a, b = off[k - 1], off[k]
            if b == a + 1:
                if (k - i) in f.own_gaps and is_word(view.chars[k - 1]) and is_word(view.chars[k]):
                    return None
                continue
            if view.gap_units(a, b) > MAX_GAP:
                return None
            seps = view.separators(a, b)
            between_words = is_word(view.chars[k - 1]) and is_word(view.chars[k])
            if (k - i) in f.own_gaps:
                if between_words and not seps:
                    return None  # «АлексейПетров» is not «Алексей Петров»
                continue
            if seps and between_words:
                # a separator the form does not have: only inside a long Cyrillic
                # word, between two Cyrillic letters, once per word
                if (k - i) not in f.insertable or not (is_cyrillic(text[a]) and is_cyrillic(text[b])):
                    return None
                inserted += 1
        if inserted > 1 and not _one_per_word(view, i, j, f):
            return None
        s, e = off[i], off[j - 1] + 1
        if e - s > len(f.key) + EXTRA_CHARS:
            return None
        if f.word_start:
            c, sep = view.char_before(s, CONTEXT)
            if c is not None and not sep and is_word(c):
                return None
        if f.word_end:
            c, sep = view.char_after(e, CONTEXT)
            if c is not None and not sep and is_word(c):
                return None
        if f.capital and not text[s].isupper():
            return None
        return (s, inserted, -(e - s), e, f)

    # ------------------------------------------------------------ fast path

    def find_bytes(self, data: bytes, hits: list[int] | None = None, scanned: bool = False
                   ) -> list[Match]:
        """Every match in ``data`` (byte offsets), the same as find_text() on its
        decoded text; only regions around prefilter hits are decoded. ``scanned``:
        ``hits`` are the prefilter's hits in ``data`` already (None: dense), or a
        superset of them."""
        if not self._nforms or not data:
            return []
        pre = self._prefilter()
        if pre is None:
            return self._find_region(data, 0, len(data), 0)
        if not scanned:
            hits = pre.scan(data)
        if hits is None:
            return self._find_region(data, 0, len(data), 0)
        if not hits:
            return []
        out: list[Match] = []
        margin = self.context_bytes
        lo = hi = -1
        for at in hits:
            reach = self.max_match_bytes
            a, b = at - reach - margin, at + reach + margin
            if a <= hi:
                hi = max(hi, b)
                continue
            if hi >= 0:
                out += self._find_region(data, max(lo, 0), min(hi, len(data)), margin)
            lo, hi = a, b
        out += self._find_region(data, max(lo, 0), min(hi, len(data)), margin)
        return out

    def _find_region(self, data: bytes, lo: int, hi: int, margin: int) -> list[Match]:
        """Matches starting in data[lo+margin : hi-margin] (the margins are context,
        except at the ends of ``data``)."""
        lo = char_start(data, lo)
        hi = char_start(data, hi) if hi < len(data) else len(data)
        text = data[lo:hi].decode("utf-8", "surrogateescape")
        own_lo = 0 if lo == 0 else char_start(data, lo + margin) - lo
        own_hi = hi - lo if hi == len(data) else char_start(data, max(lo, hi - margin)) - lo
        clo = len(data[lo : lo + own_lo].decode("utf-8", "surrogateescape"))
        chi = len(text) - len(data[lo + own_hi : hi].decode("utf-8", "surrogateescape"))
        found = self.find_text(text, clo, max(clo, chi))
        if not found:
            return []
        out = []
        for m in found:  # char offsets -> byte offsets
            s = lo + len(text[: m.start].encode("utf-8", "surrogateescape"))
            e = s + len(text[m.start : m.end].encode("utf-8", "surrogateescape"))
            out.append(Match(s, e, m.token, m.entity))
        return out

    def _prefilter(self) -> Prefilter | None:
        if self._hs is None:
            self._hs = (Prefilter.compile(self._texts),)
        return self._hs[0]

    # ------------------------------------------------------------ replacing

    def replace_text(self, text: str) -> tuple[str, list[Match]]:
        found = self.find_text(text)
        if not found:
            return text, []
        parts, pos = [], 0
        for m in found:
            parts.append(text[pos : m.start])
            parts.append(m.token)
            pos = m.end
        parts.append(text[pos:])
        return "".join(parts), found


def _one_per_word(view: View, i: int, j: int, f: _Form) -> bool:
    """At most one inserted separator in each word of the form."""
    off = view.off
    count = 0
    for k in range(i + 1, j):
        if (k - i) in f.own_gaps:
            count = 0
        elif view.separators(off[k - 1], off[k]) and is_word(view.chars[k - 1]) \
                and is_word(view.chars[k]):
            count += 1
            if count > 1:
                return False
    return True


def _starts(view: View, lo: int, hi: int, nonword: frozenset[str]) -> list[int]:
    """View indexes in raw [lo, hi) where a match can start: a word character
    whose previous visible character is not one (or is across a separator), or a
    character some form starts with."""
    full, vlo = view.full, view.lo
    out = []
    for m in _WORD_START.finditer(full, max(0, lo - vlo), max(0, hi - vlo)):
        out.append(m.end() - 1)
    if nonword:
        for i in range(max(0, lo - vlo), max(0, hi - vlo)):
            if full[i] in nonword:
                out.append(i)
        out.sort()
    off = view.off
    idx = []
    for p in out:
        j = bisect.bisect_left(off, p + vlo)
        if j < len(off) and off[j] == p + vlo:
            idx.append(j)
    return idx


# a word character not preceded by one (invisible characters and control
# sequences between do not separate words)
_WORD_START = re.compile(r"(?<![\w\x00\x03\x04])[\x00\x03\x04]*\w")


def _key_at(chars: str, i: int, key: str) -> bool:
    if WILDCARD not in key:
        return chars.startswith(key, i)
    if i + len(key) > len(chars):
        return False
    for a, b in zip(key, chars[i : i + len(key)], strict=True):
        if a == WILDCARD:
            if not _wild_ok(b):
                return False
        elif a != b:
            return False
    return True


def _resolve(cands: list[tuple[int, int, int, int, _Form]]) -> list[Match]:
    """Leftmost first; at one start fewer inserted separators, then longer."""
    cands.sort(key=lambda c: (c[0], c[1], c[2]))
    out: list[Match] = []
    end = -1
    for s, _ins, _neg, e, f in cands:
        if s < end:
            continue
        out.append(Match(s, e, f.token, f.entity))
        end = e
    return out
