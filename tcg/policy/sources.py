"""Which policy files apply, their text, and one key for all of it.

The effective policy is a pure function of these texts (the built-in default,
the user file or TCG_POLICY, a repository's ``.tcg/policy.toml``) and of the
code that merges them. So two processes of one install that read the same
texts use the same policy: the key names it without parsing anything. It keys
the signed snapshots (tcg.policy.snapshots), and a session station confirms a
served masking process with it before that process loaded the policy itself
(tcg.runner.session): reading two or three small files and hashing them costs
well under a millisecond, where importing and loading the policy costs ~10 ms.

This module therefore imports only ``os`` and tcg's light helpers.
"""

from __future__ import annotations

import os

from tcg.errors import PolicyError
from tcg.paths import get_paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any, TypeVar

    from tcg.paths import Paths

    _T = TypeVar("_T")

DEFAULT_NAME = "default.toml"


def _once(fn: Callable[[], _T]) -> Callable[[], _T]:
    """Memoise a no-argument function (functools costs ~1.5 ms of imports per command)."""
    cell: list[_T] = []

    def once() -> _T:
        if not cell:
            cell.append(fn())
        return cell[0]

    once.__doc__ = fn.__doc__
    once.cache_clear = cell.clear  # type: ignore[attr-defined]
    return once


class PolicySources:
    """The texts of the layers above the built-in default, in order, and their key."""

    __slots__ = ("texts", "key")

    def __init__(self, texts: list[tuple[str, str, str]]):
        self.texts = texts  # (kind, path, text): "env" or "user", then "repo"
        self.key = sources_key(default_text(), texts)


def sources_key(default: str, texts: list[tuple[str, str, str]]) -> str:
    """BLAKE2b-256 over the default's text and each layer's kind, path and text."""
    h = _default_hash(default).copy()
    for part in (f"{k}\0{p}\0{t}" for k, p, t in texts):
        h.update(b"\1" + part.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


_DEFAULT_HASH: list[tuple[str, Any]] = []  # (default text, its hash state): the last one


def _default_hash(default: str) -> Any:
    """The hash state after the default's text, kept for the last text seen: a
    session's station keys every policy load, and the 16 KB default is the same
    each time."""
    if _DEFAULT_HASH and _DEFAULT_HASH[0][0] is default:
        return _DEFAULT_HASH[0][1]
    from tcg.digest import blake2b_256

    h = blake2b_256(b"\1" + default.encode("utf-8", "surrogatepass"))
    _DEFAULT_HASH[:] = [(default, h)]
    return h


def read_sources(cwd: str | os.PathLike[str] | None = None, paths: Paths | None = None,
                 environ: Mapping[str, str] | None = None, include_repo: bool = True) -> PolicySources:
    """The layers that apply in ``cwd`` (default: here). Raises PolicyError for a
    layer that is named but cannot be read."""
    sources: list[tuple[str, str]] = []
    upath, ukind = user_policy(paths, environ)
    if ukind == "env" or os.path.exists(upath):
        sources.append((ukind, upath))
    if include_repo:
        try:
            here = os.fspath(cwd) if cwd is not None else os.getcwd()
        except OSError:  # the working directory was removed: there is no repo to tighten
            here = None
        rpath = repo_policy(here) if here is not None else None
        if rpath is not None:
            sources.append(("repo", rpath))
    return PolicySources([(kind, path, read_text(path)) for kind, path in sources])


@_once
def default_text() -> str:
    """The built-in default's text (read once per process)."""
    # Next to this module in every install we support (wheel, editable); importlib.resources
    # costs ~6 ms of imports on the per-command path, so it is only the fallback (zip imports).
    here = os.path.join(os.path.dirname(__file__), DEFAULT_NAME)
    if os.path.isfile(here):
        with open(here, encoding="utf-8") as fh:
            return fh.read()
    from importlib import resources  # pragma: no cover

    return resources.files("tcg.policy").joinpath(DEFAULT_NAME).read_text(encoding="utf-8")


def user_policy(paths: Paths | None, environ: Mapping[str, str] | None) -> tuple[str, str]:
    """(path, kind) of the user's layer: TCG_POLICY ("env") or the user file ("user")."""
    env = os.environ if environ is None else environ
    override = env.get("TCG_POLICY")
    if override:
        return os.path.expanduser(override), "env"
    return (paths or get_paths(env)).policy_path, "user"


def repo_policy(cwd: str) -> str | None:
    """The nearest ``.tcg/policy.toml`` from ``cwd`` up to the project root every
    surface uses (tcg.osutil.dot_git_dir; outside a project, up to ``/``)."""
    from tcg.osutil import dot_git_dir

    d = os.path.realpath(cwd)
    root = dot_git_dir(d)
    while True:
        candidate = os.path.join(d, ".tcg", "policy.toml")
        if os.path.isfile(candidate):
            return candidate
        if d == root:
            return None
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def read_text(path: str | os.PathLike[str]) -> str:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except FileNotFoundError:
        raise PolicyError(
            "policy file not found", hint="create it, or unset TCG_POLICY", path=str(path)
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyError(
            f"cannot read policy: {exc}", hint="check the file's permissions and encoding", path=str(path)
        ) from None
