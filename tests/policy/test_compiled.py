"""The compiled policy model (tcg.policy.compiled): what the surfaces read, built
once at merge and carried by the signed snapshot."""

from __future__ import annotations

import pytest

from tcg.keyhash import load_or_create_key
from tcg.paths import get_paths
from tcg.policy import compiled as compiledmod
from tcg.policy import merge as mergemod
from tcg.policy.compiled import (
    MCP_MINIMUM_BASENAMES,
    MCP_MINIMUM_SEGMENTS,
    CompiledPolicy,
    compile_policy,
    from_plain,
    to_plain,
)
from tcg.policy.load import default_layer, load_policy, merge_layers
from tcg.policy.merge import Policy


def test_the_default_model():
    model = merge_layers([default_layer()]).model
    stores = model.secret_stores
    globbed = [any(c in b for c in "*?[") for b in stores.basenames]
    assert globbed == sorted(globbed), "literal names come before globs"
    assert all(b == b.lower() for b in stores.basenames)
    assert all(n == n.upper() for n in model.secret_vars.names)
    assert model.scan.categories is not None and model.surfaces.terminal_hold_ms == 500
    assert model.events.on_unwritable in ("block", "warn")


def test_the_mcp_minimum_is_protected_by_the_default_secret_stores():
    """The names an MCP request may never name are secret stores on every other surface too."""
    stores = merge_layers([default_layer()]).model.secret_stores
    for name in MCP_MINIMUM_BASENAMES:
        assert stores.match("/x/" + name.replace("*", "local")) is not None, name
    for seg in MCP_MINIMUM_SEGMENTS:
        assert stores.match(f"/home/u/{seg}/config") is not None, seg


def test_store_match_with_home():
    stores = merge_layers([default_layer()]).model.secret_stores.for_home("/home/u")
    assert stores.match("/home/u/.config/gh/hosts.yml") == "path /home/u/.config/gh/hosts.yml"
    assert stores.match("/srv/.env") == "basename .env"
    assert stores.match("/srv/.env.example") is None
    assert stores.match("/srv/update .env") is None


def test_plain_round_trip_and_rejects():
    model = merge_layers([default_layer()]).model
    assert from_plain(to_plain(model)) == model
    assert isinstance(from_plain(to_plain(model)), CompiledPolicy)
    for bad in (None, (), ("x",) * 7, to_plain(model)[:-1], (*to_plain(model)[:-1], (1,))):
        with pytest.raises(ValueError):
            from_plain(bad)


def test_a_policy_built_by_hand_compiles_on_demand():
    pol = Policy(data={"secret_stores": {"basenames": ["*.Vault", "Token.txt"]}}, fingerprint="f" * 64, sources=())
    assert pol.compiled is None
    assert pol.model.secret_stores.basenames == ("token.txt", "*.vault")
    assert pol.model.scan.categories is None and pol.model.events.max_bytes is None
    assert pol.model == compile_policy(pol.data)


def test_a_snapshot_hit_carries_the_model_and_compiles_nothing(tmp_path, monkeypatch):
    load_or_create_key(get_paths())
    first = load_policy(cwd=tmp_path)
    assert first.compiled is not None

    def boom(*_a, **_k):
        raise AssertionError("a snapshot hit compiled the policy")

    monkeypatch.setattr(mergemod, "compile_policy", boom)
    monkeypatch.setattr(compiledmod, "compile_policy", boom)
    again = load_policy(cwd=tmp_path)
    assert again.compiled == first.compiled and again.model is again.compiled
