"""Finding the stores to cover (tcg.sandbox.stores) and scrubbing the environment
(tcg.sandbox.envscrub), on real directories."""

from __future__ import annotations

import os

from tcg.keyhash import load_or_create_key
from tcg.paths import get_paths
from tcg.policy.access import secret_store_rules
from tcg.policy.load import load_policy
from tcg.sandbox import _plan, _scrub, settings
from tcg.sandbox.envscrub import ValueVerdicts, scrub
from tcg.sandbox.stores import WalkCache, find_stores, roots_for


def _setup(tmp_path):
    home = tmp_path / "home"
    proj = home / "src" / "app"
    (proj / ".git").mkdir(parents=True)
    (proj / "svc" / "api").mkdir(parents=True)
    (proj / "node_modules" / "pkg").mkdir(parents=True)
    (proj / ".env").write_text("A_TOKEN=x\n")
    (proj / ".env.example").write_text("A_TOKEN=\n")
    (proj / "svc" / "api" / ".env.production").write_text("DB_PASSWORD=y\n")
    (proj / "node_modules" / "pkg" / ".env").write_text("VENDORED=1\n")
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text("k")
    (home / ".ssh" / "id_ed25519.pub").write_text("p")
    (home / ".netrc").write_text("machine x password y\n")
    (home / ".config" / "gh").mkdir(parents=True)
    (home / ".config" / "gh" / "hosts.yml").write_text("t: 1\n")
    (home / "other").mkdir()
    (home / "other" / ".env").write_text("OTHER=1\n")  # a sibling tree: only with sandbox.roots
    return home, proj


def _found(policy, home, proj, cache=None, extra=()):
    env = {"HOME": str(home)}
    rules = secret_store_rules(policy, env)
    skip = frozenset(s.lower() for s in settings(policy).skip_dirs)
    roots = roots_for(str(proj), str(home), rules.segments, [], list(extra))
    return find_stores(roots, lambda p: rules.store_match(p) is not None, skip,
                       cache or WalkCache(None, None, ""), 20000)


def test_the_places_searched(tmp_path):
    policy = load_policy(include_repo=False)
    home, proj = _setup(tmp_path)
    stores, partial = _found(policy, home, proj)
    rel = sorted(os.path.relpath(s, home) for s in stores)
    assert rel == [".config/gh/hosts.yml", ".netrc", ".ssh/id_ed25519", "src/app/.env", "src/app/svc/api/.env.production"]
    assert not partial
    stores, _ = _found(policy, home, proj, extra=[str(home / "other")])
    assert str(home / "other" / ".env") in stores


def test_the_remembered_walk_sees_a_new_store_and_ignores_a_forged_cache(tmp_path):
    policy = load_policy(include_repo=False)
    home, proj = _setup(tmp_path)
    key = os.urandom(32)
    cache = WalkCache(str(tmp_path / "cache"), key, "salt")
    first, _ = _found(policy, home, proj, cache)
    (proj / "svc" / "api" / ".env.local").write_text("NEW=1\n")
    second, _ = _found(policy, home, proj, cache)
    assert set(second) - set(first) == {str(proj / "svc" / "api" / ".env.local")}
    for f in (tmp_path / "cache" / "sandbox").iterdir():  # a forged walk that lists nothing
        f.write_bytes(b"0" * 64 + b"\n" + f.read_bytes().split(b"\n", 1)[1])
    third, _ = _found(policy, home, proj, cache)
    assert third == second


def test_the_remembered_walk_sees_a_store_whose_directory_time_was_set_back(tmp_path):
    """A store created after the walk, its directory's modification time then set back
    with utime (what any process may do), is still found: the walk compares the change
    time, which utime cannot set."""
    policy = load_policy(include_repo=False)
    home, proj = _setup(tmp_path)
    cache = WalkCache(str(tmp_path / "cache"), os.urandom(32), "salt")
    api = proj / "svc" / "api"
    before = os.stat(api)
    first, _ = _found(policy, home, proj, cache)
    (api / ".env.local").write_text("NEW=1\n")
    os.utime(api, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(api).st_mtime_ns == before.st_mtime_ns
    second, _ = _found(policy, home, proj, cache)
    assert set(second) - set(first) == {str(api / ".env.local")}


def test_a_tree_beyond_max_dirs_is_partial(tmp_path):
    home, proj = _setup(tmp_path)
    rules = secret_store_rules(load_policy(include_repo=False), {"HOME": str(home)})
    _, partial = find_stores([(str(proj), -1)], lambda p: rules.store_match(p) is not None, frozenset(),
                             WalkCache(None, None, ""), 2)
    assert partial


def test_twins_and_empties_in_the_plan(tmp_path, monkeypatch):
    home, proj = _setup(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    policy = load_policy(include_repo=False)
    env = dict(os.environ)
    paths = get_paths(env)
    key = load_or_create_key(paths)
    rules = secret_store_rules(policy, env)
    targets, twins, _ = _plan(policy, rules, settings(policy), env, str(proj), str(home), paths, key)
    kinds = {os.path.relpath(p, home): ("twin" if i >= 0 else "empty") for p, i in targets}
    assert kinds["src/app/.env"] == "twin" and kinds[".netrc"] == "twin" and kinds[".ssh/id_ed25519"] == "empty"
    assert any(p == str(paths.key_path) for p, _ in targets)  # tcg's own key is covered
    assert all(b"A_TOKEN=x" not in t and b"DB_PASSWORD=y" not in t for t in twins)


def test_scrub_by_name_value_and_allow_list(tmp_path):
    policy = load_policy(include_repo=False)
    rules = secret_store_rules(policy, {})
    env = {"PATH": "/bin", "HOME": "/h", "GITHUB_TOKEN": "ghp_x", "TCG_SESSION": "s", "NPM_TOKEN": "npm_x",
           "TOKENIZERS_PARALLELISM": "false", "CFG": "sk_live_" + "Ab3dE6gH9jK2mN5pQ8sT1vW4", "EDITOR": "vim"}
    out, removed = scrub(env, rules.secret_var, ["NPM_*"], ValueVerdicts(policy, None, None))
    assert removed == ["CFG", "GITHUB_TOKEN"]
    assert set(out) == {"PATH", "HOME", "TCG_SESSION", "NPM_TOKEN", "TOKENIZERS_PARALLELISM", "EDITOR"}


def test_the_whole_environment_verdict_is_remembered_and_signed(tmp_path):
    policy = load_policy(include_repo=False)
    rules = secret_store_rules(policy, {})
    key = os.urandom(32)
    env = {"PATH": "/bin", "DEPLOY": "sk_live_" + "Zy3dE6gH9jK2mN5pQ8sT1vW4", "TCG_SESSION": "a"}
    conf = settings(None)  # nothing allowed through
    out1, removed1 = _scrub(policy, env, rules, conf, str(tmp_path), key)
    assert removed1 == ["DEPLOY"]
    verdicts = ValueVerdicts(policy, str(tmp_path), key)
    assert verdicts.whole({**env, "TCG_SESSION": "b"}, [])[1] == ["DEPLOY"]  # TCG_* do not count
    assert ValueVerdicts(policy, str(tmp_path), os.urandom(32)).whole(env, [])[1] is None  # another key
    data = (tmp_path / "sandbox" / "env-verdicts.bin").read_bytes()
    assert b"sk_live_" not in data and b"Zy3dE6" not in data


def test_a_misspelled_sandbox_setting_is_an_error_naming_the_line(tmp_path):
    import pytest

    from tcg.errors import PolicyError
    from tcg.policy.load import read_layer

    p = tmp_path / "policy.toml"
    p.write_text('[sandbox]\nmechanism = "auto"\non-unavailable = "maybe"\n')
    with pytest.raises(PolicyError) as exc:
        read_layer(p, "user")
    assert exc.value.line == 3 and "block, warn" in exc.value.message
