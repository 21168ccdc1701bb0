"""What the hermetic fixture watches in the real home, as a comparable fingerprint.

Kept apart from conftest.py so tests can exercise it on a fake home directory.
"""

from __future__ import annotations

from pathlib import Path

# Files a careless hook installer or shell test would touch (append-only edits do
# not change the home directory's own mtime, so they are stat'ed one by one).
RC_FILES = (
    ".bashrc", ".bash_profile", ".profile", ".bash_login", ".zshrc", ".zshenv", ".zprofile",
    ".zlogin", ".config/fish/config.fish",
)


def real_tcg_dirs() -> list[Path]:
    import platformdirs

    return [
        Path(platformdirs.user_config_dir("tcg", appauthor=False)),
        Path(platformdirs.user_state_dir("tcg", appauthor=False)),
        Path(platformdirs.user_cache_dir("tcg", appauthor=False)),
    ]


def _stat(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_ino, st.st_size)


def home_fingerprint(home: Path, tcg_dirs: list[Path]) -> tuple:
    """Changes when an entry is added to/removed from ``home``, an rc file changes,
    or a tcg config/state/cache dir appears, disappears or gains an entry."""
    return (
        _stat(home),
        tuple(_stat(home / rc) for rc in RC_FILES),
        tuple(_stat(d) for d in tcg_dirs),
    )
