"""Where tcg keeps its files.

platformdirs locations by default; ``TCG_HOME`` puts config, state and cache
under one root (tests use it to stay hermetic). platformdirs is imported lazily:
it costs ~20 ms and the shell hot path usually has TCG_HOME or cached paths.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

APP = "tcg"


@dataclass(frozen=True)
class Paths:
    config: Path
    state: Path
    cache: Path

    @property
    def policy_file(self) -> Path:
        return self.config / "policy.toml"

    @property
    def events_file(self) -> Path:
        return self.state / "events.jsonl"

    @property
    def key_file(self) -> Path:
        return self.state / "key"

    @property
    def scan_cache(self) -> Path:
        return self.cache / "scan"

    def all_roots(self) -> tuple[Path, ...]:
        return (self.config, self.state, self.cache)


def get_paths(environ: Mapping[str, str] | None = None) -> Paths:
    """tcg's directories for ``environ`` (default: the process environment)."""
    env = os.environ if environ is None else environ
    home = env.get("TCG_HOME")
    if home:
        root = Path(home).expanduser()
        return Paths(config=root / "config", state=root / "state", cache=root / "cache")
    import platformdirs

    return Paths(
        config=Path(platformdirs.user_config_dir(APP, appauthor=False)),
        state=Path(platformdirs.user_state_dir(APP, appauthor=False)),
        cache=Path(platformdirs.user_cache_dir(APP, appauthor=False)),
    )


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` (and parents) with mode 0700; tighten it if it already exists."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if os.name == "posix":
        try:
            if path.stat().st_mode & 0o077:
                os.chmod(path, 0o700)
        except OSError:
            pass
    return path
