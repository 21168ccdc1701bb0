"""Detection rules as data: parse and validate ``tcg/detect/rules/*.toml``.

Every problem is a RuleError that names the file and the rule id, raised at
load time, so a broken rule never reaches a scan (gitleaks ``Rule.Validate``).
The schema is docs/rules.md.
"""

from __future__ import annotations

import os
import sys

from tcg.detect import regex as rx
from tcg.errors import TcgError
from tcg.record import Record

# re, pathlib and the validators load where a rule file is parsed: a detector built
# from the start-up memo (rule_from_memo) needs none of them.
TYPE_CHECKING = False  # typing costs ~9 ms of import before the first masked byte
if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path
    from typing import Any

CATEGORIES = ("secret", "pii", "reference")
RESERVED_CATEGORIES = ("entity",)
_ID = r"[a-z0-9]+(?:-[a-z0-9]+)*"
_KEYS = {
    "id", "category", "description", "regex", "keywords", "entropy", "validator", "fold",
    "max_len", "allow", "examples", "block_end",
}
_ALLOW_KEYS = {"values", "patterns"}
_EXAMPLE_KEYS = {"match", "no_match"}
MIN_EXAMPLES = 2


class RuleError(TcgError):
    """A rule file is invalid. The message names the file and the rule id."""


class Rule(Record, fields="id category description regex keywords entropy validator fold max_len"
           " min_len allow_values allow_patterns examples_match examples_no_match block_end"
           " has_value_group source",
           defaults=((), None, None, False, 0, 1, (), (), (), (), None, False, "")):
    """One parsed rule (schema: docs/rules.md). ``max_len`` is in bytes, computed from the
    regex (or a larger override); ``block_end`` is the regex of the line that closes a
    block (PEM keys). A Record, not a dataclass: every `tcg scan` and `tcg mask` start
    builds the rules, and the dataclasses import alone outweighed a small scan."""

    __slots__ = ()

    id: str
    category: str
    description: str
    regex: str
    keywords: tuple[str, ...]
    entropy: float | None
    validator: str | None
    fold: bool
    max_len: int
    min_len: int
    allow_values: tuple[str, ...]
    allow_patterns: tuple[str, ...]
    examples_match: tuple[str, ...]
    examples_no_match: tuple[str, ...]
    block_end: str | None
    has_value_group: bool
    source: str

    def __repr__(self) -> str:  # examples hold fake secrets; keep reprs short and value-free
        return f"Rule(id={self.id!r}, category={self.category!r}, source={self.source!r})"


def _fail(source: str, rid: str, msg: str, hint: str | None = None) -> RuleError:
    return RuleError(f"{source}: rule {rid!r}: {msg}", hint=hint or "see docs/rules.md for the rule schema")


def _str_list(value: Any, source: str, rid: str, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(source, rid, f"{key} must be a list of strings")
    return tuple(value)


def parse_rule(raw: Any, source: str, memo: rx.AnalysisMemo | None = None) -> Rule:
    """Validate one ``[[rule]]`` table and return the Rule."""
    import re

    from tcg.detect.validators import VALIDATORS

    if not isinstance(raw, dict):
        raise RuleError(f"{source}: every [[rule]] must be a table")
    rid = raw.get("id")
    if not isinstance(rid, str) or not re.fullmatch(_ID, rid):
        raise _fail(source, str(rid), "id must be kebab-case ([a-z0-9] words joined by '-')")
    unknown = set(raw) - _KEYS
    if unknown:
        raise _fail(source, rid, f"unknown key(s) {sorted(unknown)}")
    category = raw.get("category")
    if category in RESERVED_CATEGORIES:
        raise _fail(source, rid, f"category {category!r} is reserved for a later release")
    if category not in CATEGORIES:
        raise _fail(source, rid, f"category must be one of {list(CATEGORIES)}")
    description = raw.get("description")
    if not isinstance(description, str) or not description.strip():
        raise _fail(source, rid, "description is required")
    pattern = raw.get("regex")
    try:
        analysis = (memo.analyse if memo else rx.analyse)(pattern)  # type: ignore[arg-type]
    except rx.PatternError as exc:
        raise _fail(source, rid, f"regex: {exc}") from None
    keywords = _str_list(raw.get("keywords", []), source, rid, "keywords")
    if any(not k for k in keywords):
        raise _fail(source, rid, "keywords must not be empty strings")
    entropy = raw.get("entropy")
    if entropy is not None and (isinstance(entropy, bool) or not isinstance(entropy, (int, float))
                                or not 0 <= entropy <= 8):
        raise _fail(source, rid, "entropy must be a number of bits per char between 0 and 8")
    validator = raw.get("validator")
    if validator is not None and validator not in VALIDATORS:
        raise _fail(source, rid, f"unknown validator {validator!r}",
                    hint=f"known validators: {', '.join(sorted(VALIDATORS))}")
    fold = raw.get("fold", False)
    if not isinstance(fold, bool):
        raise _fail(source, rid, "fold must be true or false")
    max_len = raw.get("max_len", 0)
    if isinstance(max_len, bool) or not isinstance(max_len, int) or max_len < 0:
        raise _fail(source, rid, "max_len must be a non-negative integer")
    if max_len and max_len < analysis.max_width:
        raise _fail(source, rid, f"max_len {max_len} is below the regex's maximum width "
                                 f"{analysis.max_width}; it may only raise the bound")
    max_len = max(max_len, analysis.max_width)
    block_end = raw.get("block_end")
    if block_end is not None:
        if not isinstance(block_end, str):
            raise _fail(source, rid, "block_end must be a regex string")
        try:
            (memo.analyse if memo else rx.analyse)(block_end)
        except rx.PatternError as exc:
            raise _fail(source, rid, f"block_end: {exc}") from None
    allow = raw.get("allow", {})
    if not isinstance(allow, dict) or set(allow) - _ALLOW_KEYS:
        raise _fail(source, rid, "allow may only hold 'values' and 'patterns'")
    allow_values = _str_list(allow.get("values", []), source, rid, "allow.values")
    allow_patterns = _str_list(allow.get("patterns", []), source, rid, "allow.patterns")
    for ap in allow_patterns:
        try:
            re.compile(ap)
        except re.error as exc:
            raise _fail(source, rid, f"allow pattern does not compile: {exc}") from None
    examples = raw.get("examples", {})
    if not isinstance(examples, dict) or set(examples) - _EXAMPLE_KEYS:
        raise _fail(source, rid, "examples may only hold 'match' and 'no_match'")
    ex_match = _str_list(examples.get("match", []), source, rid, "examples.match")
    ex_no = _str_list(examples.get("no_match", []), source, rid, "examples.no_match")
    if len(ex_match) < MIN_EXAMPLES or len(ex_no) < MIN_EXAMPLES:
        raise _fail(source, rid, f"needs at least {MIN_EXAMPLES} examples.match and "
                                 f"{MIN_EXAMPLES} examples.no_match")
    return Rule(
        id=rid, category=category, description=description.strip(), regex=pattern,  # type: ignore[arg-type]
        keywords=tuple(k.lower() for k in keywords),
        entropy=float(entropy) if entropy is not None else None, validator=validator, fold=fold,
        max_len=max_len, min_len=analysis.min_width, allow_values=allow_values,
        allow_patterns=allow_patterns, examples_match=ex_match, examples_no_match=ex_no,
        block_end=block_end, has_value_group=analysis.has_value_group, source=source,
    )


def parse_rules_text(text: str, source: str, memo: rx.AnalysisMemo | None = None) -> list[Rule]:
    """Parse one rules file's TOML text."""
    if sys.version_info >= (3, 11):  # imported here: tomllib imports typing (~9 ms)
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RuleError(f"{source}: invalid TOML: {exc}", hint="fix the TOML syntax") from None
    if set(doc) - {"rule"}:
        raise RuleError(f"{source}: only [[rule]] tables are allowed, found {sorted(set(doc) - {'rule'})}")
    raw_rules = doc.get("rule", [])
    if not isinstance(raw_rules, list):
        raise RuleError(f"{source}: 'rule' must be an array of tables ([[rule]])")
    return [parse_rule(r, source, memo) for r in raw_rules]


def check_unique(rules: Iterable[Rule]) -> list[Rule]:
    seen: dict[str, str] = {}
    out = []
    for r in rules:
        if r.id in seen:
            raise _fail(r.source, r.id, f"duplicate id (also defined in {seen[r.id]})",
                        hint="rule ids are unique across all rule files")
        seen[r.id] = r.source
        out.append(r)
    return out


def builtin_rule_files() -> list[tuple[str, str]]:
    """(file name, text) of the packaged rule files, sorted by name (that order is rule order)."""
    # Next to this module in every install we support (wheel, editable); importlib.resources
    # costs ~4 ms of imports before the first masked byte, so it is only the fallback (zip imports).
    here = os.path.join(os.path.dirname(__file__), "rules")
    if os.path.isdir(here):
        names = sorted(n for n in os.listdir(here) if n.endswith(".toml"))
        out = []
        for name in names:
            with open(os.path.join(here, name), encoding="utf-8") as fh:
                out.append((name, fh.read()))
        return out
    from importlib import resources  # pragma: no cover

    root = resources.files("tcg.detect") / "rules"
    files = sorted((p for p in root.iterdir() if p.name.endswith(".toml")), key=lambda p: p.name)
    return [(p.name, p.read_text(encoding="utf-8")) for p in files]


def load_rules(paths: Iterable[str | Path] | None = None,
               memo: rx.AnalysisMemo | None = None) -> list[Rule]:
    """Load and validate rules: the packaged files, or the given files (tests, custom sets)."""
    if paths is None:
        items = builtin_rule_files()
    else:
        from pathlib import Path

        items = [(Path(p).name, Path(p).read_text(encoding="utf-8")) for p in paths]
    rules: list[Rule] = []
    for name, text in items:
        rules.extend(parse_rules_text(text, name, memo))
    return check_unique(rules)


# ------------------------------------------------------------------ the start-up memo


_EXAMPLE_FIELDS = ("examples_match", "examples_no_match")


def rule_to_memo(rule: Rule) -> tuple[Any, ...]:
    """The rule as the start-up memo keeps it (tcg.detect.regex.AnalysisMemo): its fields
    in Rule order, a tuple (marshal keeps tuples; building a Rule from one is the
    Record's fast path, a third of what a dict per rule cost). Examples stay out: they
    are only needed to verify a hyperscan database."""
    return tuple(() if f in _EXAMPLE_FIELDS else getattr(rule, f) for f in Rule._fields)


def rule_from_memo(entry: Any) -> Rule:
    """The rule back from the memo, without its examples; ValueError/TypeError when the
    entry does not fit this version's rules. The validator's name was checked by
    parse_rule when the memo was written (the memo is signed and bound to this code,
    tcg.cachestore); the detector looks the function up on first use."""
    if type(entry) is not tuple or len(entry) != len(Rule._fields):
        raise ValueError("memo entry does not fit this version's rules")
    rule = Rule(*entry)
    if not isinstance(rule.id, str) or not isinstance(rule.regex, str) or not isinstance(rule.keywords, tuple) \
            or not (rule.validator is None or isinstance(rule.validator, str)):
        raise TypeError("memo entry does not fit this version's rules")
    return rule
