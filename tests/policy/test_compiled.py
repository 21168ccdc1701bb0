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


def _settings_of(model: CompiledPolicy) -> dict[str, object]:
    """The session, inbound, sandbox, launcher and identity fields as the TOML names them."""
    ident, sess, inb, box, launch = model.identity, model.session, model.inbound, model.sandbox, model.launch
    return {
        "policy": {"name": ident.name, "version": ident.version},
        "decisions": {actor: dict(table) for actor, table in ident.decisions},
        "credential_dumps": [dict(entry) for entry in ident.credential_dumps],
        "session": {"on-station-gone-human": sess.on_station_gone_human,
                    "on-station-gone-agent": sess.on_station_gone_agent,
                    "verdict-timeout-ms": sess.verdict_timeout_ms},
        "inbound": {"surfaces": {s: dict(t) for s, t in inb.surfaces},
                    "ml": {"model": inb.ml_model, "threshold": inb.ml_threshold}},
        "sandbox": {"mechanism": box.mechanism, "on-unavailable": box.on_unavailable, "bwrap": box.bwrap,
                    "allow_twins": list(box.allow_twins), "allow_env": list(box.allow_env),
                    "skip_dirs": list(box.skip_dirs), "roots": list(box.roots), "max-dirs": box.max_dirs},
        "agents": {"known": list(launch.known_agents)},
        "launch": {"on-findings": launch.on_findings, "on-partial": launch.on_partial,
                   "on-error": launch.on_error, "on-unmediated": launch.on_unmediated},
        "entities": {"placeholder-write": launch.placeholder_write},
    }


def _expected(data: dict) -> dict[str, object]:
    """The same fields read from the merged TOML document itself."""
    def table(*path: str) -> dict:
        node = data
        for part in path:
            node = node.get(part, {})
        return node

    out = _settings_of(compile_policy({}))  # every key present, unset
    for section, fields in out.items():
        if section in ("decisions", "credential_dumps"):
            continue
        for key in fields:  # type: ignore[attr-defined]
            if key == "surfaces":
                fields[key] = table("inbound", "surfaces")  # type: ignore[index]
            elif key in ("model", "threshold"):
                value = table("inbound", "ml").get(key)
                fields[key] = float(value) if key == "threshold" and value is not None else value  # type: ignore[index]
            elif key in table(section):
                fields[key] = table(section)[key]  # type: ignore[index]
    out["policy"] = {"name": table("policy").get("name", "tcg"), "version": table("policy").get("version", 1)}
    out["decisions"] = data.get("decisions", {})
    out["credential_dumps"] = data.get("credential_dumps", [])
    return out


def test_each_setting_matches_the_default_toml():
    policy = merge_layers([default_layer()])
    model = policy.model
    assert _settings_of(model) == _expected(policy.data)
    assert sorted(model.launch.known_agents) == sorted(default_layer().data["agents"]["known"])
    # the defaults a surface falls back on are the ones the file states
    assert model.session.verdict_timeout_ms == 2000 and model.sandbox.max_dirs == 20000
    assert "claude" in model.launch.known_agents and model.launch.placeholder_write == "refuse"
    assert dict(model.inbound.surface("user-prompt"))["invisible"] == "block"
    assert model.inbound.surface("no-such-surface") == () and model.inbound.ml_model is None


def test_each_setting_follows_a_user_override(tmp_path):
    user = {
        "policy": {"name": "mine", "version": 3},
        "decisions": {"agent": {"secret-store-read": "ask"}, "human": {"credential-dump": "block"}},
        "session": {"on-station-gone-human": "block", "on-station-gone-agent": "allow", "verdict-timeout-ms": 750},
        "inbound": {"surfaces": {"web": {"injection": "block"}},
                    "ml": {"model": str(tmp_path / "m.onnx"), "threshold": 0.25}},
        "sandbox": {"mechanism": "bwrap", "on-unavailable": "warn", "bwrap": "/opt/bwrap",
                    "allow_env": ["NPM_*"], "roots": ["~/work"], "max-dirs": 10},
        "agents": {"known": ["claude", "mine"]},
        "launch": {"on-findings": "ask", "on-unmediated": "allow"},
        "entities": {"placeholder-write": "keep"},
    }
    policy = merge_layers([default_layer(), mergemod.Layer("user", str(tmp_path / "policy.toml"), user)])
    model = policy.model
    assert _settings_of(model) == _expected(policy.data)
    assert (model.identity.name, model.identity.version) == ("mine", 3) == (policy.name, policy.version)
    assert model.session == ("block", "allow", 750)
    assert dict(model.inbound.surface("web"))["injection"] == "block"
    assert (model.inbound.ml_model, model.inbound.ml_threshold) == (str(tmp_path / "m.onnx"), 0.25)
    assert (model.sandbox.mechanism, model.sandbox.on_unavailable, model.sandbox.bwrap) == ("bwrap", "warn", "/opt/bwrap")
    assert "NPM_*" in model.sandbox.allow_env and "~/work" in model.sandbox.roots and model.sandbox.max_dirs == 10
    assert "mine" in model.launch.known_agents
    assert (model.launch.on_findings, model.launch.on_unmediated, model.launch.placeholder_write) == ("ask", "allow", "keep")
    assert policy.decision_for("agent", "secret-store-read").value == "ask"
    assert policy.decision_for("human", "credential-dump").value == "block"
    assert from_plain(to_plain(model)) == model


def test_a_policy_without_tables_reads_every_reader_default():
    pol = Policy(data={}, fingerprint="0" * 64, sources=())
    assert (pol.name, pol.version) == ("tcg", 1)
    assert pol.decision_for("agent", "secret-store-read").value == "block"
    assert pol.model.session == (None, None, None) and pol.model.inbound.surfaces == ()
    assert pol.model.sandbox.max_dirs is None and pol.model.launch.known_agents == ()
