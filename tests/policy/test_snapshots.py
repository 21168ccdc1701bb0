"""Policy snapshots (tcg/policy/snapshots.py): a second load of the same
layers skips TOML parsing, an edited layer is re-read, and a tampered snapshot
file is ignored — it cannot loosen the policy."""

from __future__ import annotations

import marshal

import pytest

from tcg.keyhash import load_or_create_key
from tcg.paths import get_paths
from tcg.policy import load as loadmod
from tcg.policy.load import load_policy


def _snapshot_file():
    return get_paths().cache / loadmod.PolicySnapshots.FILE


def _forbid_parsing(monkeypatch):
    def boom(*_a, **_k):
        raise AssertionError("TOML was parsed although a valid snapshot existed")

    monkeypatch.setattr(loadmod, "parse_toml", boom)
    monkeypatch.setattr(loadmod, "default_layer", boom)


def test_no_key_no_snapshot_written(tmp_path, fresh_key):
    load_policy(cwd=tmp_path)
    assert not _snapshot_file().exists()


def test_second_load_uses_the_snapshot(tmp_path, monkeypatch):
    load_or_create_key(get_paths())
    first = load_policy(cwd=tmp_path)
    assert _snapshot_file().exists()
    assert oct(_snapshot_file().stat().st_mode & 0o777) == "0o600"
    _forbid_parsing(monkeypatch)
    again = load_policy(cwd=tmp_path)
    assert (again.fingerprint, again.data, again.sources) == (first.fingerprint, first.data, first.sources)


def test_an_edited_user_policy_is_read_again(tmp_path, monkeypatch):
    load_or_create_key(get_paths())
    base = load_policy(cwd=tmp_path)
    user = get_paths().policy_file
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text('[decisions.human]\ncredential-dump = "block"\n')
    edited = load_policy(cwd=tmp_path)
    assert edited.fingerprint != base.fingerprint
    assert edited.decision_for("human", "credential-dump").value == "block"


def test_tampered_snapshot_is_ignored(tmp_path, monkeypatch):
    load_or_create_key(get_paths())
    honest = load_policy(cwd=tmp_path)
    path = _snapshot_file()
    mac, _, body = path.read_bytes().partition(b"\n")
    entries = marshal.loads(body)
    for entry in entries.values():  # loosen the agent's secret-store decision, keep it self-consistent
        entry["data"]["decisions"]["agent"]["secret-store-read"] = "allow"
        entry["fingerprint"] = loadmod.fingerprint_of(entry["data"])
    path.write_bytes(mac + b"\n" + marshal.dumps(entries))
    again = load_policy(cwd=tmp_path)
    assert again.fingerprint == honest.fingerprint
    assert again.decision_for("agent", "secret-store-read").value == "block"


@pytest.mark.parametrize("garbage", [b"", b"not a mac\n{}", b"\x00\xff"])
def test_unreadable_snapshot_is_ignored(tmp_path, garbage):
    load_or_create_key(get_paths())
    honest = load_policy(cwd=tmp_path)
    _snapshot_file().write_bytes(garbage)
    assert load_policy(cwd=tmp_path).fingerprint == honest.fingerprint
