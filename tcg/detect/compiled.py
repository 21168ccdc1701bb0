"""A detection rule prepared for matching (tcg.detect.engine): its keywords as bytes,
its width bounds, and the parts built on first use — the ``re`` patterns and the
validator. A one-commit scan or a masker that meets no keyword builds none of them,
so neither ``re`` nor the validators are imported there (tests/structure keeps it so).
"""

from __future__ import annotations

from tcg.detect import regex as rx

TYPE_CHECKING = False  # typing costs ~9 ms of import before the first masked byte
if TYPE_CHECKING:
    import re
    from collections.abc import Callable
    from typing import Any

    from tcg.detect.rule import Rule
    from tcg.detect.validators import Validator


class CompiledRule:
    """A rule prepared for matching. The ``re`` patterns compile on first use:
    with hyperscan most rules are never confirmed in a given process, and
    compiling all of them up front cost ~0.2 s of every `tcg_shell` start."""

    # Built on first use by __getattr__, then ordinary instance attributes.
    validator: Validator | None
    block_end: re.Pattern[bytes] | None  # the line that closes a block the rule opens (PEM keys)
    pat: re.Pattern[bytes]
    # a case-insensitive rule as a case-sensitive pattern for lowered input
    # (rx.lowered_pattern): what _confirm runs, on a lowered copy of the window
    low_pat: re.Pattern[bytes] | None
    allow_pats: tuple[re.Pattern[bytes], ...]

    def __init__(self, *, index: int, rule: Rule, width: int, min_len: int,
                 kws: tuple[bytes, ...], allow_values: frozenset[bytes], entropy: float | None):
        self.index = index
        self.rule = rule
        self.width = width
        self.min_len = min_len
        self.kws = kws
        self.allow_values = allow_values
        self.entropy = entropy

    @classmethod
    def of(cls, index: int, rule: Rule) -> CompiledRule:
        """The rule at position ``index`` of a detector's rule set."""
        return cls(index=index, rule=rule, width=rule.max_len, min_len=rule.min_len,
                   kws=tuple(k.encode("utf-8") for k in rule.keywords),
                   allow_values=frozenset(v.encode("utf-8") for v in rule.allow_values),
                   entropy=rule.entropy)

    def __getattr__(self, name: str) -> Any:
        """One of the parts above, built now and kept (Python calls this only while the
        instance lacks the attribute): what functools.cached_property does, without
        its import (functools, collections) on a scan that compiles nothing."""
        make = _RULE_PARTS.get(name)
        if make is None:
            raise AttributeError(name)
        value = self.__dict__[name] = make(self.rule)
        return value


def _validator(rule: Rule) -> Validator | None:
    """The rule's validator function. The name was checked when the rule was parsed
    (tcg.detect.rule); an unknown one raises here, and a crashed detector refuses."""
    if not rule.validator:
        return None
    from tcg.detect.validators import VALIDATORS

    return VALIDATORS[rule.validator]


_RULE_PARTS: dict[str, Callable[[Rule], Any]] = {
    "validator": _validator,
    "block_end": lambda r: rx.compile_bytes(r.block_end) if r.block_end else None,
    "pat": lambda r: rx.compile_bytes(r.regex),
    "low_pat": lambda r: rx.lowered_pattern(r.regex),
    "allow_pats": lambda r: tuple(rx.compile_bytes(p) for p in r.allow_patterns),
}
