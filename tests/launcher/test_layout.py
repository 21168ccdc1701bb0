"""The launcher and the agent adapters as named modules: no import cycle among them
(module-level or lazy), and none over ~600 lines."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import tcg

ROOT = Path(tcg.__file__).parent
PACKAGES = ("launcher", "agents")


def modules(package: str) -> dict[str, Path]:
    return {f"tcg.{package}.{p.stem}": p for p in (ROOT / package).glob("*.py") if p.stem != "__init__"}


def imports(path: Path, package: str) -> set[str]:
    """Every tcg.<package>.* module ``path`` imports, anywhere in the file."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == f"tcg.{package}":
                found.update(f"tcg.{package}.{a.name}" for a in node.names)
            elif node.module.startswith(f"tcg.{package}."):
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith(f"tcg.{package}."))
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycle(package):
    mods = modules(package)
    graph = {name: imports(path, package) & set(mods) for name, path in mods.items()}

    def visit(node: str, stack: list[str]) -> None:
        if node in stack:
            raise AssertionError("import cycle: " + " -> ".join([*stack[stack.index(node):], node]))
        for nxt in sorted(graph[node]):
            visit(nxt, [*stack, node])

    for name in sorted(graph):
        visit(name, [])


@pytest.mark.parametrize("package", PACKAGES)
def test_modules_stay_small(package):
    sizes = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in modules(package).items()}
    assert all(n <= 600 for n in sizes.values()), sizes
