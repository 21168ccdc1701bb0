"""`tcg scan`: find secrets in repositories (working tree + full history) and directories.

Exit codes (docs/cli.md): 0 clean, 1 findings, 2 error, 3 partial (a budget
stopped the scan and nothing was found in the part scanned). Findings win over
partial (exit 1, and the output says the scan was partial); an error wins over
both (exit 2, findings found so far are still printed).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click

from tcg.errors import TcgError, UsageError
from tcg.scan.progress import Progress

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2
EXIT_PARTIAL = 3

BASELINE_KIND = "tcg-scan-baseline"


class BaselineError(TcgError):
    exit_code = EXIT_ERROR


def load_baseline(path: Path) -> set[tuple[str, str]]:
    """Known findings as (rule_id, keyed hash) pairs."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BaselineError(f"baseline file {path} not found", hint="create one with --write-baseline") from None
    except (OSError, ValueError) as exc:
        raise BaselineError(
            f"cannot read baseline file {path}: {exc}",
            hint="regenerate it with `tcg scan --write-baseline FILE`",
        ) from None
    if not isinstance(doc, dict) or doc.get("kind") != BASELINE_KIND or not isinstance(doc.get("findings"), list):
        raise BaselineError(
            f"{path} is not a tcg scan baseline",
            hint="regenerate it with `tcg scan --write-baseline FILE`",
        )
    known = set()
    for entry in doc["findings"]:
        if isinstance(entry, dict) and isinstance(entry.get("rule_id"), str) and isinstance(entry.get("hash"), str):
            known.add((entry["rule_id"], entry["hash"]))
    return known


def write_baseline(path: Path, findings: list[Any], known: set[tuple[str, str]]) -> None:
    entries: dict[tuple[str, str], dict[str, Any]] = {
        k: {"rule_id": k[0], "hash": k[1]} for k in sorted(known)
    }
    for f in findings:
        entries.setdefault((f.rule_id, f.hash), {"rule_id": f.rule_id, "hash": f.hash, "path": f.path, "line": f.line})
    doc = {
        "kind": BASELINE_KIND,
        "version": 1,
        "note": "keyed hashes (per-install key): valid only on the install that wrote it",
        "findings": [entries[k] for k in sorted(entries)],
    }
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def exit_code_for(status: str) -> int:
    return {"clean": EXIT_CLEAN, "findings": EXIT_FINDINGS, "partial": EXIT_PARTIAL}.get(status, EXIT_ERROR)


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--history/--no-history", default=True, show_default=True,
              help="Also scan every blob reachable from every ref (repositories only).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "jsonl", "sarif"]), default="text",
              show_default=True, help="Output format (stdout).")
@click.option("--max-objects", type=click.IntRange(min=1), metavar="N",
              help="Stop after N blobs/files; the scan is then 'partial'.")
@click.option("--max-bytes", type=click.IntRange(min=1), metavar="N",
              help="Stop after N bytes of content; the scan is then 'partial'.")
@click.option("--baseline", "baseline_file", type=click.Path(path_type=Path), metavar="FILE",
              help="Ignore findings listed in FILE (rule id + keyed hash).")
@click.option("--write-baseline", "write_file", type=click.Path(path_type=Path), metavar="FILE",
              help="Write all current findings (plus --baseline's) to FILE as a baseline.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), metavar="N", help="Worker processes (default: all cores).")
def scan(
    paths: tuple[Path, ...],
    history: bool,
    fmt: str,
    max_objects: int | None,
    max_bytes: int | None,
    baseline_file: Path | None,
    write_file: Path | None,
    jobs: int | None,
) -> int:
    """Scan repositories (working tree + full history) and directories for secrets.

    Reports rule, path, line, commit and a keyed hash — never a value.
    Exit: 0 clean, 1 findings, 2 error, 3 partial without findings.
    """
    try:
        return _scan(paths, history, fmt, max_objects, max_bytes, baseline_file, write_file, jobs)
    except TcgError as exc:
        # Exit 1 means "findings" here: every failure (policy, rules, baseline) is 2.
        exc.exit_code = EXIT_ERROR
        raise


def _scan(
    paths: tuple[Path, ...],
    history: bool,
    fmt: str,
    max_objects: int | None,
    max_bytes: int | None,
    baseline_file: Path | None,
    write_file: Path | None,
    jobs: int | None,
) -> int:
    from tcg.events import EventLog
    from tcg.policy.load import load_policy
    from tcg.scan.engine import scan_paths
    from tcg.scan.report import render

    targets = list(paths) or [Path.cwd()]
    policy = load_policy(cwd=targets[0] if len(targets) == 1 and targets[0].is_dir() else None)
    known = load_baseline(baseline_file) if baseline_file is not None else set()
    progress = Progress(enabled=sys.stderr.isatty())
    try:
        result = scan_paths(
            targets,
            policy,
            history=history,
            max_objects=max_objects,
            max_bytes=max_bytes,
            jobs=jobs,
            baseline=known,
            progress=progress,
        )
    finally:
        progress.done()
    if write_file is not None:
        try:
            write_baseline(write_file, result.findings, known)
        except OSError as exc:
            raise UsageError(f"cannot write baseline {write_file}: {exc.strerror}") from None
    click.echo(render(result, fmt), nl=False)
    if fmt != "text":
        # Machine formats own stdout; the one-line verdict still goes to the human.
        from tcg.scan.report import partial_note

        note = partial_note(result)
        if note:
            click.echo(note, err=True)
        for err in result.errors:
            click.echo(f"tcg scan: error: {err}", err=True)
    EventLog().emit(
        "scan_completed",
        surface="scan",
        actor="agent" if os.environ.get("TCG_ACTOR") == "agent" else "human",
        decision=None,
        reason=None,
        rules=list(result.counts_by_rule),
        policy=policy.ref(),
        status=result.status,
        complete=result.complete,
        history=history,
        targets=len(result.targets),
        findings=len(result.findings),
        counts_by_rule=result.counts_by_rule,
        stats=result.stats,
        errors=len(result.errors),
        duration_ms=int(result.duration_s * 1000),
    )
    return exit_code_for(result.status)
