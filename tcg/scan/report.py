"""Render a ScanResult as text, JSON, JSON Lines or SARIF 2.1.0.

Every format is built only from ScanFinding fields (rule id, category, path,
line, commit, keyed hash) and counts: there is no code path from a matched
value to the output.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

from tcg import __version__
from tcg.scan.engine import STATUS_PARTIAL, ScanFinding, ScanResult

FORMATS = ("text", "json", "jsonl", "sarif")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


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
    parts = [
        f"tcg scan: {result.status}",
        f"{len(result.findings)} finding(s)",
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


def render_text(result: ScanResult) -> str:
    lines = []
    multi = len(result.targets) > 1
    for f in result.findings:
        where = f"{f.target}/{f.path}" if multi else f.path
        lines.append(
            f"{where}:{f.line}:{f.column}: {f.rule_id} ({f.category}) in {_where(f)}, "
            f"{f.length} bytes, hash {f.hash}"
        )
    for err in result.errors:
        lines.append(f"tcg scan: error: {err}")
    note = partial_note(result)
    if note:
        lines.append(note)
    lines.append(summary_line(result))
    return "\n".join(lines) + "\n"


def result_dict(result: ScanResult) -> dict[str, Any]:
    return {
        "tool": "tcg",
        "version": __version__,
        **result.metadata(),
        "findings": [f.to_dict() for f in result.findings],
        "finding_count": len(result.findings),
    }


def render_json(result: ScanResult) -> str:
    return json.dumps(result_dict(result), indent=2, sort_keys=False) + "\n"


def render_jsonl(result: ScanResult) -> str:
    out = [json.dumps({"type": "finding", **f.to_dict()}, separators=(",", ":")) for f in result.findings]
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
    results = []
    for f in result.findings:
        props: dict[str, Any] = {"category": f.category, "source": f.source, "valueLength": f.length}
        if f.commit:
            props["commit"] = f.commit
        if f.blob:
            props["blob"] = f.blob
        results.append(
            {
                "ruleId": f.rule_id,
                "ruleIndex": index[f.rule_id],
                "level": "error",
                "kind": "fail",
                "message": {
                    "text": f"{f.category} found by rule {f.rule_id} in {_where(f)} (value not shown; keyed hash {f.hash})"
                },
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": quote(f.path), "uriBaseId": bases.get(f.target, "TARGET0")},
                            "region": {"startLine": f.line, "startColumn": f.column},
                        }
                    }
                ],
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
                            if result.status == STATUS_PARTIAL or not result.complete
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


def render(result: ScanResult, fmt: str) -> str:
    if fmt == "text":
        return render_text(result)
    if fmt == "json":
        return render_json(result)
    if fmt == "jsonl":
        return render_jsonl(result)
    if fmt == "sarif":
        return render_sarif(result)
    raise ValueError(f"unknown format {fmt!r}")
