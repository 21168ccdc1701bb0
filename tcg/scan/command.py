"""`tcg scan` without click: the work of the command, and its one argument parser.

Pre-commit hooks, CI and the launch gate start `tcg scan` once per repository, so its
start-up is paid on every call: tcg/router.py calls :func:`scan_main`, which parses
the arguments here without importing click (a bad option is a UsageError, exit 2).
The click command in tcg/cli/scan.py only renders ``--help`` from the same options.

Exit codes (docs/cli.md): 0 clean, 1 findings, 2 error, 3 partial (a budget stopped the
scan and nothing was found in the part scanned). Findings win over partial (exit 1, and
the output says the scan was partial); an error wins over both (exit 2, findings found so
far are still printed).
"""

from __future__ import annotations

import os
import sys

from tcg.errors import ExitCode, TcgError, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

# Named after tcg.errors.ExitCode, the one source of exit codes (docs/cli.md).
EXIT_CLEAN = ExitCode.OK
EXIT_FINDINGS = ExitCode.FINDINGS
EXIT_ERROR = ExitCode.INTERNAL
EXIT_PARTIAL = ExitCode.PARTIAL

FORMATS = ("text", "json", "jsonl", "sarif")
BASELINE_KIND = "tcg-scan-baseline"
# option -> keyword of run(); "flag" options take no value
_VALUE_OPTS = {"--format": "fmt", "--max-objects": "max_objects", "--max-bytes": "max_bytes",
               "--baseline": "baseline_file", "--write-baseline": "write_file", "--jobs": "jobs",
               "-j": "jobs"}
_FLAG_OPTS = {"--history": ("history", True), "--no-history": ("history", False),
              "--staged": ("staged", True), "--all-occurrences": ("all_occurrences", True)}
_INT_OPTS = ("max_objects", "max_bytes", "jobs")
USAGE_HINT = "see `tcg scan --help`"


class BaselineError(TcgError):
    exit_code = EXIT_ERROR


def parse_args(args: list[str]) -> dict[str, Any]:
    """Keyword arguments of :func:`run` for `tcg scan …`: the verb's one grammar (the
    click command only renders --help from it; tcg/router.py). A bad option raises
    UsageError (exit 2). Targets stay strings (the scanner works with os.path);
    pathlib is imported only for a baseline file."""
    opts: dict[str, Any] = {"paths": [], "history": True, "staged": False, "fmt": "text",
                            "max_objects": None, "max_bytes": None, "baseline_file": None,
                            "write_file": None, "jobs": None, "all_occurrences": False}
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            opts["paths"].extend(args[i + 1:])
            break
        name, eq, inline = a.partition("=")
        if a.startswith("-j") and len(a) > 2 and not eq:
            name, eq, inline = "-j", "=", a[2:]  # -jN, as click reads it
        if a in _FLAG_OPTS:
            key, flag = _FLAG_OPTS[a]
            opts[key] = flag
        elif name in _VALUE_OPTS:
            if not eq and i + 1 >= len(args):
                raise UsageError(f"option {name} requires an argument", hint=USAGE_HINT)
            value = inline if eq else args[i + 1]
            i += 0 if eq else 1
            key = _VALUE_OPTS[name]
            if key in _INT_OPTS:
                if not value.isdigit() or int(value) < 1:
                    raise UsageError(f"option {name}: {value!r} is not a whole number >= 1", hint=USAGE_HINT)
                opts[key] = int(value)
            elif key == "fmt":
                if value not in FORMATS:
                    raise UsageError(f"option --format: {value!r} is not one of {', '.join(FORMATS)}",
                                     hint=USAGE_HINT)
                opts[key] = value
            else:
                from pathlib import Path

                opts[key] = Path(value)
        elif a.startswith("-") and a != "-":
            raise UsageError(f"no such option: {name}", hint=USAGE_HINT)
        else:
            opts["paths"].append(a)
        i += 1
    return opts


def scan_main(args: list[str]) -> int:
    """`tcg scan …` (tcg/router.py): parse with the one grammar, then scan."""
    opts = parse_args(args)
    return run(opts.pop("paths"), **opts)


def load_baseline(path: Path) -> set[tuple[str, str]]:
    """Known findings as (rule_id, keyed hash) pairs."""
    import json  # here, not at the top: its import is a visible share of a small scan

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
    import json

    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def exit_code_for(status: str) -> int:
    return {"clean": EXIT_CLEAN, "findings": EXIT_FINDINGS, "partial": EXIT_PARTIAL}.get(status, EXIT_ERROR)


def run(paths: list[str | os.PathLike[str]] | tuple[str | os.PathLike[str], ...], *, history: bool = True, staged: bool = False,
        fmt: str = "text", max_objects: int | None = None, max_bytes: int | None = None,
        baseline_file: Path | None = None, write_file: Path | None = None,
        jobs: int | None = None, all_occurrences: bool = False) -> int:
    """Scan, print the report to stdout (one-line verdicts of machine formats to stderr),
    record the ``scan_completed`` event, and return the exit code. Every failure is exit 2:
    exit 1 means "findings" here."""
    try:
        return _run(list(paths), history, staged, fmt, max_objects, max_bytes, baseline_file,
                    write_file, jobs, all_occurrences)
    except TcgError as exc:
        exc.exit_code = EXIT_ERROR
        raise


def _run(paths: list[str | os.PathLike[str]], history: bool, staged: bool, fmt: str, max_objects: int | None,
         max_bytes: int | None, baseline_file: Path | None, write_file: Path | None,
         jobs: int | None, all_occurrences: bool) -> int:
    from tcg.events import EventLog, actor_from_env
    from tcg.policy.load import load_policy
    from tcg.scan.engine import scan_paths
    from tcg.scan.progress import Progress
    from tcg.scan.report import partial_note, render

    targets = list(paths) or [os.getcwd()]
    policy = load_policy(cwd=targets[0] if len(targets) == 1 and os.path.isdir(targets[0]) else None)
    known = load_baseline(baseline_file) if baseline_file is not None else set()
    progress = Progress(enabled=sys.stderr.isatty())
    try:
        result = scan_paths(
            targets,
            policy,
            history=history,
            staged=staged,
            max_objects=max_objects,
            max_bytes=max_bytes,
            jobs=jobs,
            baseline=known,
            progress=progress,
            keep_occurrences=all_occurrences or fmt == "sarif",
        )
    finally:
        progress.done()
    if write_file is not None:
        try:
            write_baseline(write_file, result.findings, known)
        except OSError as exc:
            raise UsageError(f"cannot write baseline {write_file}: {exc.strerror}") from None
    _write(render(result, fmt, all_occurrences=all_occurrences), sys.stdout)
    if fmt != "text":
        # Machine formats own stdout; the one-line verdict still goes to the human.
        note = partial_note(result)
        if note:
            _write(note + "\n", sys.stderr)
        for err in result.errors:
            _write(f"tcg scan: error: {err}\n", sys.stderr)
    EventLog().emit(
        "scan_completed",
        surface="scan",
        actor=actor_from_env(os.environ),
        decision=None,
        reason=None,
        rules=list(result.counts_by_rule),
        policy=policy.ref(),
        status=result.status,
        complete=result.complete,
        history=result.history,
        staged=staged,
        targets=len(result.targets),
        findings=len(result.findings),
        occurrences=result.occurrence_count,
        counts_by_rule=result.counts_by_rule,
        stats=result.stats,
        errors=len(result.errors),
        duration_ms=int(result.duration_s * 1000),
    )
    return exit_code_for(result.status)


def _write(text: str, stream: Any) -> None:
    stream.write(text)
    stream.flush()
