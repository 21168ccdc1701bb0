"""Load the effective policy: built-in default, then user file (or TCG_POLICY),
then a repository's ``.tcg/policy.toml`` that may only add protection.

Each layer is parsed and validated against tcg.policy.schema, the layers are
merged by tcg.policy.merge (docs/policy.md: what a repository layer may change),
and the result is remembered by tcg.policy.snapshots, so most commands read
one signed file instead of parsing TOML.
"""

from __future__ import annotations

import os

from tcg.errors import PolicyError
from tcg.paths import get_paths
from tcg.policy.merge import (  # noqa: F401 - re-exported: callers import these from here
    Layer,
    Policy,
    basename_matches,
    fingerprint_of,
    merge_layers,
)
from tcg.policy.snapshots import PolicySnapshots, _once

# Every mediated command loads the policy (usually from a snapshot), so this
# module keeps off typing, dataclasses, pathlib and hashlib: ~15 ms of imports.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any

    from tcg.paths import Paths
    from tcg.policy.schema import INBOUND_ACTIONS, INBOUND_KINDS, INBOUND_SURFACES, SCHEMA  # noqa: F401

DEFAULT_NAME = "default.toml"
# Names of tcg.policy.schema callers import from here. The schema is imported on
# first use: a snapshot hit (most commands) never parses or validates a layer.
_SCHEMA_NAMES = ("INBOUND_ACTIONS", "INBOUND_KINDS", "INBOUND_SURFACES", "SCHEMA")


def __getattr__(name: str) -> Any:
    if name in _SCHEMA_NAMES:
        from tcg.policy import schema

        return getattr(schema, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def parse_toml(text: str, path: str) -> dict[str, Any]:
    """One layer's TOML (tcg.policy.schema.parse_toml; errors name the file and line)."""
    from tcg.policy.schema import parse_toml as parse

    return parse(text, path)


def validate(data: dict[str, Any], path: str, text: str = "") -> None:
    """Check one layer against the schema (tcg.policy.schema.validate)."""
    from tcg.policy.schema import validate as check

    check(data, path, text)


def read_layer(path: str | os.PathLike[str], kind: str) -> Layer:
    return layer_from_text(kind, path, _read_text(path))


def layer_from_text(kind: str, path: str | os.PathLike[str], text: str) -> Layer:
    """Parse and validate one policy file's text (errors name the file and line)."""
    data = parse_toml(text, str(path))
    validate(data, str(path), text)
    return Layer(kind=kind, path=str(path), data=data)


@_once
def _default_text() -> str:
    # Next to this module in every install we support (wheel, editable); importlib.resources
    # costs ~6 ms of imports on the per-command path, so it is only the fallback (zip imports).
    here = os.path.join(os.path.dirname(__file__), DEFAULT_NAME)
    if os.path.isfile(here):
        with open(here, encoding="utf-8") as fh:
            return fh.read()
    from importlib import resources  # pragma: no cover

    return resources.files("tcg.policy").joinpath(DEFAULT_NAME).read_text(encoding="utf-8")


@_once
def default_layer() -> Layer:
    """The built-in default (parsed once per process; merge_layers deep-copies it)."""
    text = _default_text()
    data = parse_toml(text, "<builtin default>")
    validate(data, "<builtin default>", text)
    return Layer(kind="default", path="<builtin>", data=data)



def find_repo_policy(cwd: str | os.PathLike[str]) -> Path | None:
    """``.tcg/policy.toml`` in the nearest directory (upwards) holding ``.git`` or ``.tcg``."""
    found = _repo_policy(os.fspath(cwd))
    if found is None:
        return None
    from pathlib import Path

    return Path(found)


def _repo_policy(cwd: str) -> str | None:
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


def user_policy_path(paths: Paths | None = None, environ: Mapping[str, str] | None = None) -> tuple[Path, str]:
    from pathlib import Path

    path, kind = _user_policy(paths, environ)
    return Path(path), kind


def _user_policy(paths: Paths | None, environ: Mapping[str, str] | None) -> tuple[str, str]:
    env = os.environ if environ is None else environ
    override = env.get("TCG_POLICY")
    if override:
        return os.path.expanduser(override), "env"
    return (paths or get_paths(env)).policy_path, "user"


def load_policy(
    cwd: str | os.PathLike[str] | None = None,
    paths: Paths | None = None,
    environ: Mapping[str, str] | None = None,
    include_repo: bool = True,
) -> Policy:
    """Build the effective policy. Raises PolicyError on any unreadable/invalid layer."""
    paths = paths or get_paths(environ)
    sources: list[tuple[str, str]] = []
    upath, ukind = _user_policy(paths, environ)
    if ukind == "env" or os.path.exists(upath):
        sources.append((ukind, upath))
    if include_repo:
        try:
            here = os.fspath(cwd) if cwd is not None else os.getcwd()
        except OSError:  # the working directory was removed: there is no repo to tighten
            here = None
        rpath = _repo_policy(here) if here is not None else None
        if rpath is not None:
            sources.append(("repo", rpath))
    texts = [(kind, path, _read_text(path)) for kind, path in sources]
    snapshots = PolicySnapshots(paths)
    key = snapshots.key(_default_text(), texts)
    cached = snapshots.get(key)
    if cached is not None:
        _apply_process_settings(cached)
        return cached
    layers = [default_layer(), *(layer_from_text(kind, path, text) for kind, path, text in texts)]
    policy = merge_layers(layers)
    snapshots.put(key, policy)
    _apply_process_settings(policy)
    return policy


def _apply_process_settings(policy: Policy) -> None:
    """Settings that act below the policy's callers: the event log's rotation
    applies to every record this process appends after loading its policy."""
    from tcg import eventlimits as limits  # not tcg.events: a masking process writes none

    settings = policy.model.events
    limits.set_rotation(settings.max_bytes or limits.DEFAULT_MAX_BYTES, settings.keep or limits.DEFAULT_KEEP)


def _read_text(path: str | os.PathLike[str]) -> str:
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

