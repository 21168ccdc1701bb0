"""What a scan reports: one finding per distinct secret, never a value.

A secret that lives in 600 historical versions of a test fixture is one finding, not 600:
occurrences are grouped by (rule id, keyed hash of the value), the way kingfisher and
detect-secrets report. The finding carries its first location (the oldest commit that
introduced it, else the index, else the working tree) and how many occurrences, blobs or
files and paths hold it; every occurrence stays available for ``--all-occurrences``.
"""

from __future__ import annotations

from tcg.record import Record

# Counts are plain dicts, not collections.Counter: importing collections (operator,
# keyword, reprlib behind it) is a visible share of a one-commit `tcg scan`.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

STAT_FIELDS = (
    "files_scanned",
    "files_skipped_binary",
    "files_skipped_large",
    "files_skipped_allowed",
    "blobs_scanned",
    "blobs_skipped_binary",
    "blobs_skipped_large",
    "blobs_skipped_allowed",
    "blobs_missing",
    "bytes_scanned",
    "suppressed_inline",
    "suppressed_baseline",
)


def new_stats() -> dict[str, int]:
    """A zero count for every name in STAT_FIELDS (the only names a scan counts)."""
    return dict.fromkeys(STAT_FIELDS, 0)


def add_counts(into: dict[Any, int], more: Mapping[Any, int]) -> None:
    """Add ``more``'s counts to ``into`` (what Counter.update does)."""
    for k, v in more.items():
        into[k] = into.get(k, 0) + v


class ScanFinding(Record, fields="rule_id category target path line column commit blob source hash"
                  " length occurrences blobs paths", defaults=(1, 1, 1)):
    """One distinct secret at its first location, or (in ``ScanResult.occurrences``) one
    place it was seen. Carries where and what kind — never the value (only its keyed hash).

    A Record, not a dataclass: importing dataclasses (inspect, ast, dis, tokenize) cost a
    one-repository scan more than the scan itself.

    Fields: ``rule_id``, ``category``; ``target`` (the scanned PATH as given, absolute),
    ``path`` (relative to the target), ``line`` (1-based), ``column`` (1-based, in code
    points); ``commit`` (that introduced the blob, or None for the index and disk),
    ``blob`` (object id for history/index findings), ``source`` ("history" | "index" |
    "worktree" | "file"); ``hash`` (keyed hash of the value bytes, 16 hex), ``length``
    (value length in bytes); ``occurrences`` (places this secret was seen in the scan,
    this one included), ``blobs`` (distinct blobs or files holding it), ``paths``
    (distinct paths holding it)."""

    __slots__ = ()

    rule_id: str
    category: str
    target: str
    path: str
    line: int
    column: int
    commit: str | None
    blob: str | None
    source: str
    hash: str
    length: int
    occurrences: int
    blobs: int
    paths: int

    @property
    def key(self) -> tuple[str, str]:
        """What makes a secret distinct: its rule and the keyed hash of its value."""
        return (self.rule_id, self.hash)

    def location(self) -> dict[str, Any]:
        """Where this one occurrence is (no counts)."""
        return {k: getattr(self, k) for k in ("target", "path", "line", "column", "commit",
                                                "blob", "source")}

    def to_dict(self) -> dict[str, Any]:
        return self._asdict()


class ScanResult:
    """Outcome of one scan. ``metadata()`` is the value-free summary the gate caches."""

    def __init__(self, status: str, complete: bool, history: bool, targets: list[str],
                 findings: list[ScanFinding], counts_by_rule: dict[str, int],
                 stats: dict[str, int], errors: list[str], duration_s: float,
                 policy: dict[str, str] | None, budget: dict[str, int | None],
                 budget_exceeded: bool = False, staged: bool = False,
                 occurrences: list[ScanFinding] | None = None):
        self.status = status  # clean | findings | partial | error
        #: False when a budget stopped the scan or blobs were missing (partial clone)
        self.complete = complete
        self.history = history
        self.targets = targets
        self.findings = findings  # one per distinct secret, at its first location
        self.counts_by_rule = counts_by_rule  # rule id -> distinct secrets
        self.stats = stats  # STAT_FIELDS -> count
        self.errors = errors
        self.duration_s = duration_s
        self.policy = policy
        self.budget = budget
        self.budget_exceeded = budget_exceeded
        self.staged = staged
        #: every occurrence, first ones included, in scan order (kept when the caller asks)
        self.occurrences: list[ScanFinding] = occurrences if occurrences is not None else []

    def __repr__(self) -> str:
        return (f"ScanResult(status={self.status!r}, findings={len(self.findings)}, "
                f"targets={self.targets!r})")

    @property
    def files_scanned(self) -> int:
        return self.stats.get("files_scanned", 0)

    @property
    def blobs_scanned(self) -> int:
        return self.stats.get("blobs_scanned", 0)

    @property
    def occurrence_count(self) -> int:
        return sum(f.occurrences for f in self.findings)

    def occurrences_by_rule(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for f in self.findings:
            counts[f.rule_id] = counts.get(f.rule_id, 0) + f.occurrences
        return dict(sorted(counts.items()))

    def occurrences_by_key(self) -> dict[tuple[str, str], list[ScanFinding]]:
        """Every occurrence of each distinct secret, the first location first (empty lists
        unless the scan kept its occurrences)."""
        out: dict[tuple[str, str], list[ScanFinding]] = {f.key: [] for f in self.findings}
        for occ in self.occurrences:
            if occ.key in out:
                out[occ.key].append(occ)
        return out

    def metadata(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "complete": self.complete,
            "history": self.history,
            "staged": self.staged,
            "targets": list(self.targets),
            "findings": len(self.findings),
            "occurrences": self.occurrence_count,
            "counts_by_rule": dict(self.counts_by_rule),
            "occurrences_by_rule": self.occurrences_by_rule(),
            **{k: self.stats.get(k, 0) for k in STAT_FIELDS},
            "errors": list(self.errors),
            "duration_s": round(self.duration_s, 3),
            "policy": self.policy,
            "budget": dict(self.budget),
            "budget_exceeded": self.budget_exceeded,
        }


def group_distinct(occurrences: Iterable[ScanFinding]) -> tuple[list[ScanFinding], list[ScanFinding]]:
    """(distinct findings sorted for the report, every occurrence in scan order).

    ``occurrences`` arrive in scan order (history oldest first, then the index, then the
    working tree, target by target): the first one of a secret is its first location.
    """
    first: dict[tuple[str, str], ScanFinding] = {}
    count: dict[tuple[str, str], int] = {}
    blobs: dict[tuple[str, str], set[tuple[str, str]]] = {}
    paths: dict[tuple[str, str], set[tuple[str, str]]] = {}
    kept: list[ScanFinding] = []
    for occ in occurrences:
        key = occ.key
        kept.append(occ)
        if key not in first:
            first[key] = occ
            blobs[key] = set()
            paths[key] = set()
            count[key] = 0
        count[key] += 1
        blobs[key].add((occ.target, occ.blob or f"file:{occ.path}"))
        paths[key].add((occ.target, occ.path))
    distinct = [ScanFinding(*f[:-3], count[k], len(blobs[k]), len(paths[k]))  # the counts are last
                for k, f in first.items()]
    distinct.sort(key=_report_order)
    return distinct, kept


def _report_order(f: ScanFinding) -> tuple[Any, ...]:
    return (f.target, f.path, f.line, f.column, f.rule_id, f.source, f.commit or "")
