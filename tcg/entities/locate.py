"""Where a project's entity registry lives (kept to ``os``: every mediated command
asks, and a project without a registry must cost no more than a few stats)."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from tcg.paths import Paths

STORE_DIR = "tcg-entities"  # also in the default policy's [secret_stores] segments
REGISTRY = "registry.json"


def project_root(start: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """The project a command works for: ``TCG_PROJECT``, else the git work tree
    around ``start`` (default: the current directory), else ``start`` itself."""
    env = os.environ if environ is None else environ
    given = env.get("TCG_PROJECT")
    if given:
        return os.path.realpath(os.path.expanduser(given))
    d = os.path.realpath(start or os.getcwd())
    probe = d
    while True:
        if os.path.lexists(os.path.join(probe, ".git")):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return d
        probe = parent


def project_id(root: str) -> str:
    """First 16 hex digits of the SHA-256 of the project root's real path."""
    import hashlib

    return hashlib.sha256(os.path.realpath(root).encode("utf-8", "surrogateescape")).hexdigest()[:16]


def store_dir(root: str, paths: Paths | None = None) -> str:
    from tcg.paths import get_paths

    p = paths or get_paths()
    return os.path.join(p.state_dir, STORE_DIR, project_id(root))  # type: ignore[attr-defined]


def registry_path(root: str, paths: Paths | None = None) -> str:
    return os.path.join(store_dir(root, paths), REGISTRY)
