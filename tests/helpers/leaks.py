"""Leak checks: grep everything tcg wrote for planted secrets."""

from __future__ import annotations

from pathlib import Path


def all_files_under(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


def assert_no_secret_written(root: Path, secrets: list[str]) -> None:
    """Grep every file under ``root`` for every planted secret (and long slices of it)."""
    for path in all_files_under(root):
        data = path.read_bytes()
        for s in secrets:
            needle = s.encode()
            assert needle not in data, f"planted secret found in {path}"
            if len(needle) >= 16:
                for i in range(0, len(needle) - 12, 4):
                    assert needle[i : i + 12] not in data, f"slice of planted secret in {path}"
