"""The only place detection regexes are analysed and compiled.

Rules are matched on BYTES (ASCII semantics for ``\\w``, ``\\d``, ``\\s``, ``\\b``,
case-insensitivity) so that the hyperscan prefilter and the Python ``re``
confirmation agree, and so that invalid UTF-8 never breaks a scan. Every rule
must be bounded: the maximum width of the pattern (in bytes) is what the
streaming masker holds back.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from typing import Any

try:  # Python >= 3.11
    import re._constants as _c  # type: ignore[import-not-found]
    import re._parser as _p  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - Python 3.10
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import sre_constants as _c  # type: ignore[no-redef]
        import sre_parse as _p  # type: ignore[no-redef]

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
# Global inline flags a rule may use: (?i) (?m) (?s) (?x). Hyperscan knows all four.
_ALLOWED_FLAGS = re.IGNORECASE | re.MULTILINE | re.DOTALL | re.VERBOSE | re.UNICODE


class PatternError(ValueError):
    """A rule regex is unusable; the loader turns this into a RuleError naming the rule."""


@dataclass(frozen=True)
class Analysis:
    min_width: int
    max_width: int  # bytes
    flags: int  # global inline flags (re.I/re.M/re.S/re.X)
    has_value_group: bool


def _walk(seq: Any, path_ok: bool = True) -> None:
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
    try:
        re.compile(pattern)
        tree = _p.parse(pattern.encode("utf-8"))
    except (re.error, OverflowError, RecursionError) as exc:
        raise PatternError(f"regex does not compile: {exc}") from None
    flags = tree.state.flags & ~re.UNICODE
    if flags & ~_ALLOWED_FLAGS:
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
    return re.compile(pattern.encode("utf-8"))


def compile_str(pattern: str) -> re.Pattern[str]:
    """str version (ASCII classes) used by the homoglyph-folding pass."""
    return re.compile(pattern, re.ASCII)


_NAMED = re.compile(r"\(\?P<[A-Za-z_][A-Za-z0-9_]*>")
_OMITTED_MIN = re.compile(r"(?<!\\)\{,(\d+)\}")


def hyperscan_pattern(pattern: str) -> tuple[bytes, int]:
    """(expression, extra flags) for hyperscan: named groups become non-capturing
    and leading inline flags become hyperscan flags."""
    import hyperscan

    flags = 0
    m = re.match(r"\(\?([imsx]+)\)", pattern)
    body = pattern
    if m:
        body = pattern[m.end():]
        letters = m.group(1)
        if "i" in letters:
            flags |= hyperscan.HS_FLAG_CASELESS
        if "m" in letters:
            flags |= hyperscan.HS_FLAG_MULTILINE
        if "s" in letters:
            flags |= hyperscan.HS_FLAG_DOTALL
        if "x" in letters:
            body = "(?x)" + body
    body = _NAMED.sub("(?:", body)
    body = _OMITTED_MIN.sub(r"{0,\1}", body)  # Python's {,n}; PCRE reads it literally
    return body.encode("utf-8"), flags
