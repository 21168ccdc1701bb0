"""Merge policy layers into the effective policy.

Layering rules (docs/policy.md):
- protect lists (e.g. ``secret_stores.basenames``) are unioned across layers;
- allow lists (keys starting with ``allow``) are unioned from default and user
  layers and IGNORED from the repository layer (an agent can write repo files);
- decisions: the user layer replaces; the repository layer can only make them
  stricter (the worse of the two wins);
- settings (numbers, flags): the user layer replaces; repository values are ignored;
- tables in arrays (``[[credential_dumps]]``) are keyed by ``id``: user entries
  replace by id; the repository may only add new ids.
Every ignored repository value becomes a notice, so `tcg policy show` says so.
"""

from __future__ import annotations

from tcg.digest import sha256_hex
from tcg.policy.compiled import CompiledPolicy, compile_policy
from tcg.policy.glob import fnmatchcase
from tcg.policy.model import Decision, worst
from tcg.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

class Layer(Record, fields="kind path data"):
    """One policy file: ``kind`` is "default" | "user" | "env" | "repo"; ``path``
    is "<builtin>" for the default; ``data`` the parsed TOML document."""

    __slots__ = ()
    kind: str
    path: str
    data: dict[str, Any]


class Policy(Record, fields="data fingerprint sources notices compiled", defaults=((), None)):
    """The effective policy. ``data`` is the merged TOML document; ``compiled`` its
    typed model (tcg.policy.compiled), built by merge_layers and kept in the
    snapshot — read it through :attr:`model`."""

    __slots__ = ()
    data: dict[str, Any]
    fingerprint: str
    sources: tuple[str, ...]
    notices: tuple[str, ...]
    compiled: CompiledPolicy | None

    def __hash__(self) -> int:  # ``data`` is a dict; the fingerprint stands for it
        return hash(self.fingerprint)

    @property
    def name(self) -> str:
        return self.model.identity.name

    @property
    def version(self) -> int:
        return self.model.identity.version

    @property
    def model(self) -> CompiledPolicy:
        """The typed model the surfaces read (compiled here for a Policy built by hand)."""
        compiled = self.compiled
        return compiled if compiled is not None else compile_policy(self.data)

    @property
    def snapshot_id(self) -> str:
        return f"{self.name}@v{self.version}:{self.fingerprint[:12]}"

    def ref(self) -> dict[str, str]:
        """The policy reference every event carries."""
        return {"snapshot": self.snapshot_id, "fingerprint": self.fingerprint}

    def decision_for(self, actor: str, code: str, default: Decision = Decision.BLOCK) -> Decision:
        value = self.model.identity.decision(actor, code)
        return Decision.parse(value) if value is not None else default


def fingerprint_of(data: dict[str, Any]) -> str:
    import json

    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return sha256_hex(canonical.encode("ascii"))


def _merge(base: dict[str, Any], layer: Layer, notices: list[str], prefix: str = "") -> None:
    # imported here: a snapshot hit (most commands) builds its Policy without merging
    from tcg.policy.schema import (
        ALLOW_LIST,
        DECISION,
        INBOUND_ACTION,
        INBOUND_ACTIONS,
        NAME,
        PROTECT_LIST,
        TABLE_LIST,
        _schema_kind,
    )

    repo = layer.kind == "repo"
    for key, value in layer.data.items():
        dotted = f"{prefix}.{key}" if prefix else key
        kind = _schema_kind(dotted)
        if kind is None:  # a table containing schema keys
            node = base.setdefault(key, {})
            _merge(node, Layer(layer.kind, layer.path, value), notices, dotted)
            continue
        k = kind[0]
        if k == NAME:
            if repo:
                notices.append(f"{layer.path}: {dotted} ignored: a repository policy cannot rename the policy")
                continue
            base[key] = value
        elif k == DECISION:
            if repo:
                # A code the lower layers do not decide is BLOCK by default
                # (Policy.decision_for), so the repository cannot loosen it either.
                current = Decision.parse(base[key]) if key in base else Decision.BLOCK
                new = worst([current, Decision.parse(value)]).value
                if new != Decision.parse(value).value:
                    notices.append(
                        f"{layer.path}: {dotted} = {value!r} ignored: a repository policy may only "
                        f"tighten (effective: {new!r})"
                    )
                base[key] = new
            else:
                base[key] = Decision.parse(value).value
        elif k == INBOUND_ACTION:
            new = value.lower()
            if repo:  # a repository may only make a surface stricter
                kept = max(base.get(key, "allow"), new, key=INBOUND_ACTIONS.index)
                if kept != new:
                    notices.append(f"{layer.path}: {dotted} = {value!r} ignored: a repository policy "
                                   f"may only tighten (effective: {kept!r})")
                new = kept
            base[key] = new
        elif k == PROTECT_LIST:
            existing = list(base.get(key, []))
            existing += [v for v in value if v not in existing]
            base[key] = existing
        elif k == ALLOW_LIST:
            if repo:
                if value:
                    notices.append(
                        f"{layer.path}: {dotted} ignored: a repository policy cannot add exceptions"
                    )
                continue
            existing = list(base.get(key, []))
            existing += [v for v in value if v not in existing]
            base[key] = existing
        elif k == TABLE_LIST:
            by_id = {e["id"]: e for e in base.get(key, [])}
            for entry in value:
                if entry["id"] in by_id and repo:
                    notices.append(
                        f"{layer.path}: [[{dotted}]] id {entry['id']!r} ignored: a repository policy "
                        "cannot replace a rule"
                    )
                    continue
                by_id[entry["id"]] = entry
            base[key] = list(by_id.values())
        else:  # SETTING
            if repo:
                notices.append(f"{layer.path}: {dotted} ignored: a repository policy cannot change settings")
                continue
            base[key] = value


def merge_layers(layers: list[Layer]) -> Policy:
    import copy

    data: dict[str, Any] = {}
    notices: list[str] = []
    for layer in layers:
        _merge(data, Layer(layer.kind, layer.path, copy.deepcopy(layer.data)), notices)
    _canonicalize(data)
    return Policy(
        data=data,
        fingerprint=fingerprint_of(data),
        sources=tuple(layer.path for layer in layers),
        notices=tuple(notices),
        compiled=compile_policy(data),
    )


def _canonicalize(node: dict[str, Any]) -> None:
    """Sort list values in place: they are sets, so order must not move the fingerprint."""
    for key, value in node.items():
        if isinstance(value, dict):
            _canonicalize(value)
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            node[key] = sorted(set(value))
        elif isinstance(value, list) and all(isinstance(v, dict) and "id" in v for v in value):
            node[key] = sorted(value, key=lambda e: str(e["id"]))


def basename_matches(name: str, patterns: list[str]) -> bool:
    low = name.lower()
    return any(fnmatchcase(low, p.lower()) for p in patterns)
