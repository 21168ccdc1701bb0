"""Inbound rules as data: parse and validate ``tcg/inbound/rules/*.toml``.

A rule is a phrase pattern of one family in one language. Patterns are Python
``re`` syntax over text (Unicode ``\\w``, ``\\b``, case-insensitive), with a few
macros for what the rule files repeat (``{ap}`` the Uzbek apostrophe forms,
``{w3}`` up to three words in between). Every problem is an InboundRuleError
naming the file and the rule id, raised at load. The schema is docs/inbound.md.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tcg.errors import TcgError
from tcg.inbound.prefilter import prefilter_of

try:  # Python >= 3.11
    import re._constants as _c  # type: ignore[import-not-found]
    import re._parser as _p  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - Python 3.10
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import sre_constants as _c  # type: ignore[no-redef]
        import sre_parse as _p  # type: ignore[no-redef]

FAMILIES = (
    "instruction-override", "role-marker", "persona-swap", "task-redefinition",
    "exfiltration", "execute-linked", "hide-from-owner", "markdown-exfiltration",
)
LANGUAGES = ("en", "ru", "uz", "de", "fr", "es", "it", "any")
MAX_WIDTH = 1500  # characters; the confirmation window around a prefilter hit
LOOKAROUND_MAX = 8  # characters a lookaround may inspect (the window's margin)
FLAGS = re.IGNORECASE
_ID = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_KEYS = {"id", "family", "language", "description", "regex", "allow", "examples"}
_EXAMPLE_KEYS = {"match", "no_match"}

# Uzbek writes o' and g' with any of these (the standard is U+02BB).
_APOSTROPHES = "'\u02bb\u02bc\u2019\u2018`\u00b4"
_SEP = r"[\s,;:«»\"“”()\-]"
MACROS = {
    "ap": "[" + re.escape(_APOSTROPHES) + "]",
    "apc": re.escape(_APOSTROPHES),  # the same characters, for use inside a class
    # "{wN}": a word break, then up to N more words, then a word break
    **{f"w{n}": rf"(?:{_SEP}{{1,4}}[^\s,;:.!?]{{1,30}}){{0,{n}}}{_SEP}{{1,4}}" for n in range(1, 9)},
}
_MACRO = re.compile(r"\{(" + "|".join(sorted(MACROS, key=len, reverse=True)) + r")\}")


class InboundRuleError(TcgError):
    """An inbound rule file is invalid. The message names the file and the rule id."""


@dataclass(frozen=True)
class InboundRule:
    id: str
    family: str
    language: str
    description: str
    regex: str  # macros expanded
    source_regex: str
    allow: tuple[str, ...] = ()
    examples_match: tuple[str, ...] = ()
    examples_no_match: tuple[str, ...] = ()
    max_width: int = 0
    #: per alternative: one or two literal sets (the second follows the first) that
    #: every match of that alternative contains; () = no prefilter (tcg.inbound.prefilter)
    prefilter: tuple[tuple[tuple[str, ...], ...], ...] = ()
    #: per alternative: most characters from the end of a first-set literal to the end
    #: of a second-set literal (0 when the alternative has one set)
    prefilter_reach: tuple[int, ...] = ()
    #: (before, after): a match starts at most ``before`` characters before the end of
    #: the last prefilter literal of its alternative and ends at most ``after`` after it
    prefilter_span: tuple[int, int] = (0, 0)
    #: the pattern and its allow patterns compiled with ``re.ASCII`` match exactly as
    #: they do without it on a text of ASCII characters outside U+001C..U+001F
    #: (:func:`ascii_equivalent`)
    ascii_safe: bool = False
    source: str = ""

    def __repr__(self) -> str:
        return f"InboundRule(id={self.id!r}, family={self.family!r}, language={self.language!r})"

    def record(self) -> dict[str, Any]:
        """The rule as JSON-ready data (:func:`rule_from_record` reads it back): what the
        engine keeps in its signed start-up cache so that a process does not parse and
        analyse every pattern again."""
        return {f: getattr(self, f) for f in _RECORD_FIELDS}


_RECORD_FIELDS = tuple(InboundRule.__dataclass_fields__)


def _tuples(value: Any) -> Any:
    """JSON lists back to the nested tuples the rule fields hold."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def rule_from_record(record: dict[str, Any]) -> InboundRule:
    """An :class:`InboundRule` from :meth:`InboundRule.record` output. The record was
    validated when it was made (it comes from a cache signed with the install key);
    a record of another shape raises KeyError or TypeError."""
    if set(record) != set(_RECORD_FIELDS):
        raise KeyError("inbound rule record fields differ")
    return InboundRule(**{f: _tuples(record[f]) for f in _RECORD_FIELDS})


def expand(pattern: str) -> str:
    """Replace the ``{name}`` macros; a literal ``{`` that is not a macro stays."""
    return _MACRO.sub(lambda m: MACROS[m.group(1)], pattern)


def _fail(source: str, rid: str, msg: str) -> InboundRuleError:
    return InboundRuleError(f"{source}: inbound rule {rid!r}: {msg}",
                            hint="see docs/inbound.md for the rule schema")


def _lookaround_width(seq: Any) -> int:
    """Widest lookaround body in a parsed pattern (0 when there is none)."""
    widest = 0
    for op, av in seq:
        name = str(op)
        if name in ("ASSERT", "ASSERT_NOT"):
            widest = max(widest, av[1].getwidth()[1], _lookaround_width(av[1]))
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            widest = max(widest, _lookaround_width(av[2]))
        elif name in ("SUBPATTERN", "ATOMIC_GROUP"):
            widest = max(widest, _lookaround_width(av[-1]))
        elif name == "BRANCH":
            widest = max([widest] + [_lookaround_width(alt) for alt in av[1]])
    return widest


_REPEATS = ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")
#: pattern elements that read no character, or only through the categories (\w, \s,
#: \d, \b), which agree on ASCII characters with and without re.ASCII (but for \s
#: on U+001C..U+001F: the text side excludes those)
_NEUTRAL = ("ANY", "AT", "CATEGORY", "GROUPREF", "GROUPREF_IGNORE")


def _folds_to_ascii(items: list[tuple[int, int]]) -> bool:
    """Whether a character of the ranges ``items`` (none ASCII) matches an ASCII
    character under Python's case-insensitive Unicode matching (U+212A KELVIN SIGN
    matches "k", U+017F LONG S "s", U+0131 DOTLESS I "i"): asked of ``re`` itself,
    with one class of them all (a class matches what one of its items matches)."""
    cls = re.compile("[" + "".join(f"{re.escape(chr(lo))}-{re.escape(chr(hi))}" for lo, hi in items) + "]",
                     FLAGS)
    return any(cls.match(chr(a)) for a in range(128))


def _wide_items(seq: Any, out: list[tuple[int, int]]) -> bool:
    """Add to ``out`` the characters (as ranges) above ASCII that the pattern's
    literals and classes hold, negated ones too; False for an element this does not
    know (then the pattern is not ascii-equivalent)."""
    for op, av in seq:
        name = str(op)
        if name in ("LITERAL", "NOT_LITERAL"):
            if av > 127:
                out.append((av, av))
        elif name == "IN":
            for iop, iav in av:
                iname = str(iop)
                if iname == "LITERAL" and iav > 127:
                    out.append((iav, iav))
                elif iname == "RANGE" and iav[1] > 127:
                    out.append((max(iav[0], 128), iav[1]))
                elif iname not in ("LITERAL", "RANGE", "NEGATE", "CATEGORY"):
                    return False
        elif name in _REPEATS or name in ("ASSERT", "ASSERT_NOT"):
            if not _wide_items(av[-1] if name in _REPEATS else av[1], out):
                return False
        elif name == "SUBPATTERN":
            if not _wide_items(av[-1], out):
                return False
        elif name == "ATOMIC_GROUP":
            if not _wide_items(av, out):
                return False
        elif name == "BRANCH":
            if not all(_wide_items(alt, out) for alt in av[1]):
                return False
        elif name not in _NEUTRAL:
            return False
    return True


def ascii_equivalent(seq: Any) -> bool:
    """Whether a parsed pattern (FLAGS) compiled with ``re.ASCII`` matches exactly
    where it does without it, on any text of ASCII characters outside U+001C..U+001F.
    There the categories agree, and ASCII case folding equals Unicode's for ASCII
    letters; only a non-ASCII character of the pattern that folds to an ASCII one
    could tell the two apart (then False, as for an element this does not know)."""
    items: list[tuple[int, int]] = []
    return _wide_items(seq, items) and not (items and _folds_to_ascii(items))


def parse_rule(raw: Any, source: str) -> InboundRule:
    if not isinstance(raw, dict):
        raise InboundRuleError(f"{source}: every [[rule]] must be a table")
    rid = raw.get("id")
    if not isinstance(rid, str) or not _ID.fullmatch(rid):
        raise _fail(source, str(rid), "id must be kebab-case ([a-z0-9] words joined by '-')")
    unknown = set(raw) - _KEYS
    if unknown:
        raise _fail(source, rid, f"unknown key(s) {sorted(unknown)}")
    family = raw.get("family")
    if family not in FAMILIES:
        raise _fail(source, rid, f"family must be one of {list(FAMILIES)}")
    language = raw.get("language")
    if language not in LANGUAGES:
        raise _fail(source, rid, f"language must be one of {list(LANGUAGES)}")
    description = raw.get("description")
    if not isinstance(description, str) or not description.strip():
        raise _fail(source, rid, "description is required")
    src = raw.get("regex")
    if not isinstance(src, str) or not src.strip():
        raise _fail(source, rid, "regex must be a non-empty string")
    pattern = expand(src)
    try:
        compiled = re.compile(pattern, FLAGS)
        tree = _p.parse(pattern, FLAGS)
    except (re.error, OverflowError, RecursionError) as exc:
        raise _fail(source, rid, f"regex does not compile: {exc}") from None
    lo, hi = tree.getwidth()
    if hi >= _c.MAXREPEAT or hi > MAX_WIDTH:
        raise _fail(source, rid, f"regex must be bounded (at most {MAX_WIDTH} characters); "
                                 "use {m,n} instead of *, + and {n,}")
    if lo == 0:
        raise _fail(source, rid, "regex can match the empty string")
    if _lookaround_width(tree.data) > LOOKAROUND_MAX:
        raise _fail(source, rid, f"a lookaround may inspect at most {LOOKAROUND_MAX} characters")
    if compiled.groups and "(?P<" in pattern:
        raise _fail(source, rid, "named groups are not used by inbound rules")
    allow = raw.get("allow", [])
    if not isinstance(allow, list) or not all(isinstance(a, str) and a for a in allow):
        raise _fail(source, rid, "allow must be a list of regex strings")
    for a in allow:
        try:
            re.compile(a, FLAGS)
        except re.error as exc:
            raise _fail(source, rid, f"allow pattern does not compile: {exc}") from None
    examples = raw.get("examples", {})
    if not isinstance(examples, dict) or set(examples) - _EXAMPLE_KEYS:
        raise _fail(source, rid, "examples may only hold 'match' and 'no_match'")
    ex_match, ex_no = examples.get("match", []), examples.get("no_match", [])
    for key, value in (("match", ex_match), ("no_match", ex_no)):
        if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
            raise _fail(source, rid, f"examples.{key} must be a non-empty list of strings")
    prefilter, reach, span = prefilter_of(tree)
    ascii_safe = ascii_equivalent(tree.data) and all(ascii_equivalent(_p.parse(a, FLAGS).data) for a in allow)
    return InboundRule(
        id=rid, family=family, language=language, description=description.strip(),
        regex=pattern, source_regex=src, allow=tuple(allow), examples_match=tuple(ex_match),
        examples_no_match=tuple(ex_no), max_width=hi, prefilter=prefilter,
        prefilter_reach=reach, prefilter_span=span, ascii_safe=ascii_safe, source=source,
    )


def parse_rules_text(text: str, source: str) -> list[InboundRule]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InboundRuleError(f"{source}: invalid TOML: {exc}", hint="fix the TOML syntax") from None
    if set(doc) - {"rule"}:
        raise InboundRuleError(f"{source}: only [[rule]] tables are allowed")
    raw_rules = doc.get("rule", [])
    if not isinstance(raw_rules, list):
        raise InboundRuleError(f"{source}: 'rule' must be an array of tables ([[rule]])")
    return [parse_rule(r, source) for r in raw_rules]


def builtin_rule_files() -> list[tuple[str, str]]:
    """(file name, text) of the packaged rule files, sorted by name."""
    here = os.path.join(os.path.dirname(__file__), "rules")
    out = []
    for name in sorted(n for n in os.listdir(here) if n.endswith(".toml")):
        with open(os.path.join(here, name), encoding="utf-8") as fh:
            out.append((name, fh.read()))
    return out


def load_rules(paths: list[str | Path] | None = None) -> list[InboundRule]:
    """The packaged rules (or the given files), validated, ids unique across files."""
    items = builtin_rule_files() if paths is None else [
        (Path(p).name, Path(p).read_text(encoding="utf-8")) for p in paths]
    rules: list[InboundRule] = []
    seen: dict[str, str] = {}
    for name, text in items:
        for rule in parse_rules_text(text, name):
            if rule.id in seen:
                raise _fail(name, rule.id, f"duplicate id (also defined in {seen[rule.id]})")
            seen[rule.id] = name
            rules.append(rule)
    return rules
