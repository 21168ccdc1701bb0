"""The package's shape: no import cycles between packages, small modules, a lean hot path.

The graph is read statically (tests/structure/imports.py), lazy imports inside
functions included: a function-level import is still a dependency, it only moves
its cost. The ledgers below hold what is known and not yet paid down; each test
fails when something new appears AND when a ledger entry is no longer true, so
the ledgers only shrink.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.structure.imports import PACKAGE, cycles, graph, modules

MAX_LINES = 600
# The masker's bound proof stays in one piece (its argument reads top to bottom).
EXEMPT = {"tcg/mask/strict_bound.py"}
# Modules over the budget today, with the ceiling they must not grow past.
OVERSIZE = {
}

# Package-level cycles today (each a set of packages importing each other in a ring).
KNOWN_PACKAGE_CYCLES = [
]


def _lines(path) -> int:
    with open(path, encoding="utf-8") as f:
        return sum(1 for _ in f)


def _package(module: str) -> str:
    """``tcg.policy.load`` -> ``tcg.policy``; the top-level modules (errors, events,
    paths, record …) are the core, one node."""
    parts = module.split(".")
    if parts[:2] == ["tcg", "_lean"]:
        return "tcg"  # the private-module shims sit at the bottom, below the core itself
    if len(parts) == 2 and not (PACKAGE / parts[1]).is_dir() and module != "tcg.__main__":
        return "tcg"
    return ".".join(parts[:2])


def _package_edges() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for mod, deps in graph().items():
        src = _package(mod)
        edges.setdefault(src, set())
        edges[src].update(_package(d) for d in deps if _package(d) != src)
    return edges


def _package_cycles() -> list[set[str]]:
    return [set(c) for c in cycles(_package_edges())]


def test_no_new_cycle_between_packages():
    found = _package_cycles()
    for comp in found:
        assert any(comp <= known for known in KNOWN_PACKAGE_CYCLES), (
            f"a new import cycle between packages: {sorted(comp)}"
        )
    for known in KNOWN_PACKAGE_CYCLES:
        assert any(known == comp for comp in found), (
            f"the cycle {sorted(known)} shrank or is gone: update KNOWN_PACKAGE_CYCLES"
        )


@pytest.mark.parametrize("package", ["tcg.launcher", "tcg.policy", "tcg.decide", "tcg.detect", "tcg.cli"])
def test_no_cycle_within_package(package):
    sub = {m: {d for d in deps if d.startswith(package + ".")}
           for m, deps in graph().items() if m.startswith(package + ".")}
    assert cycles(sub) == []


def test_core_does_not_import_the_surfaces():
    """The core modules (errors, events, paths, record …) sit below every package."""
    for mod, deps in graph().items():
        if _package(mod) == "tcg" and mod != "tcg":
            above = sorted(d for d in deps if _package(d) != "tcg")
            assert above == [], f"{mod} imports {above}: the core sits below the packages"


def test_module_size_budget():
    over = {}
    for path in modules().values():
        rel = path.relative_to(PACKAGE.parent).as_posix()
        n = _lines(path)
        if rel in EXEMPT:
            continue
        if rel in OVERSIZE:
            assert n <= OVERSIZE[rel], f"{rel} grew to {n} lines (ceiling {OVERSIZE[rel]}): split it"
            assert n > MAX_LINES, f"{rel} is {n} lines now: drop it from OVERSIZE"
        elif n > MAX_LINES:
            over[rel] = n
    assert over == {}, f"modules over {MAX_LINES} lines (give each one job): {over}"



# ------------------------------------------------------------------ the lean path
# Private CPython modules (C accelerators, re's parser) are imported only by tcg._lean,
# whose docstring holds what each saves. Modules that still import one themselves,
# with the reason they are not moved yet (the list only shrinks):
PRIVATE_IMPORT_LEDGER = {
    # owned by the inbound gate's engineer this wave: switch to tcg._lean.reparse
    "tcg/inbound/rules.py", "tcg/inbound/prefilter.py",
}


def _private_imports(path: Path) -> list[str]:
    import ast

    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] in ("sre_parse", "sre_constants") or (
                    parts[0] != "tcg" and any(p.startswith("_") and not p.startswith("__") for p in parts)):
                found.append(name)
    return found


def test_only_the_lean_package_imports_private_cpython_modules():
    users = {path.relative_to(PACKAGE.parent).as_posix(): _private_imports(path)
             for path in modules().values()}
    outside = {rel: names for rel, names in users.items()
               if names and not rel.startswith("tcg/_lean/") and rel not in PRIVATE_IMPORT_LEDGER}
    assert outside == {}, f"import private CPython modules through tcg._lean: {outside}"
    stale = sorted(rel for rel in PRIVATE_IMPORT_LEDGER if not users.get(rel))
    assert stale == [], f"drop from PRIVATE_IMPORT_LEDGER: {stale}"


# ------------------------------------------------------------------ citations
# Code, comments and docs cite a docs/ page or state their reason: an issue number,
# a design-document section or a research note is not in the repository, so a
# reader cannot follow it. Built from pieces so this file does not match itself.
CITATION = re.compile("|".join([
    r"\bDESIGN(\.md)?\s*§", r"\bSTYLE(\.md)?\s*§", "§" + r"\s?\d", r"\bissue #?\d",
    "research" + r"/\w",
]), re.IGNORECASE)
CITATION_ROOTS = ("tcg", "tests", "docs", "scripts", "bench", "README.md")


def _repository_files(root: Path, top: str) -> list[Path]:
    """The files of `top` that belong to the repository: what git tracks or would
    add. Installed third-party trees inside tests/ (the agent CLIs under
    tests/.npm) are ignored by .gitignore and are not ours to police."""
    out = subprocess.run(
        ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", top],
        capture_output=True, check=True).stdout
    return sorted(root / name for name in out.decode().split("\0") if name and (root / name).is_file())


def test_no_citation_of_issues_or_design_sections():
    root = PACKAGE.parent
    found = []
    for top in CITATION_ROOTS:
        for path in _repository_files(root, top):
            if path.suffix not in {".py", ".md", ".sh", ".toml", ".zsh", ".bash", ".ps1", ".doskey", ".txt"}:
                continue
            for n, text in enumerate(path.read_text(encoding="utf-8", errors="replace")
                                     .splitlines(), 1):
                if CITATION.search(text):
                    found.append(f"{path.relative_to(root)}:{n}: {text.strip()}")
    assert found == [], "cite a docs/ page or state the reason instead:\n" + "\n".join(found)


# ------------------------------------------------------------------ import budget
# Modules the hot entries must not load: each costs milliseconds on every call, or
# belongs to another surface.
NEVER_ON_HOT_PATH = ("click", "pexpect", "rich", "hypothesis", "mcp", "tcg.cli.app", "tcg.scan",
                     "tcg.launcher", "tcg.clipboard", "tcg.mcp", "tcg.detect.engine")


def _loaded(code: str, runs: int = 2, stdin: bytes | None = None) -> tuple[str, list[str]]:
    """Run ``code`` (which sets ``rc``) ``runs`` times in a fresh ``python -I`` (``stdin``
    on its standard input); the last run's rc and the forbidden modules it loaded (the
    first fills start-up caches)."""
    probe = (code + "\nimport sys; bad = sorted(m for m in sys.modules if m in "
             + repr(NEVER_ON_HOT_PATH) + " or any(m.startswith(p + '.') for p in "
             + repr(NEVER_ON_HOT_PATH) + "))\nprint('RESULT', rc, bad)")
    out = None
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-I", "-c", probe], capture_output=True, timeout=120,
                             **({"input": stdin} if stdin is not None else {"stdin": subprocess.DEVNULL}))
    assert out is not None
    line = [ln for ln in out.stdout.decode(errors="replace").splitlines() if ln.startswith("RESULT ")]
    assert line, out.stderr.decode(errors="replace")
    _, rc, bad = line[-1].split(" ", 2)
    return rc, eval(bad)  # noqa: S307 - our own repr of a list of module names


@pytest.mark.parametrize("line", ["true", "true | cat", "echo $HOME > /dev/null"])
def test_run_line_import_budget(line):
    rc, bad = _loaded(f"from tcg import shell_entry; rc = shell_entry.main(['run-line', {line!r}])")
    assert rc == "0" and bad == []


@pytest.mark.parametrize("entry", ["tcg.shell_entry", "tcg.cli"])
def test_check_import_budget(entry):
    rc, bad = _loaded(f"import {entry} as e; rc = e.main(['check', 'cat .env'])", runs=1)
    assert rc == "0" and bad == []


def test_mask_filter_import_budget():
    rc, bad = _loaded("import io, sys; sys.stdin = io.TextIOWrapper(io.BytesIO(b'hello\\n'));"
                      "from tcg.cli import main; rc = main(['mask'])", runs=1)
    assert rc == "0" and [m for m in bad if m != "tcg.detect.engine"] == []


def test_hook_entry_import_budget(tmp_path, tcg_home):
    """`tcg hook claude PreToolUse` on a Read: Claude Code starts it for every tool call."""
    import json

    target = tmp_path / "README.md"
    target.write_text("hello\n")
    event = {"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "Read",
             "tool_input": {"file_path": str(target)}, "cwd": str(tmp_path)}
    rc, bad = _loaded("from tcg.cli import main; rc = main(['hook', 'claude', 'PreToolUse'])",
                      stdin=json.dumps(event).encode())
    assert rc == "0" and bad == []
    records = [json.loads(ln) for ln in (tcg_home / "state" / "events.jsonl").read_text().splitlines()]
    assert records[-1]["event"] == "hook_decision" and records[-1]["decision"] == "allow"
    assert records[-1]["tool"] == "Read"


# `tcg scan` of a small repository: pre-commit hooks, CI and the launch gate start one per
# repository, so its start-up is paid on every call. Of tcg it loads the entry, the core
# modules, the scanner, the detector (keyword + re engine for a small scan), the policy
# snapshot; of the standard library none of the modules below (git runs on posix_spawn).
SCAN_TCG_PACKAGES = ("tcg.scan", "tcg.detect", "tcg.policy", "tcg._lean")
SCAN_ENTRY = ("tcg", "tcg.cli", "tcg.router")
SCAN_NEVER = ("subprocess", "signal", "selectors", "locale", "contextlib", "json", "tomllib", "tomli",
              "hashlib", "hmac", "typing", "dataclasses", "inspect", "multiprocessing", "concurrent",
              "shutil", "tempfile", "hyperscan", "click", "platformdirs",
              # no pattern is compiled or analysed for a 3-byte blob: the detector comes from its
              # memo, validators and homoglyph folding load on first use
              "re", "sre_compile", "sre_parse", "enum", "fnmatch", "tcg._lean.reparse", "tcg.detect.validators",
              "tcg.detect.fold", "unicodedata",
              # the scanner and the detector work with os.path and _thread, count in dicts and
              # cache without functools
              "pathlib", "urllib", "ipaddress", "threading", "collections", "functools", "types",
              "operator", "tcg.detect.entropy",
              # the keyword + re engine of a small scan needs no hyperscan helpers; a blob
              # without candidates resolves nothing
              "tcg.detect.hsdb", "bisect")


def _core_module(name: str) -> bool:
    """A top-level module of the package (tcg/errors.py, tcg/events.py …), not a package."""
    parts = name.split(".")
    return len(parts) == 2 and (PACKAGE / f"{parts[1]}.py").is_file()


def test_scan_entry_import_budget(tmp_path, tcg_home):
    """`tcg scan REPO` of a one-commit repository loads only what such a scan uses."""
    repo = tmp_path / "one"
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t.invalid", "PATH": os.environ["PATH"],
           "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
    (repo / "f").write_bytes(b"abc")
    subprocess.run(["git", "-C", str(repo), "add", "f"], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", "one"], check=True, env=env)
    probe = ("import sys; before = set(sys.modules)\nfrom tcg.cli import main\n"
             f"rc = main(['scan', {str(repo)!r}])\n"
             "print('RESULT', rc, sorted(set(sys.modules) - before))")
    out = None
    for _ in range(2):  # the first run fills the start-up caches (rules memo, policy snapshot)
        out = subprocess.run([sys.executable, "-I", "-c", probe], capture_output=True, timeout=120,
                             stdin=subprocess.DEVNULL)
    assert out is not None
    line = [ln for ln in out.stdout.decode(errors="replace").splitlines() if ln.startswith("RESULT ")]
    assert line, out.stderr.decode(errors="replace")
    _, rc, loaded = line[-1].split(" ", 2)
    mods = eval(loaded)  # noqa: S307 - our own repr of a list of module names
    assert rc == "0", out.stderr.decode(errors="replace")
    stray = sorted(m for m in mods if m.startswith("tcg.") and m not in SCAN_ENTRY and not _core_module(m)
                   and not any(m == p or m.startswith(p + ".") for p in SCAN_TCG_PACKAGES))
    assert stray == [], f"`tcg scan` loads tcg modules it does not use: {stray}"
    heavy = sorted(m for m in mods if any(m == n or m.startswith(n + ".") for n in SCAN_NEVER))
    assert heavy == [], f"`tcg scan` of one commit loads {heavy}"
