"""Where a project's entity registry lives (kept to ``os``: every mediated command
asks, and a project without a registry must cost no more than a few stats)."""

from __future__ import annotations

import os

from tcg.osutil import dot_git_dir

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
    return dot_git_dir(d) or d


def project_id(root: str) -> str:
    """First 16 hex digits of the SHA-256 of the project root's real path
    (tcg.digest: the builtin SHA-256, not hashlib, whose OpenSSL load costs 3-7 ms)."""
    from tcg.digest import sha256_hex

    return sha256_hex(os.path.realpath(root).encode("utf-8", "surrogateescape"))[:16]


def has_registries(paths: Paths | None = None) -> bool:
    """Whether any project has an entity registry on this install: one stat of the
    directory that holds them all, so a command in an install without entities
    costs no hash and no project walk."""
    from tcg.paths import get_paths

    p = paths or get_paths()
    return os.path.isdir(os.path.join(p.state_dir, STORE_DIR))


def store_dir(root: str, paths: Paths | None = None) -> str:
    from tcg.paths import get_paths

    p = paths or get_paths()
    return os.path.join(p.state_dir, STORE_DIR, project_id(root))  # type: ignore[attr-defined]


def registry_path(root: str, paths: Paths | None = None) -> str:
    return os.path.join(store_dir(root, paths), REGISTRY)
