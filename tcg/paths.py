"""Where tcg keeps its files.

platformdirs locations by default; ``TCG_HOME`` puts config, state and cache
under one root (tests use it to stay hermetic).

Every mediated command resolves these paths, so this module keeps to ``os``:
pathlib, dataclasses and platformdirs together cost ~15 ms of imports. The
string attributes (``*_dir``, ``*_path``) are what the hot paths use; the
``Path`` properties are there for everything else. On Linux the XDG rules that
platformdirs applies are computed here directly (tests assert that both agree);
elsewhere platformdirs answers.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing costs ~3 ms of import on the hot path
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

APP = "tcg"
# Variables whose values are paths, not secrets: a line's words resolve them from
# the environment (tcg.policy.cmdline.parse_line), and a session compares them with its shell's
# (tcg.runner.session_env).
RESOLVABLE_VARS = frozenset(
    {
        "HOME", "PWD", "TMPDIR", "USER", "LOGNAME", "XDG_CONFIG_HOME", "XDG_STATE_HOME",
        "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR", "TCG_HOME", "TCG_POLICY",
    }
)


def _path(value: str) -> Path:
    from pathlib import Path

    return Path(value)


class Paths:
    """tcg's three roots. Immutable; compares by value."""

    __slots__ = ("cache_dir", "config_dir", "state_dir")
    cache_dir: str
    config_dir: str
    state_dir: str

    def __init__(self, config: str | os.PathLike[str], state: str | os.PathLike[str],
                 cache: str | os.PathLike[str]):
        object.__setattr__(self, "config_dir", os.fspath(config))
        object.__setattr__(self, "state_dir", os.fspath(state))
        object.__setattr__(self, "cache_dir", os.fspath(cache))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Paths is immutable (cannot set {name!r})")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Paths):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Paths(config={self.config_dir!r}, state={self.state_dir!r}, cache={self.cache_dir!r})"

    def _key(self) -> tuple[str, str, str]:
        return (self.config_dir, self.state_dir, self.cache_dir)

    # ---- strings (hot paths)

    @property
    def policy_path(self) -> str:
        return os.path.join(self.config_dir, "policy.toml")

    @property
    def events_path(self) -> str:
        return os.path.join(self.state_dir, "events.jsonl")

    @property
    def key_path(self) -> str:
        return os.path.join(self.state_dir, "key")

    # ---- pathlib views

    @property
    def config(self) -> Path:
        return _path(self.config_dir)

    @property
    def state(self) -> Path:
        return _path(self.state_dir)

    @property
    def cache(self) -> Path:
        return _path(self.cache_dir)

    @property
    def policy_file(self) -> Path:
        return _path(self.policy_path)

    @property
    def events_file(self) -> Path:
        return _path(self.events_path)

    @property
    def key_file(self) -> Path:
        return _path(self.key_path)

    @property
    def scan_cache(self) -> Path:
        return _path(os.path.join(self.cache_dir, "scan"))

    def all_roots(self) -> tuple[Path, ...]:
        return (self.config, self.state, self.cache)


def get_paths(environ: Mapping[str, str] | None = None) -> Paths:
    """tcg's directories for ``environ`` (default: the process environment)."""
    env = os.environ if environ is None else environ
    home = env.get("TCG_HOME")
    if home:
        root = os.path.expanduser(home)
        return Paths(config=os.path.join(root, "config"), state=os.path.join(root, "state"),
                     cache=os.path.join(root, "cache"))
    if sys.platform.startswith("linux"):
        return xdg_paths(env)
    import platformdirs

    return Paths(
        config=platformdirs.user_config_dir(APP, appauthor=False),
        state=platformdirs.user_state_dir(APP, appauthor=False),
        cache=platformdirs.user_cache_dir(APP, appauthor=False),
    )


def xdg_paths(env: Mapping[str, str]) -> Paths:
    """platformdirs' Unix answer (XDG base directories), computed without it.

    As the XDG Base Directory spec (and platformdirs >= 4) says: a variable
    counts only when it holds an absolute path; unset, blank or relative falls
    back to the default under the home directory.
    """

    def base(var: str, default: str) -> str:
        value = env.get(var, "")
        return value if value.startswith("/") else os.path.expanduser(default)

    return Paths(
        config=os.path.join(base("XDG_CONFIG_HOME", "~/.config"), APP),
        state=os.path.join(base("XDG_STATE_HOME", "~/.local/state"), APP),
        cache=os.path.join(base("XDG_CACHE_HOME", "~/.cache"), APP),
    )


def ensure_private_dir(path: str | os.PathLike[str]) -> str | os.PathLike[str]:
    """Create ``path`` (and parents) with mode 0700; tighten it if it already exists.
    Returns ``path`` as given (str or Path)."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    if os.name == "posix":
        try:
            if os.stat(path).st_mode & 0o077:
                os.chmod(path, 0o700)
        except OSError:
            pass
    return path
