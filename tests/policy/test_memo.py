"""PolicyMemo (tcg.policy.load): a long-lived process's policy loads are exact at
every load — an edit applies to the next one — and unchanged layers give the
Policy object already loaded."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcg.digest import blake2b_256
from tcg.errors import PolicyError
from tcg.paths import get_paths
from tcg.policy.load import PolicyMemo, load_policy
from tcg.policy.sources import default_text, sources_key

# Small valid user layers that give different effective policies, and one that is broken.
LAYERS = (
    None,  # no user file
    '[decisions.human]\nsecret-store-read = "block"\n',
    '[decisions.human]\nsecret-store-read = "ask"\n',
    '[secret_stores]\nbasenames = ["*.memo-secret"]\n',
    '[decisions.human]\nsecret-store-read = "block"\nthis is = not toml ]\n',
)


def write_user(text: str | None) -> Path:
    p = get_paths().policy_file
    p.parent.mkdir(parents=True, exist_ok=True)
    if text is None:
        p.unlink(missing_ok=True)
    else:
        p.write_text(text)
    return p


def fingerprint_or_error(load, cwd: Path) -> str:
    try:
        return load(cwd).fingerprint
    except PolicyError as exc:
        return f"error: {exc}"


def test_unchanged_layers_give_the_same_policy_object(tmp_path):
    write_user(LAYERS[1])
    memo = PolicyMemo()
    first = memo.load(tmp_path)
    assert memo.load(tmp_path) is first
    assert first.fingerprint == load_policy(cwd=tmp_path).fingerprint


def test_an_edit_applies_to_the_next_load(tmp_path):
    write_user(LAYERS[1])
    memo = PolicyMemo()
    before = memo.load(tmp_path)
    write_user(LAYERS[2])
    after = memo.load(tmp_path)
    assert after.fingerprint != before.fingerprint
    assert after.fingerprint == load_policy(cwd=tmp_path).fingerprint
    write_user(LAYERS[1])  # back: the first load's object again
    assert memo.load(tmp_path) is before


def test_a_broken_layer_raises_every_time_until_mended(tmp_path):
    write_user(LAYERS[1])
    memo = PolicyMemo()
    good = memo.load(tmp_path)
    path = write_user(LAYERS[4])
    for _ in range(2):
        with pytest.raises(PolicyError) as info:
            memo.load(tmp_path)
        assert info.value.path == str(path)
    write_user(LAYERS[1])
    assert memo.load(tmp_path) is good


def test_a_repository_layer_is_found_per_directory(tmp_path):
    repo = tmp_path / "repo"
    (repo / ".tcg").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    memo = PolicyMemo()
    outside = memo.load(tmp_path)
    assert memo.load(repo).fingerprint == outside.fingerprint  # no repository layer yet
    (repo / ".tcg" / "policy.toml").write_text('[secret_stores]\nbasenames = ["*.repo-secret"]\n')
    inside = memo.load(repo)
    assert inside.fingerprint != outside.fingerprint
    assert inside.fingerprint == load_policy(cwd=repo).fingerprint
    assert memo.load(tmp_path) is outside


def test_memory_is_bounded(tmp_path):
    memo = PolicyMemo()
    for i in range(PolicyMemo.KEEP * 2):
        write_user(f'[secret_stores]\nbasenames = ["*.s{i}"]\n')
        memo.load(tmp_path)
    assert len(memo._by_key) == PolicyMemo.KEEP


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.integers(0, len(LAYERS) - 1), min_size=1, max_size=12))
def test_memo_loads_what_a_fresh_load_does(tmp_path, edits):
    """Whatever order the user file is edited in, each memo load gives the policy
    (or the error) a fresh load_policy gives at that moment."""
    memo = PolicyMemo()
    for i in edits:
        write_user(LAYERS[i])
        assert fingerprint_or_error(memo.load, tmp_path) == fingerprint_or_error(
            lambda cwd: load_policy(cwd=cwd), tmp_path)


def test_sources_key_is_the_hash_of_all_parts():
    """The kept hash state of the default's text changes nothing in the key: the
    same as hashing every part in one go, for the built-in default and another."""
    texts = [("user", "/x/policy.toml", "a = 1\n"), ("repo", "/r/.tcg/policy.toml", "b = 2\n")]
    for default in (default_text(), "another default\n", default_text()):
        h = blake2b_256()
        for part in (default, *(f"{k}\0{p}\0{t}" for k, p, t in texts)):
            h.update(b"\1" + part.encode("utf-8", "surrogatepass"))
        assert sources_key(default, texts) == h.hexdigest()
        assert sources_key(default, texts[:1]) != sources_key(default, texts)
