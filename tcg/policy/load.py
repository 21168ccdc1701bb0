"""Load the effective policy: built-in default, then user file (or TCG_POLICY),
then a repository's ``.tcg/policy.toml`` that may only add protection.

Each layer is parsed and validated against tcg.policy.schema, the layers are
merged by tcg.policy.merge (docs/policy.md: what a repository layer may change),
and the result is remembered by tcg.policy.snapshots, so most commands read
one signed file instead of parsing TOML.
"""

from __future__ import annotations

import os

from tcg.paths import get_paths
from tcg.policy.merge import (  # noqa: F401 - re-exported: callers import these from here
    Layer,
    Policy,
    basename_matches,
    fingerprint_of,
    merge_layers,
)
from tcg.policy.snapshots import PolicySnapshots
from tcg.policy.sources import (
    PolicySources,
    _once,
    default_text,
    read_sources,
    read_text,
    repo_policy,
    user_policy,
)

# Every mediated command loads the policy (usually from a snapshot), so this
# module keeps off typing, dataclasses, pathlib and hashlib: ~15 ms of imports.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any

    from tcg.paths import Paths
    from tcg.policy.schema import INBOUND_ACTIONS, INBOUND_KINDS, INBOUND_SURFACES, SCHEMA  # noqa: F401

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
    return layer_from_text(kind, path, read_text(path))


def layer_from_text(kind: str, path: str | os.PathLike[str], text: str) -> Layer:
    """Parse and validate one policy file's text (errors name the file and line)."""
    data = parse_toml(text, str(path))
    validate(data, str(path), text)
    return Layer(kind=kind, path=str(path), data=data)


@_once
def default_layer() -> Layer:
    """The built-in default (parsed once per process; merge_layers deep-copies it)."""
    text = default_text()
    data = parse_toml(text, "<builtin default>")
    validate(data, "<builtin default>", text)
    return Layer(kind="default", path="<builtin>", data=data)



def find_repo_policy(cwd: str | os.PathLike[str]) -> Path | None:
    """``.tcg/policy.toml`` in the nearest directory (upwards) holding ``.git`` or ``.tcg``."""
    found = repo_policy(os.fspath(cwd))
    if found is None:
        return None
    from pathlib import Path

    return Path(found)


def user_policy_path(paths: Paths | None = None, environ: Mapping[str, str] | None = None) -> tuple[Path, str]:
    from pathlib import Path

    path, kind = user_policy(paths, environ)
    return Path(path), kind


def load_policy(
    cwd: str | os.PathLike[str] | None = None,
    paths: Paths | None = None,
    environ: Mapping[str, str] | None = None,
    include_repo: bool = True,
) -> Policy:
    """Build the effective policy. Raises PolicyError on any unreadable/invalid layer."""
    paths = paths or get_paths(environ)
    return load_sources(read_sources(cwd, paths, environ, include_repo), paths)


def load_sources(sources: PolicySources, paths: Paths) -> Policy:
    """The effective policy of ``sources`` (tcg.policy.sources): a signed snapshot
    under their key, or parsed, validated and merged (then remembered)."""
    texts = sources.texts
    key = sources.key
    snapshots = PolicySnapshots(paths)
    cached = snapshots.get(key)
    if cached is not None:
        _apply_process_settings(cached)
        return cached
    layers = [default_layer(), *(layer_from_text(kind, path, text) for kind, path, text in texts)]
    policy = merge_layers(layers)
    snapshots.put(key, policy)
    _apply_process_settings(policy)
    return policy


class PolicyMemo:
    """Policy loads for a process that lives for hours (a session's station and
    its masking process), exact at every load: the layers' texts are read each
    time (a policy edit applies to the very next load), and when they are those
    of a recent load, that load's Policy is returned as it is. Reading the texts
    costs ~0.2 ms; what this skips is the signed snapshot's read and check
    (~0.5-1 ms) and, for the callers, rebuilding what they derived from the
    Policy object. Errors are never remembered: a broken layer raises each time."""

    KEEP = 8  # policies remembered (one per set of layers: the user's, each repository's)

    def __init__(self, environ: Mapping[str, str] | None = None):
        """``environ``: as load_policy's (default: the process environment), read
        once: tcg's directories are those of this process's environment."""
        self._environ = environ
        self._paths = get_paths(environ)
        self._by_key: dict[str, Policy] = {}

    def load(self, cwd: str | os.PathLike[str] | None = None) -> Policy:
        """As :func:`load_policy` (``cwd`` None: here). Raises PolicyError."""
        paths = self._paths
        sources = read_sources(cwd, paths, self._environ)
        policy = self._by_key.get(sources.key)
        if policy is None:
            policy = load_sources(sources, paths)
            if len(self._by_key) >= self.KEEP:
                self._by_key.pop(next(iter(self._by_key)))
            self._by_key[sources.key] = policy
        else:
            _apply_process_settings(policy)  # another set of layers may have set them since
        return policy


def _apply_process_settings(policy: Policy) -> None:
    """Settings that act below the policy's callers: the event log's rotation
    applies to every record this process appends after loading its policy."""
    from tcg import eventlimits as limits  # not tcg.events: a masking process writes none

    settings = policy.model.events
    limits.set_rotation(settings.max_bytes or limits.DEFAULT_MAX_BYTES, settings.keep or limits.DEFAULT_KEEP)

