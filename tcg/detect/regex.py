"""The only place detection regexes are analysed and compiled.

Rules are matched on BYTES (ASCII semantics for ``\\w``, ``\\d``, ``\\s``, ``\\b``,
case-insensitivity) so that the hyperscan prefilter and the Python ``re``
confirmation agree, and so that invalid UTF-8 never breaks a scan. Every rule
must be bounded: the maximum width of the pattern (in bytes) is what the
streaming masker holds back.
"""

from __future__ import annotations

import marshal

from tcg.record import Record

# ``re`` and its parser (tcg._lean.reparse) load inside the functions that use them:
# with enum behind them they cost ~6 ms, and a small scan or a masker that meets no
# keyword loads the detector from its memo without analysing or compiling a pattern.
TYPE_CHECKING = False  # typing costs ~9 ms of import before the first masked byte
if TYPE_CHECKING:
    import re
    from typing import Any


# A single rule may not match more than this many bytes (the masker's hold-back
# is the maximum over all rules, so one sloppy rule would slow every stream).
MAX_RULE_WIDTH = 4096

_FORBIDDEN = {
    "ASSERT": "lookahead/lookbehind",
    "ASSERT_NOT": "negative lookahead/lookbehind",
    "GROUPREF": "backreference",
    "GROUPREF_EXISTS": "conditional backreference",
    "ATOMIC_GROUP": "atomic group",
    "POSSESSIVE_REPEAT": "possessive quantifier",
}


class PatternError(ValueError):
    """A rule regex is unusable; the loader turns this into a RuleError naming the rule."""


class Analysis(Record, fields="min_width max_width flags has_value_group"):
    """What the loader needs to know of a rule regex: its width bounds in bytes, its global
    inline flags (re.I/re.M/re.S/re.X) and whether it has a ``value`` group."""

    __slots__ = ()

    min_width: int
    max_width: int
    flags: int
    has_value_group: bool


def _walk(seq: Any, path_ok: bool = True) -> None:
    from tcg._lean.reparse import constants as _c

    for op, av in seq:
        name = str(op)
        if name in _FORBIDDEN:
            raise PatternError(f"{_FORBIDDEN[name]} is not allowed (hyperscan cannot run it)")
        if name in ("MAX_REPEAT", "MIN_REPEAT"):
            lo, hi, sub = av
            if hi == _c.MAXREPEAT:
                raise PatternError("unbounded quantifier (*, + or {n,}); use {m,n}")
            _walk(sub)
        elif name == "SUBPATTERN":
            _group, add_flags, del_flags, sub = av
            if add_flags or del_flags:
                raise PatternError("scoped inline flags (?i:...) are not allowed; use (?i) at the start")
            _walk(sub)
        elif name == "BRANCH":
            for sub in av[1]:
                _walk(sub)
        elif name == "IN":
            for iop, iav in av:
                iname = str(iop)
                if iname in ("LITERAL", "NOT_LITERAL") and iav > 127:
                    raise PatternError("non-ASCII character in a class; use an alternation (?:а|б)")
                if iname == "RANGE" and iav[1] > 127:
                    raise PatternError("non-ASCII range in a class; use an alternation")
        elif name == "NOT_LITERAL" and av > 127:
            raise PatternError("negated non-ASCII literal is not allowed")


def analyse(pattern: str) -> Analysis:
    """Check a rule regex against the schema and compute its byte width bounds."""
    if not isinstance(pattern, str) or not pattern:
        raise PatternError("regex must be a non-empty string")
    import re

    from tcg._lean.reparse import constants as _c
    from tcg._lean.reparse import parser as _p

    # Global inline flags a rule may use: (?i) (?m) (?s) (?x). Hyperscan knows all four.
    allowed_flags = re.IGNORECASE | re.MULTILINE | re.DOTALL | re.VERBOSE | re.UNICODE
    try:
        re.compile(pattern)
        tree = _p.parse(pattern.encode("utf-8"))
    except (re.error, OverflowError, RecursionError) as exc:
        raise PatternError(f"regex does not compile: {exc}") from None
    flags = tree.state.flags & ~re.UNICODE
    if flags & ~allowed_flags:
        raise PatternError("only the inline flags (?i) (?m) (?s) (?x) are allowed")
    if flags and not re.match(r"\(\?[imsx]+\)", pattern):
        raise PatternError("inline flags must be at the very start, e.g. (?i)...")
    _walk(_p.parse(pattern))  # str tree: sees non-ASCII code points in classes
    lo, hi = tree.getwidth()
    if hi >= _c.MAXREPEAT:
        raise PatternError("unbounded pattern (no maximum match length)")
    if lo == 0:
        raise PatternError("pattern can match the empty string")
    if hi > MAX_RULE_WIDTH:
        raise PatternError(f"maximum match length {hi} exceeds {MAX_RULE_WIDTH} bytes")
    groups = tree.state.groupdict
    return Analysis(lo, hi, flags, "value" in groups)


def compile_bytes(pattern: str) -> re.Pattern[bytes]:
    """Python ``re`` version of a rule (bytes, ASCII semantics)."""
    import re

    return re.compile(pattern.encode("utf-8"))


_AT = {
    "AT_BEGINNING": "^", "AT_BEGINNING_STRING": "\\A", "AT_BOUNDARY": "\\b",
    "AT_NON_BOUNDARY": "\\B", "AT_END": "$", "AT_END_STRING": "\\z",  # Python \\Z is PCRE \\z
}
_CATEGORY = {
    "CATEGORY_DIGIT": "\\d", "CATEGORY_NOT_DIGIT": "\\D", "CATEGORY_SPACE": "\\s",
    "CATEGORY_NOT_SPACE": "\\S", "CATEGORY_WORD": "\\w", "CATEGORY_NOT_WORD": "\\W",
}
# Leading items a hyperscan prefilter may drop (see hyperscan_pattern).
_CHAR_OPS = ("IN", "ANY", "NOT_LITERAL")


def _byte(b: int) -> str:
    return chr(b) if chr(b).isalnum() and b < 128 else f"\\x{b:02x}"


def _unparse(seq: Any) -> str:
    out = []
    for op, av in seq:
        name = str(op)
        if name == "LITERAL":
            out.append(_byte(av))
        elif name == "NOT_LITERAL":
            out.append(f"[^{_byte(av)}]")
        elif name == "ANY":
            out.append(".")
        elif name == "IN":
            items = []
            neg = ""
            for iop, iav in av:
                iname = str(iop)
                if iname == "NEGATE":
                    neg = "^"
                elif iname == "LITERAL":
                    items.append(_byte(iav))
                elif iname == "RANGE":
                    items.append(f"{_byte(iav[0])}-{_byte(iav[1])}")
                elif iname == "CATEGORY":
                    items.append(_CATEGORY[str(iav)])
                else:
                    raise PatternError(f"cannot translate class item {iname}")
            out.append(f"[{neg}{''.join(items)}]")
        elif name == "AT":
            out.append(_AT[str(av)])
        elif name in ("MAX_REPEAT", "MIN_REPEAT"):
            lo, hi, sub = av
            out.append(f"(?:{_unparse(sub)}){{{lo},{hi}}}")
        elif name == "SUBPATTERN":
            out.append(f"(?:{_unparse(av[3])})")
        elif name == "BRANCH":
            out.append("(?:" + "|".join(_unparse(alt) for alt in av[1]) + ")")
        else:
            raise PatternError(f"cannot translate {name} for hyperscan")
    return "".join(out)


def _flatten(seq: Any) -> list[Any]:
    """Top-level items with plain groups spliced in (groups do not matter to hyperscan)."""
    out: list[Any] = []
    for op, av in seq:
        if str(op) == "SUBPATTERN" and not av[1] and not av[2]:
            out.extend(_flatten(av[3]))
        else:
            out.append((op, av))
    return out


def _strip_leading_runs(items: list[Any]) -> list[Any]:
    """Drop leading anchors and character-class runs up to the first literal.

    A hyperscan pattern only has to report every END offset where the rule can
    match (the window [end - max_len, end] is confirmed with ``re``), so any
    suffix of the rule works. Leading runs like ``[A-Za-z0-9._%+-]{1,64}`` (the
    local part of an e-mail address) make hyperscan 5x slower; the literal that
    follows ("@") is what makes it fast.

    A leading optional group of alternatives (``^[ >+-]{0,16}(?:export |path:line:|…){0,4}``,
    the decorations tools put before an assignment) goes too, with the anchors and
    class runs before it: ``re`` enforces it when it confirms the window, and
    hyperscan refuses such a group as too large.
    """
    lead = 0
    while lead < len(items) and (str(items[lead][0]) == "AT" or _charish([items[lead]])
                                 or _optional_group(items[lead])):
        lead += 1
    last = max((i for i in range(lead) if _optional_group(items[i])), default=-1)
    if last >= 0:
        items = items[last + 1:]
    for i, (op, _av) in enumerate(items):
        if str(op) == "LITERAL":
            if i == 0 or not _selective(items[i:]):
                return items
            return items[i:]
        if not _charish([(op, _av)]):
            return items
    return items


def _cut_at_gap(items: list[Any]) -> list[Any]:
    """Drop everything up to a wide class run (a gap such as ``[^\\r\\n]{0,200}``) when
    the part after it holds a literal run at least as long as any the part before it
    guarantees: the cheapest suffix hyperscan can look for.

    Sound for the reason given in :func:`_strip_leading_runs`: a suffix reports every
    end offset the whole rule can match at, and ``re`` confirms the window. Why: a
    connection string's ``\\b(?:server|host|user|…)\\s{0,2}=[^;\\r\\n]{1,100};[^\\r\\n]{0,200}``
    ``\\bp(?:assword|wd)=…`` kept hyperscan tracking two wide repeats after every common
    word ("server", "host"): on log-like text that one rule was half of the main
    database's scan time. Its suffix starts at "password" or "pwd", which text seldom
    holds. The length condition keeps a rarer prefix (``<secret>{`` before ``}</``)."""
    for g in range(len(items) - 1, 0, -1):
        op, av = items[g]
        if str(op) not in ("MAX_REPEAT", "MIN_REPEAT") or av[1] < GAP_MIN \
                or not _charish([items[g]]):
            continue
        suffix = items[g + 1:]
        run = _factor(suffix, branches=True)
        if run >= GAP_SUFFIX_RUN and run >= _factor(items[:g], branches=True):
            return suffix
    return items


def _optional_group(item: Any) -> bool:
    """A repeat that may match nothing (``{0,n}``) of something more than one character."""
    op, av = item
    return str(op) in ("MAX_REPEAT", "MIN_REPEAT") and av[0] == 0 and not _charish(av[2])


def _selective(items: list[Any]) -> bool:
    """The suffix starts with a literal rare enough to anchor a fast scan: two or more
    literal bytes, or one uncommon punctuation byte such as "@"."""
    run = 0
    for op, _av in items:
        if str(op) != "LITERAL":
            break
        run += 1
    return run >= 2 or items[0][1] in _RARE_BYTES


_RARE_BYTES = frozenset(b"@$#!~^|`\\")
# A class run at least this wide is a gap a hyperscan expression may start after
# (_cut_at_gap), when what follows has a literal run of at least GAP_SUFFIX_RUN bytes.
GAP_MIN = 64
GAP_SUFFIX_RUN = 3


def _charish(seq: Any) -> bool:
    """Only anchors and single-character matchers (possibly repeated or alternated)."""
    for op, av in seq:
        name = str(op)
        if name == "AT" or name in _CHAR_OPS:
            continue
        if name in ("MAX_REPEAT", "MIN_REPEAT") and all(str(o) in _CHAR_OPS for o, _ in av[2]):
            continue
        if name == "BRANCH" and all(_charish(alt) for alt in av[1]):
            continue
        if name == "SUBPATTERN" and _charish(av[3]):
            continue
        return False
    return True


def hyperscan_pattern(pattern: str) -> tuple[bytes, int]:
    """(expression, flags) for hyperscan, rebuilt from the parse tree: named groups
    become non-capturing, Python-only syntax disappears, inline flags become
    hyperscan flags, and leading class runs before a literal, or a prefix before a
    wide gap, are dropped (a suffix finds every end offset, see _cut_at_gap)."""
    import re

    from tcg._lean import hs as hyperscan
    from tcg._lean.reparse import parser as _p

    tree = _p.parse(pattern.encode("utf-8"))
    flags = 0
    gflags = tree.state.flags
    if gflags & re.IGNORECASE:
        flags |= hyperscan.HS_FLAG_CASELESS
    if gflags & re.MULTILINE:
        flags |= hyperscan.HS_FLAG_MULTILINE
    if gflags & re.DOTALL:
        flags |= hyperscan.HS_FLAG_DOTALL
    body = _unparse(_cut_at_gap(_strip_leading_runs(_flatten(tree.data))))
    return body.encode("ascii"), flags


_PY_AT = {
    "AT_BEGINNING": "^", "AT_BEGINNING_STRING": "\\A", "AT_BOUNDARY": "\\b",
    "AT_NON_BOUNDARY": "\\B", "AT_END": "$", "AT_END_STRING": "\\Z",
}


def _low(b: int) -> int:
    return b + 32 if 65 <= b <= 90 else b


def _py_lowered(seq: Any, names: dict[int, str]) -> str:
    from tcg._lean.reparse import constants as _c

    out = []
    for op, av in seq:
        name = str(op)
        if name == "LITERAL":
            out.append(f"\\x{_low(av):02x}")
        elif name == "NOT_LITERAL":
            out.append(f"[^\\x{_low(av):02x}]")
        elif name == "ANY":
            out.append(".")
        elif name == "IN":
            neg = ""
            members: set[int] = set()
            cats = []
            for iop, iav in av:
                iname = str(iop)
                if iname == "NEGATE":
                    neg = "^"
                elif iname == "LITERAL":
                    members.add(_low(iav))
                elif iname == "RANGE":
                    members.update(_low(b) for b in range(iav[0], iav[1] + 1))
                elif iname == "CATEGORY":
                    cats.append(_CATEGORY[str(iav)])
                else:
                    raise PatternError(f"cannot lower class item {iname}")
            chars = "".join(f"\\x{b:02x}" for b in sorted(members))
            out.append(f"[{neg}{chars}{''.join(cats)}]")
        elif name == "AT":
            out.append(_PY_AT[str(av)])
        elif name in ("MAX_REPEAT", "MIN_REPEAT"):
            lo, hi, sub = av
            top = "" if hi == _c.MAXREPEAT else str(hi)
            lazy = "?" if name == "MIN_REPEAT" else ""
            out.append(f"(?:{_py_lowered(sub, names)}){{{lo},{top}}}{lazy}")
        elif name == "SUBPATTERN":
            group, add_flags, del_flags, sub = av
            if add_flags or del_flags:
                raise PatternError("scoped flags")
            if group is None:
                out.append(f"(?:{_py_lowered(sub, names)})")
            elif group in names:
                out.append(f"(?P<{names[group]}>{_py_lowered(sub, names)})")
            else:
                out.append(f"({_py_lowered(sub, names)})")
        elif name == "BRANCH":
            out.append("(?:" + "|".join(_py_lowered(alt, names) for alt in av[1]) + ")")
        else:
            raise PatternError(f"cannot lower {name}")
    return "".join(out)


def lowered_pattern(pattern: str) -> re.Pattern[bytes] | None:
    """For a case-insensitive rule: an equivalent case-SENSITIVE pattern to run on
    ASCII-lowered input (``data.lower()``), else None.

    On bytes, ``(?i)`` compares ``lower(x)`` with the lowered literal or class
    (sre's LITERAL_IGNORE / IN_IGNORE), so matching ``lower(data)`` against the
    lowered literals and classes finds the same matches at the same offsets,
    groups included (lower() keeps lengths, digits, spaces and word characters).
    sre cannot skip ahead under ``(?i)``; on lowered input it can (a literal or
    charset prefix), which makes the confirmation of a case-insensitive rule
    ~3-6x faster. tests/detect/test_engine.py compares the two on every rule."""
    import re

    from tcg._lean.reparse import parser as _p

    tree = _p.parse(pattern.encode("utf-8"))
    flags = tree.state.flags
    if not flags & re.IGNORECASE:
        return None
    names = {v: k for k, v in tree.state.groupdict.items()}
    try:
        body = _py_lowered(tree.data, names)
    except (PatternError, KeyError):
        return None
    keep = (re.MULTILINE if flags & re.MULTILINE else 0) | (re.DOTALL if flags & re.DOTALL else 0)
    try:
        return re.compile(body.encode("ascii"), keep)
    except re.error:  # pragma: no cover - a construct the printer does not know
        return None


class AnalysisMemo:
    """Remembered results of :func:`analyse` and :func:`hyperscan_pattern`.

    Analysing ~220 rule regexes with ``re``'s parser costs ~0.3 s — paid by
    every `tcg_shell` process that masks. The results depend only on the
    pattern text, the Python version and this code, so they are kept in a file
    in the cache dir, authenticated with the install's HMAC key and bound to the
    code that wrote it (tcg.cachestore): a file that fails
    the check (edited, truncated, another install's) is ignored and rebuilt, so a
    tampered memo cannot shrink a rule's width bound. Failures are never memoised.
    The body is ``marshal`` data (plain dicts, lists, strings, numbers), read only
    after its MAC verified: json's import and parse were a visible share of a
    one-repository `tcg scan`. The tag names the marshal and Python versions, so
    another interpreter's memo reads as absent.
    """

    FORMAT = 3

    def __init__(self, path: Any = None, key: bytes | None = None):
        import sys

        self.path = path
        self._key = key
        self._tag = (f"{self.FORMAT}:marshal-{marshal.version}:"
                     f"{sys.version_info[0]}.{sys.version_info[1]}")
        self._analysis: dict[str, list[int | bool]] = {}
        self._hs: dict[str, list[str | int]] = {}
        self._verified: dict[str, str] = {}
        self._rules: dict[str, Any] = {}
        self.dirty = False
        if path is not None and key is not None:
            self._load()

    def _load(self) -> None:
        from tcg.cachestore import read_cache

        assert self._key is not None
        body = read_cache(self.path, self._key, self._tag)
        if body is None:
            return
        try:
            doc = marshal.loads(body)
            analysis, hs, verified, rules = doc["analysis"], doc["hs"], doc["verified"], doc["rules"]
        except (ValueError, EOFError, KeyError, TypeError):
            return
        if all(isinstance(x, dict) for x in (analysis, hs, verified, rules)):
            self._analysis, self._hs, self._verified = analysis, hs, verified
            self._rules = rules

    @property
    def key(self) -> bytes | None:
        """The install key the memo is signed with (None: not persisted); derived
        caches (tcg.detect.derived) are signed with it too."""
        return self._key

    def analyse(self, pattern: str) -> Analysis:
        got = self._analysis.get(pattern) if isinstance(pattern, str) else None
        if isinstance(got, list) and len(got) == 4:
            return Analysis(int(got[0]), int(got[1]), int(got[2]), bool(got[3]))
        result = analyse(pattern)
        self._analysis[pattern] = [int(result.min_width), int(result.max_width), int(result.flags),
                                   bool(result.has_value_group)]
        self.dirty = True
        return result

    def hyperscan_pattern(self, pattern: str) -> tuple[bytes, int]:
        got = self._hs.get(pattern)
        if isinstance(got, list) and len(got) == 2:
            return str(got[0]).encode("latin-1"), int(got[1])
        expr, flags = hyperscan_pattern(pattern)
        self._hs[pattern] = [expr.decode("latin-1"), int(flags)]
        self.dirty = True
        return expr, flags

    def rules_for(self, name: str) -> list[Any] | None:
        """Validated rule fields (examples excluded) of the rule set ``name`` (the memo
        is bound to the code that wrote it, rule files included: tcg.cachestore)."""
        got = self._rules.get(name)
        return got if isinstance(got, list) else None

    def store_rules(self, name: str, rules: list[Any]) -> None:
        self._rules = {name: rules}  # only the current rule set is worth keeping
        self.dirty = True

    def is_verified(self, name: str, digest: str) -> bool:
        """True when the compiled database file ``name`` with this content digest
        already passed the engine's example self-check on this install."""
        return self._verified.get(name) == digest

    def mark_verified(self, name: str, digest: str) -> None:
        if self._verified.get(name) != digest:
            self._verified[name] = digest
            self.dirty = True

    def save(self) -> None:
        """Best effort: a memo that cannot be written only costs start-up time."""
        from tcg.cachestore import write_cache

        if not self.dirty or self.path is None or self._key is None:
            return
        body = marshal.dumps({"analysis": self._analysis, "hs": self._hs,
                              "verified": self._verified, "rules": self._rules})
        if write_cache(self.path, self._key, self._tag, body):
            self.dirty = False


def literal_factor(pattern: str) -> int:
    """Length of the longest literal run every match of ``pattern`` must contain
    (a run in the main sequence, or in every alternative of a group, or in a
    repeat taken at least once; 0 if there is none). hyperscan finds a rule with
    a factor of 2+ bytes through its literal matchers (cheap); one without (card
    numbers, IBAN, phone numbers: classes, counts, a lone ``+`` or ``-``) runs as
    an automaton over every byte, the costliest part of a scan (see the dense
    database in tcg.detect.engine)."""
    from tcg._lean.reparse import parser as _p

    return _factor(_p.parse(pattern.encode("utf-8")))


def _factor(seq: Any, branches: bool = False) -> int:
    """See :func:`literal_factor`. ``branches``: a group of literal alternatives
    (``p(?:assword|wd)``) continues the run by its shortest one: every match then holds
    a literal run that long, one of a few (_cut_at_gap compares such runs)."""
    best = run = 0
    for op, av in seq:
        name = str(op)
        if _literal_item(name, av):
            run += 1
            best = max(best, run)
            continue
        if branches and name == "BRANCH" and all(
                alt and all(_literal_item(str(o), a) for o, a in alt) for alt in av[1]):
            run += min(len(alt) for alt in av[1])
            best = max(best, run)
            continue
        run = 0
        if name == "SUBPATTERN":
            best = max(best, _factor(av[-1], branches))
        elif name == "BRANCH":
            best = max(best, min(_factor(alt, branches) for alt in av[1]))
        elif name in ("MAX_REPEAT", "MIN_REPEAT") and av[0] >= 1:
            best = max(best, _factor(av[2], branches))
    return best


def _literal_item(name: str, av: Any) -> bool:
    """One literal byte: a LITERAL, or a class of one literal (``[.]``)."""
    return name == "LITERAL" or (name == "IN" and len(av) == 1 and str(av[0][0]) == "LITERAL")
