"""Render a ScanResult as text, JSON, JSON Lines or SARIF 2.1.0.

One entry per distinct secret (rule id + keyed hash) at its first location, with how
many places hold it; ``all_occurrences`` lists every place. SARIF always carries the
other places as related locations (up to SARIF_RELATED_MAX). Every format is built only
from ScanFinding fields (rule id, category, path, line, commit, keyed hash) and counts:
there is no code path from a matched value to the output.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

from tcg import __version__
from tcg.scan.findings import ScanFinding, ScanResult

TYPE_CHECKING = False  # typing costs ~7 ms of every scan's start-up
if TYPE_CHECKING:
    from typing import Any

FORMATS = ("text", "json", "jsonl", "sarif")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
# GitHub code scanning keeps at most 1,000 related locations per result
SARIF_RELATED_MAX = 1000


def _where(f: ScanFinding) -> str:
    if f.source == "history":
        return f"commit {f.commit[:12] if f.commit else '?'}"
    if f.source == "index":
        return "staged (index)"
    return "working tree" if f.source == "worktree" else "file"


def _human_bytes(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"  # pragma: no cover


def summary_line(result: ScanResult) -> str:
    s = result.stats
    n, places = len(result.findings), result.occurrence_count
    found = f"{n} secret(s)" + (f" in {places} place(s)" if places != n else "")
    parts = [
        f"tcg scan: {result.status}",
        found,
        f"{s['blobs_scanned']} blob(s) + {s['files_scanned']} file(s), {_human_bytes(s['bytes_scanned'])}"
        f" in {result.duration_s:.2f} s",
    ]
    skipped = {
        "binary": s["blobs_skipped_binary"] + s["files_skipped_binary"],
        "over size limit": s["blobs_skipped_large"] + s["files_skipped_large"],
        "allowed path": s["blobs_skipped_allowed"] + s["files_skipped_allowed"],
    }
    sk = ", ".join(f"{v} {k}" for k, v in skipped.items() if v)
    if sk:
        parts.append(f"skipped {sk}")
    sup = s["suppressed_inline"] + s["suppressed_baseline"]
    if sup:
        parts.append(f"suppressed {s['suppressed_inline']} inline + {s['suppressed_baseline']} baseline")
    line = " — ".join(parts[:2]) + "; " + "; ".join(parts[2:])
    return line


def partial_note(result: ScanResult) -> str | None:
    if result.complete:
        return None
    notes = []
    if result.budget_exceeded:
        b = result.budget
        limits = ", ".join(f"--{k.replace('_', '-')} {v}" for k, v in b.items() if v is not None)
        notes.append(f"the object budget ({limits}) was reached; the rest was not scanned")
    missing = result.stats.get("blobs_missing", 0)
    if missing:
        notes.append(f"{missing} blob(s) are not in this clone (partial clone) and were not scanned")
    return "tcg scan: PARTIAL — " + "; ".join(notes)


def _counts(f: ScanFinding) -> str:
    if f.occurrences == 1:
        return ""
    return (f" — {f.occurrences} occurrence(s) in {f.blobs} "
            f"{'blob(s)/file(s)' if f.source in ('history', 'index') else 'file(s)'}, "
            f"{f.paths} path(s)")


def _place(f: ScanFinding, multi: bool) -> str:
    where = f"{f.target}/{f.path}" if multi else f.path
    return f"{where}:{f.line}:{f.column}"


def render_text(result: ScanResult, all_occurrences: bool = False) -> str:
    lines = []
    multi = len(result.targets) > 1
    places = result.occurrences_by_key() if all_occurrences else {}
    for f in result.findings:
        lines.append(
            f"{_place(f, multi)}: {f.rule_id} ({f.category}) in {_where(f)}, "
            f"{f.length} bytes, hash {f.hash}{_counts(f)}"
        )
        for occ in places.get(f.key, [])[1:]:
            lines.append(f"    also {_place(occ, multi)} in {_where(occ)}")
    if result.findings:
        lines.append("by rule:")
        by_places = result.occurrences_by_rule()
        width = max(len(r) for r in result.counts_by_rule)
        for rule, n in result.counts_by_rule.items():
            lines.append(f"  {rule.ljust(width)}  {n} secret(s) in {by_places.get(rule, n)} place(s)")
    for err in result.errors:
        lines.append(f"tcg scan: error: {err}")
    if result.staged and result.findings:
        lines.append(f"tcg scan: the staged changes add {len(result.findings)} secret(s): do not "
                     "commit them")
        lines.append("hint: take the value out (git restore --staged FILE, or edit and `git add` "
                     "again); a false positive: add `tcg:allow` to its line, or record it with "
                     "`tcg scan --staged --write-baseline FILE` and pass `--baseline FILE` in the hook's args")
    note = partial_note(result)
    if note:
        lines.append(note)
    lines.append(summary_line(result))
    return "\n".join(lines) + "\n"


def _finding_dict(f: ScanFinding, places: dict[tuple[str, str], list[ScanFinding]] | None) -> dict[str, Any]:
    d = f.to_dict()
    if places is not None:
        d["locations"] = [o.location() for o in places.get(f.key, [])]
    return d


def result_dict(result: ScanResult, all_occurrences: bool = False) -> dict[str, Any]:
    places = result.occurrences_by_key() if all_occurrences else None
    return {
        "tool": "tcg",
        "version": __version__,
        **result.metadata(),
        "findings": [_finding_dict(f, places) for f in result.findings],
        "finding_count": len(result.findings),
    }


def render_json(result: ScanResult, all_occurrences: bool = False) -> str:
    return json.dumps(result_dict(result, all_occurrences), indent=2, sort_keys=False) + "\n"


def render_jsonl(result: ScanResult, all_occurrences: bool = False) -> str:
    places = result.occurrences_by_key() if all_occurrences else None
    out = [json.dumps({"type": "finding", **_finding_dict(f, places)}, separators=(",", ":"))
           for f in result.findings]
    out.append(json.dumps({"type": "summary", "tool": "tcg", "version": __version__, **result.metadata()}, separators=(",", ":")))
    return "\n".join(out) + "\n"


def _uri_dir(path: str) -> str:
    uri = Path(path).as_uri()
    return uri if uri.endswith("/") else uri + "/"


def sarif_dict(result: ScanResult, rule_info: dict[str, str] | None = None) -> dict[str, Any]:
    rule_info = rule_info or {}
    rule_ids = sorted({f.rule_id for f in result.findings})
    index = {r: i for i, r in enumerate(rule_ids)}
    categories = {f.rule_id: f.category for f in result.findings}
    bases = {t: f"TARGET{i}" for i, t in enumerate(result.targets)}
    rules = [
        {
            "id": r,
            "name": r,
            "shortDescription": {"text": rule_info.get(r) or f"{categories[r]} matched by rule {r}"},
            "defaultConfiguration": {"level": "error"},
            "properties": {"category": categories[r], "tags": ["security", categories[r]]},
        }
        for r in rule_ids
    ]
    places = result.occurrences_by_key()

    def physical(o: ScanFinding) -> dict[str, Any]:
        return {
            "artifactLocation": {"uri": quote(o.path), "uriBaseId": bases.get(o.target, "TARGET0")},
            "region": {"startLine": o.line, "startColumn": o.column},
        }

    results = []
    for f in result.findings:
        props: dict[str, Any] = {"category": f.category, "source": f.source, "valueLength": f.length,
                                 "occurrences": f.occurrences, "blobs": f.blobs, "paths": f.paths}
        if f.commit:
            props["commit"] = f.commit
        if f.blob:
            props["blob"] = f.blob
        others = places.get(f.key, [])[1:]
        related = [
            {"id": i + 1, "physicalLocation": physical(o),
             "message": {"text": f"also in {_where(o)}"}}
            for i, o in enumerate(others[:SARIF_RELATED_MAX])
        ]
        results.append(
            {
                "ruleId": f.rule_id,
                "ruleIndex": index[f.rule_id],
                "level": "error",
                "kind": "fail",
                "message": {
                    "text": f"{f.category} found by rule {f.rule_id} in {_where(f)} (value not shown; keyed hash {f.hash})"
                    + (f"; {f.occurrences} occurrences in {f.paths} path(s)" if f.occurrences > 1 else "")
                },
                "locations": [{"physicalLocation": physical(f)}],
                "occurrenceCount": f.occurrences,
                **({"relatedLocations": related} if related else {}),
                "partialFingerprints": {"tcgValueHash/v1": f.hash},
                "properties": props,
            }
        )
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "tcg",
                        "semanticVersion": __version__,
                        "version": __version__,
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {b: {"uri": _uri_dir(t)} for t, b in bases.items()},
                "invocations": [
                    {
                        "executionSuccessful": result.status != "error",
                        "toolExecutionNotifications": [
                            {"level": "error", "message": {"text": e}} for e in result.errors
                        ]
                        + (
                            [{"level": "warning", "message": {"text": partial_note(result) or ""}}]
                            if result.status == "partial" or not result.complete
                            else []
                        ),
                    }
                ],
                "results": results,
                "columnKind": "unicodeCodePoints",
                "properties": result.metadata(),
            }
        ],
    }


def render_sarif(result: ScanResult) -> str:
    return json.dumps(sarif_dict(result), indent=2) + "\n"


def render(result: ScanResult, fmt: str, *, all_occurrences: bool = False) -> str:
    if fmt == "text":
        return render_text(result, all_occurrences)
    if fmt == "json":
        return render_json(result, all_occurrences)
    if fmt == "jsonl":
        return render_jsonl(result, all_occurrences)
    if fmt == "sarif":
        return render_sarif(result)
    raise ValueError(f"unknown format {fmt!r}")
