"""Fixtures for the delete-guard tests: real git repositories and project trees."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.guard.helpers import git


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "commit.gpgsign", "false")
    (path / "tracked.txt").write_bytes(b"one\ntwo\n")
    (path / "tracked.py").write_bytes(b"print('hello')\n")
    (path / ".gitignore").write_bytes(b"*.o\n")
    git(path, "add", ".")
    # A fixed date: twin repositories built a second apart must get the same commit id
    # (tests compare `git reset --hard`'s "HEAD is now at <id>" between them).
    subprocess.run(["git", "-C", str(path), "commit", "-q", "-m", "init"], check=True, capture_output=True,
                   timeout=60, env={**os.environ, "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
                                    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"})
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with two committed files and a .gitignore."""
    return make_repo(tmp_path / "proj")
