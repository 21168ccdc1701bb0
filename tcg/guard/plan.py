"""What the guard needs done before a command runs, as plain data.

The policy engine decides (pure: it may look at the filesystem, never change
it); these records ride on the RELOCATE/SNAPSHOT reasons of its verdict, and
tcg.guard.prepare carries them out just before the command is executed. Paths
are absolute whenever the engine knew the working directory.
"""

from __future__ import annotations

from tcg.record import Record


class Move(Record, fields="path"):
    """Relocate ``path`` into the trash; a placeholder takes its place."""

    __slots__ = ()
    path: str


class Copy(Record, fields="path"):
    """Keep a copy of the file ``path`` in the trash; it stays where it is."""

    __slots__ = ()
    path: str


class FindDelete(Record, fields="argv cwd"):
    """Relocate what ``find`` would delete: ``argv`` is the same find with its
    deleting action replaced by ``-print0``, run in ``cwd`` when preparing."""

    __slots__ = ()
    argv: tuple[str, ...]
    cwd: str


class GitClean(Record, fields="options env cwd flags pathspecs"):
    """Relocate what ``git clean`` would remove: enumerated with ``git ls-files``."""

    __slots__ = ()
    options: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    cwd: str
    flags: tuple[str, ...]
    pathspecs: tuple[str, ...]


class GitSnap(Record, fields="options env cwd kind names"):
    """Pin what a git command would lose under refs/tcg/…: ``kind`` is
    ``worktree``, ``branch``, ``tag`` or ``stash`` (``names``: branches, tags,
    or stash entries; empty for all stash entries)."""

    __slots__ = ()
    options: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    cwd: str
    kind: str
    names: tuple[str, ...] | None
