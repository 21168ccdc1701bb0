"""What a scan reports: one finding per distinct secret, never a value.

A secret that lives in 600 historical versions of a test fixture is one finding, not 600:
occurrences are grouped by (rule id, keyed hash of the value), the way kingfisher and
detect-secrets report. The finding carries its first location (the oldest commit that
introduced it, else the index, else the working tree) and how many occurrences, blobs or
files and paths hold it; every occurrence stays available for ``--all-occurrences``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace

TYPE_CHECKING = False
if TYPE_CHECKING:
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


@dataclass(frozen=True)
class ScanFinding:
    """One distinct secret at its first location, or (in ``ScanResult.occurrences``) one
    place it was seen. Carries where and what kind — never the value (only its keyed hash)."""

    rule_id: str
    category: str
    target: str  # the scanned PATH as given (absolute)
    path: str  # file path relative to the target
    line: int  # 1-based
    column: int  # 1-based, in Unicode code points
    commit: str | None  # commit that introduced the blob (history) or None (index, disk)
    blob: str | None  # object id for history/index findings
    source: str  # "history" | "index" | "worktree" | "file"
    hash: str  # keyed hash of the value bytes (per-install key), 16 hex
    length: int  # value length in bytes
    occurrences: int = 1  # places this secret was seen in the scan (this one included)
    blobs: int = 1  # distinct blobs or files holding it
    paths: int = 1  # distinct paths holding it

    @property
    def key(self) -> tuple[str, str]:
        """What makes a secret distinct: its rule and the keyed hash of its value."""
        return (self.rule_id, self.hash)

    def location(self) -> dict[str, Any]:
        """Where this one occurrence is (no counts)."""
        return {k: getattr(self, k) for k in ("target", "path", "line", "column", "commit",
                                                "blob", "source")}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ScanResult:
    """Outcome of one scan. ``metadata()`` is the value-free summary the gate caches."""

    status: str  # clean | findings | partial | error
    complete: bool  # False when a budget stopped the scan or blobs were missing (partial clone)
    history: bool
    targets: list[str]
    findings: list[ScanFinding]  # one per distinct secret, at its first location
    counts_by_rule: dict[str, int]  # rule id -> distinct secrets
    stats: dict[str, int]  # STAT_FIELDS -> count
    errors: list[str]
    duration_s: float
    policy: dict[str, str] | None
    budget: dict[str, int | None]
    budget_exceeded: bool = False
    staged: bool = False
    #: every occurrence, first ones included, in scan order (kept when the caller asks)
    occurrences: list[ScanFinding] = field(default_factory=list)

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
        counts: Counter[str] = Counter()
        for f in self.findings:
            counts[f.rule_id] += f.occurrences
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
    count: Counter[tuple[str, str]] = Counter()
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
        count[key] += 1
        blobs[key].add((occ.target, occ.blob or f"file:{occ.path}"))
        paths[key].add((occ.target, occ.path))
    distinct = [replace(f, occurrences=count[k], blobs=len(blobs[k]), paths=len(paths[k]))
                for k, f in first.items()]
    distinct.sort(key=_report_order)
    return distinct, kept


def _report_order(f: ScanFinding) -> tuple[Any, ...]:
    return (f.target, f.path, f.line, f.column, f.rule_id, f.source, f.commit or "")
