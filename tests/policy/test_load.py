"""Loading, layering, validation and fingerprint of the policy (docs/policy.md)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tcg.errors import PolicyError
from tcg.paths import get_paths
from tcg.policy.load import (
    default_layer,
    fingerprint_of,
    load_policy,
    merge_layers,
    read_layer,
)
from tcg.policy.model import ACTORS, Decision
from tcg.policy.reasons import REASONS
from tcg.policy.schema import POLICY_DECISIONS

# The codes a policy decides per actor (the others are outcomes, not choices).
DECIDED = ("secret-store-read", "credential-dump", "self-protection", "unresolved-path", "unparsable-line")


def user_policy(text: str) -> Path:
    p = get_paths().policy_file
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git work tree whose .tcg/policy.toml tries to loosen the policy."""
    r = tmp_path / "repo"
    (r / ".tcg").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(r)], check=True)
    (r / ".env").write_text("API_TOKEN=not-a-real-secret\n")
    (r / ".tcg" / "policy.toml").write_text(
        "[decisions.agent]\n"
        'secret-store-read = "allow"\n'
        "[decisions.human]\n"
        'secret-store-read = "block"\n'
        "[secret_stores]\n"
        'allow_basenames = [".env"]\n'
        'basenames = ["*.custom-secret"]\n'
    )
    return r


# ---------------------------------------------------------------- default


def test_builtin_default_is_complete_and_valid():
    layer = default_layer()
    pol = merge_layers([layer])
    for actor in ACTORS:
        for code in DECIDED:
            assert code in REASONS
            value = pol.model.identity.decision(actor, code)
            assert value in POLICY_DECISIONS, (actor, code)
    assert pol.decision_for("agent", "secret-store-read") is Decision.BLOCK
    assert pol.decision_for("agent", "credential-dump") is Decision.BLOCK
    assert pol.decision_for("human", "secret-store-read") is Decision.SANITIZE
    assert pol.decision_for("human", "credential-dump") is Decision.SANITIZE
    assert ".env" in pol.model.secret_stores.basenames
    assert ".ssh" in pol.model.secret_stores.segments
    assert re.fullmatch(r"[0-9a-f]{64}", pol.fingerprint)


def test_fresh_install_uses_only_the_builtin_default(tmp_path):
    pol = load_policy(cwd=tmp_path)
    assert pol.sources == ("<builtin>",)
    assert pol.notices == ()
    assert pol.fingerprint == merge_layers([default_layer()]).fingerprint
    assert pol.snapshot_id == f"tcg-default@v1:{pol.fingerprint[:12]}"
    assert pol.ref() == {"snapshot": pol.snapshot_id, "fingerprint": pol.fingerprint}


def test_unknown_code_defaults_to_block():
    pol = load_policy()
    assert pol.decision_for("agent", "no-such-code") is Decision.BLOCK
    assert pol.decision_for("agent", "no-such-code", Decision.ASK) is Decision.ASK


# ---------------------------------------------------------------- layering


def test_user_file_layers_over_the_default(tmp_path):
    p = user_policy(
        "[decisions.human]\n"
        'credential-dump = "BLOCK"\n'
        "[secret_stores]\n"
        'basenames = ["*.vault"]\n'
        'allow_basenames = ["demo.pem"]\n'
        "[clipboard]\n"
        "interval = 2\n"
    )
    pol = load_policy(cwd=tmp_path)
    assert pol.sources == ("<builtin>", str(p))
    assert pol.decision_for("human", "credential-dump") is Decision.BLOCK
    assert pol.decision_for("agent", "credential-dump") is Decision.BLOCK  # untouched
    basenames = pol.model.secret_stores.basenames
    assert "*.vault" in basenames and ".env" in basenames  # protect lists are unioned
    assert "demo.pem" in pol.model.secret_stores.allow_basenames
    assert pol.model.surfaces.clipboard_interval == 2
    assert pol.notices == ()


def test_user_file_may_loosen(tmp_path):
    user_policy('[decisions.agent]\nsecret-store-read = "ask"\n')
    assert load_policy(cwd=tmp_path).decision_for("agent", "secret-store-read") is Decision.ASK


def test_tcg_policy_names_another_file(tmp_path, monkeypatch):
    user_policy('[decisions.human]\ncredential-dump = "block"\n')
    other = tmp_path / "elsewhere.toml"
    other.write_text('[decisions.human]\ncredential-dump = "ask"\n')
    monkeypatch.setenv("TCG_POLICY", str(other))
    pol = load_policy(cwd=tmp_path)
    assert pol.sources == ("<builtin>", str(other))
    assert pol.decision_for("human", "credential-dump") is Decision.ASK


def test_tcg_policy_missing_file_is_an_error(tmp_path, monkeypatch):
    missing = tmp_path / "nope.toml"
    monkeypatch.setenv("TCG_POLICY", str(missing))
    with pytest.raises(PolicyError) as err:
        load_policy(cwd=tmp_path)
    assert str(missing) in err.value.message
    assert "TCG_POLICY" in (err.value.hint or "")


def test_repo_policy_can_only_tighten(repo):
    pol = load_policy(cwd=repo)
    assert pol.sources[-1] == str(repo / ".tcg" / "policy.toml")
    # loosening attempts have no effect ...
    assert pol.decision_for("agent", "secret-store-read") is Decision.BLOCK
    assert ".env" not in pol.model.secret_stores.allow_basenames
    # ... and say so
    joined = "\n".join(pol.notices)
    assert "decisions.agent.secret-store-read" in joined and "only tighten" in joined
    assert "secret_stores.allow_basenames" in joined and "cannot add exceptions" in joined
    # tightening works
    assert pol.decision_for("human", "secret-store-read") is Decision.BLOCK
    assert "*.custom-secret" in pol.model.secret_stores.basenames
    assert ".env" in pol.model.secret_stores.basenames


def test_repo_policy_is_found_from_a_subdirectory(repo):
    sub = repo / "src" / "pkg"
    sub.mkdir(parents=True)
    assert load_policy(cwd=sub).decision_for("human", "secret-store-read") is Decision.BLOCK


def test_repo_policy_search_stops_at_the_git_root(repo):
    # A .tcg above the repository does not apply inside it.
    (repo.parent / ".tcg").mkdir()
    (repo.parent / ".tcg" / "policy.toml").write_text('[decisions.human]\ncredential-dump = "block"\n')
    pol = load_policy(cwd=repo)
    assert pol.decision_for("human", "credential-dump") is Decision.SANITIZE


def test_repo_policy_search_stops_at_a_dangling_git_entry(repo):
    # A worktree whose gitfile points nowhere (or a dangling .git symlink) is still
    # the project root, as for every other surface (tcg.osutil.dot_git_dir): the
    # .tcg above it does not apply.
    inner = repo / "vendor" / "lib"
    inner.mkdir(parents=True)
    (inner / ".git").symlink_to(inner / "gone")
    pol = load_policy(cwd=inner)
    assert pol.sources[-1] != str(repo / ".tcg" / "policy.toml")
    assert pol.decision_for("human", "secret-store-read") is not Decision.BLOCK


def test_repo_cannot_change_settings_name_or_undecided_codes(tmp_path):
    r = tmp_path / "r"
    (r / ".tcg").mkdir(parents=True)
    (r / ".git").mkdir()
    (r / ".tcg" / "policy.toml").write_text(
        '[policy]\nname = "harmless"\n'
        "[clipboard]\ninterval = 100\n"
        '[decisions.agent]\ninternal-error = "allow"\n'
    )
    base = load_policy(cwd=tmp_path)
    pol = load_policy(cwd=r)
    assert pol.name == "tcg-default"
    assert pol.model.surfaces.clipboard_interval == base.model.surfaces.clipboard_interval
    # A code no lower layer decides is BLOCK, so "allow" from a repo cannot stick.
    assert pol.decision_for("agent", "internal-error") is Decision.BLOCK
    assert len(pol.notices) == 3


def test_repo_layer_skipped_when_asked(repo):
    pol = load_policy(cwd=repo, include_repo=False)
    assert pol.sources == ("<builtin>",)


def test_repo_allow_for_agent_still_blocks_cat_env(repo, monkeypatch):
    """With the engine in place, the loosening repo file cannot make `cat .env` run."""
    from tcg.decide.line import evaluate_line

    pol = load_policy(cwd=repo)
    verdict = evaluate_line(pol, "cat .env", "agent", cwd=repo)
    assert verdict.decision is Decision.BLOCK
    assert verdict.reason == "secret-store-read"

    proc = subprocess.run(
        [sys.executable, "-m", "tcg", "check", "--actor", "agent", "cat .env"],
        cwd=repo, capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        ('[decisions.agent]\nsecret-store-read = "block"\nx = [1,\n', 3, "invalid TOML"),
        ('[policy]\nname = "x"\nname = "y"\n', 3, "invalid TOML"),
        ('# comment\n[secret_stores]\nbasename = [".env"]\n', 3, "unknown key 'secret_stores.basename'"),
        ("[nonsense]\na = 1\n", 1, "unknown key 'nonsense'"),
        (
            '[decisions.agent]\nsecret-store-read = "block"\n[decisions.human]\nsecret-store-read = "maybe"\n',
            4,
            "is not a decision",
        ),
        ('[decisions.agent]\ncredential-dump = "relocate"\n', 2, "is not a decision"),
        ('[decisions.robot]\ncredential-dump = "block"\n', 2, "unknown actor"),
        ('[decisions.agent]\ncat-env = "allow"\n', 2, "unknown reason code 'cat-env'"),
        ('[secret_stores]\n\nsegments = ".ssh"\n', 3, "must be a list of strings"),
        ("[clipboard]\ninterval = true\n", 2, "wrong type"),
        ('[clipboard]\ninterval = "fast"\n', 2, "wrong type"),
        ('[launch]\non-findings = "warn"\n', 2, "is not a decision"),
        ('decisions.agent.secret-store-read = "nah"\n', 1, "is not a decision"),
        (
            '[[credential_dumps]]\nid = "one"\ncommand = ["x"]\n\n[[credential_dumps]]\nid = "two"\n'
            'command = ["y"]\ncomand = ["z"]\n',
            8,
            "unknown field 'comand' in [[credential_dumps]] 'two'",
        ),
        (
            '[[credential_dumps]]\nid = "a"\ncommand = "x"\n[[credential_dumps]]\nid = "b"\ncommand = "y"\n'
            "args = 3\n",
            7,
            "must be a string or a list of strings",
        ),
        ('[[credential_dumps]]\nid = "a"\ncommand = "x"\ndescription = ["no"]\n', 4, "must be a string"),
        ('[[credential_dumps]]\nid = "a"\ncommand = "x"\n[[credential_dumps]]\nid = "Not Kebab"\n', 5, "kebab-case id"),
        ('[[credential_dumps]]\nid = "a"\nargs = ["get"]\n', 2, "command is missing"),
        ('[[credential_dumps]]\ncommand = ["x"]\n', 1, "kebab-case id"),
    ],
)
def test_validation_errors_name_file_line_and_hint(tmp_path, text, line, needle):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(PolicyError) as err:
        read_layer(f, "user")
    exc = err.value
    assert exc.path == str(f)
    assert exc.line == line, exc.message
    assert exc.message.startswith(f"{f}:{line}: ")
    assert needle in exc.message
    assert exc.hint
    assert exc.exit_code == 2


def test_invalid_user_policy_fails_load(tmp_path):
    p = user_policy("[decisions.agent\n")
    with pytest.raises(PolicyError) as err:
        load_policy(cwd=tmp_path)
    assert str(p) in err.value.message


def test_invalid_repo_policy_fails_load(repo):
    (repo / ".tcg" / "policy.toml").write_text('[decisions.agent]\nsecret-store-read = 3\n')
    with pytest.raises(PolicyError) as err:
        load_policy(cwd=repo)
    assert ".tcg/policy.toml:2:" in err.value.message


def test_repo_may_add_but_not_replace_table_entries(tmp_path):
    r = tmp_path / "r"
    (r / ".tcg").mkdir(parents=True)
    (r / ".git").mkdir()
    (r / ".tcg" / "policy.toml").write_text(
        '[[credential_dumps]]\nid = "my-vault"\ncommand = ["myvault"]\nargs = ["dump"]\n'
        '[[credential_dumps]]\nid = "gh-auth-token"\ncommand = ["nothing-to-see"]\n'
    )
    base = {e["id"]: e for e in map(dict, load_policy(cwd=tmp_path).model.identity.credential_dumps)}
    pol = load_policy(cwd=r)
    entries = {e["id"]: e for e in map(dict, pol.model.identity.credential_dumps)}
    assert entries["my-vault"]["command"] == ["myvault"]
    if "gh-auth-token" in base:
        assert entries["gh-auth-token"] == base["gh-auth-token"]
        assert any("'gh-auth-token' ignored" in n for n in pol.notices)


def test_user_replaces_table_entries_by_id(tmp_path):
    user_policy('[[credential_dumps]]\nid = "my-vault"\ncommand = ["a"]\n')
    assert {e["id"]: e for e in map(dict, load_policy(cwd=tmp_path).model.identity.credential_dumps)}["my-vault"] == {
        "id": "my-vault", "command": ["a"]
    }


# ---------------------------------------------------------------- fingerprint


def test_fingerprint_is_sha256_of_canonical_json():
    pol = load_policy()
    canonical = json.dumps(pol.data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    assert pol.fingerprint == hashlib.sha256(canonical.encode()).hexdigest()
    assert fingerprint_of(pol.data) == pol.fingerprint


BASE_USER = (
    "# my policy\n"
    "[decisions.human]\n"
    'credential-dump = "block"\n'
    "\n"
    "[secret_stores]\n"
    'basenames = ["*.vault", "*.sealed"]\n'
)


@pytest.mark.parametrize(
    ("edited", "changes"),
    [
        (BASE_USER.replace('"block"', '"ask"'), True),
        (BASE_USER.replace('"*.sealed"', '"*.sealed", "*.box"'), True),
        (BASE_USER + "[clipboard]\ninterval = 1.5\n", True),
        (BASE_USER.replace("# my policy", "# a different comment") + "\n\n# trailing\n", False),
        ("\n\n" + BASE_USER.replace(" = ", "   =   ").replace("\n", "  \n"), False),
        (BASE_USER.replace('["*.vault", "*.sealed"]', '[\n  "*.sealed",\n  "*.vault",\n]'), False),
        (BASE_USER.replace('"block"', '"BLOCK"'), False),
    ],
)
def test_fingerprint_changes_iff_the_effective_policy_changes(tmp_path, edited, changes):
    user_policy(BASE_USER)
    before = load_policy(cwd=tmp_path)
    user_policy(edited)
    after = load_policy(cwd=tmp_path)
    assert (before.fingerprint != after.fingerprint) is changes
    assert (before.snapshot_id != after.snapshot_id) is changes


def test_restating_a_default_does_not_change_the_fingerprint(tmp_path):
    base = load_policy(cwd=tmp_path)
    user_policy('[decisions.agent]\nsecret-store-read = "block"\n[secret_stores]\nbasenames = [".env"]\n')
    assert load_policy(cwd=tmp_path).fingerprint == base.fingerprint


def test_fingerprint_is_stable_across_processes(tmp_path):
    user_policy(BASE_USER)
    code = "from tcg.policy.load import load_policy; print(load_policy().fingerprint)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60,
        cwd=tmp_path, env={**os.environ, "PYTHONHASHSEED": "123"},
    ).stdout.strip()
    assert out == load_policy(cwd=tmp_path).fingerprint
