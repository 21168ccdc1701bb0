"""One project-root walk: the entity registry's project, the sandbox's store search
and the launcher's repository check stop at the same ``.git`` entry."""

from __future__ import annotations

import os
from pathlib import Path

from tcg.entities.locate import project_root as entity_root
from tcg.osutil import dot_git_dir
from tcg.sandbox.stores import project_root as sandbox_root


def test_a_dangling_dot_git_symlink_marks_the_project(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    (outer / ".git").mkdir(parents=True)
    inner = outer / "inner"
    (inner / "sub").mkdir(parents=True)
    os.symlink(tmp_path / "gone", inner / ".git")  # a removed worktree's link
    start = str((inner / "sub").resolve())
    # every surface names the inner project, not the enclosing repository
    assert dot_git_dir(start) == str(inner.resolve())
    assert sandbox_root(start) == str(inner.resolve())
    assert entity_root(start, environ={}) == str(inner.resolve())


def test_outside_any_repository_each_surface_keeps_its_fallback(tmp_path: Path) -> None:
    start = str(tmp_path.resolve())
    assert dot_git_dir(start) is None
    assert sandbox_root(start) == start
    assert entity_root(start, environ={}) == start
