"""A secret store git holds (`.env`, `*.p12` …) is a finding whatever its content.

Real git repositories in tmp_path. The planted value has no keyword and no known shape
(the detector does not report it), so every finding here comes from the store rule.
"""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

import jsonschema
import pytest

from tcg.cli import main
from tcg.policy.load import load_policy
from tcg.scan.engine import scan_paths
from tcg.scan.stores import STORE_RULE
from tests.helpers.leaks import assert_no_secret_written

from .gitutil import commit_file, git, init_repo, remove_file

_rng = random.Random(3)
VALUE = "".join(_rng.choice(string.ascii_letters + string.digits) for _ in range(22))
ENV = f"STRIPE_WEBHOOK={VALUE}\n"
SCHEMA = json.loads((Path(__file__).parent / "sarif-2.1.0-subset.schema.json").read_text())


def scan(args: list[str], capsys) -> tuple[int, str, str]:
    rc = main(["scan", *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def store_findings(repo: Path, **kw):
    res = scan_paths([repo], load_policy(include_repo=False), jobs=1, **kw)
    return res, [f for f in res.findings if f.rule_id == STORE_RULE]


def test_the_value_alone_is_not_a_detector_finding(tmp_path):
    """The premise: without the store rule this repository would scan clean."""
    r = init_repo(tmp_path / "r")
    commit_file(r, "notes.txt", ENV, "init")
    res, _ = store_findings(r)
    assert res.status == "clean" and res.findings == []


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_a_tracked_env_is_a_finding_in_every_format(tmp_path, fmt, capsys, tcg_home):
    r = init_repo(tmp_path / "r")
    commit_file(r, "README", "hi\n", "init")
    head = commit_file(r, ".env", ENV, "add env")
    rc, out, err = scan(["--history", str(r), "--format", fmt], capsys)
    assert rc == 1, out + err
    assert VALUE not in out + err and VALUE[:12] not in out + err
    if fmt == "text":
        assert f".env:1:1: {STORE_RULE} (secret) in commit {head[:12]}" in out
    elif fmt == "json":
        doc = json.loads(out)
        (f,) = doc["findings"]
        assert (f["rule_id"], f["path"], f["source"], f["commit"]) == (STORE_RULE, ".env", "history", head)
        assert f["blob"] == git(r, "rev-parse", "HEAD:.env") and f["length"] == len(ENV)
        assert doc["counts_by_rule"] == {STORE_RULE: 1}
    else:
        doc = json.loads(out)
        jsonschema.validate(doc, SCHEMA)
        (res,) = doc["runs"][0]["results"]
        assert res["ruleId"] == STORE_RULE
        assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == ".env"
    assert_no_secret_written(tcg_home, [VALUE])


def test_a_deleted_env_still_in_history_is_a_finding(tmp_path):
    r = init_repo(tmp_path / "r")
    commit_file(r, "README", "hi\n", "init")
    added = commit_file(r, "config/.env.production", ENV, "add")
    remove_file(r, "config/.env.production")
    res, found = store_findings(r)
    assert res.status == "findings"
    assert [(f.path, f.source, f.commit) for f in found] == [("config/.env.production", "history", added)]
    # --no-history reads the tracked files only: git no longer holds it there
    _, found = store_findings(r, history=False)
    assert found == []


def test_a_staged_env_is_a_finding_of_the_staged_scan(tmp_path, capsys):
    r = init_repo(tmp_path / "r")
    commit_file(r, "README", "hi\n", "init")
    (r / ".env").write_text(ENV)
    git(r, "add", ".env")
    rc, out, err = scan(["--staged", str(r)], capsys)
    assert rc == 1, out + err
    assert f".env:1:1: {STORE_RULE} (secret) in staged (index)" in out
    assert VALUE not in out + err
    # once committed, a later staged change elsewhere does not report it again
    git(r, "commit", "-q", "-m", "env")
    (r / "README").write_text("more\n")
    git(r, "add", "README")
    rc, out, _ = scan(["--staged", str(r)], capsys)
    assert rc == 0, out


def test_tracked_env_without_history(tmp_path):
    r = init_repo(tmp_path / "r")
    commit_file(r, "deploy/.env", ENV, "init")
    _, found = store_findings(r, history=False)
    assert [(f.path, f.source, f.commit) for f in found] == [("deploy/.env", "index", None)]


def test_untracked_and_template_stores_are_not_findings(tmp_path, capsys):
    """Git does not hold an untracked .env (the view masks it); a template is no store."""
    r = init_repo(tmp_path / "r")
    commit_file(r, ".gitignore", ".env.local\n", "init")
    commit_file(r, ".env.example", "STRIPE_WEBHOOK=changeme\n", "template")
    (r / ".env").write_text(ENV)  # untracked, not ignored
    (r / ".env.local").write_text(ENV)  # ignored
    for args in (["--history"], ["--no-history"]):
        rc, out, err = scan([*args, str(r)], capsys)
        assert rc == 0, out + err
        assert STORE_RULE not in out


def test_one_finding_per_distinct_blob_and_binary_stores_count(tmp_path):
    r = init_repo(tmp_path / "r")
    commit_file(r, ".env", ENV, "v1")
    commit_file(r, ".env", ENV + "OTHER=1\n", "v2")
    commit_file(r, "certs/client.p12", b"\x30\x82\x00\x00binary\x00keystore", "p12")
    commit_file(r, "home/.aws/config", "[default]\n", "aws dir")
    res, found = store_findings(r)
    assert sorted(f.path for f in found) == [".env", ".env", "certs/client.p12", "home/.aws/config"]
    assert len({f.hash for f in found}) == 4
    assert all(f.occurrences == 1 for f in found)  # history and index hold the same blob once
    # the hash is keyed: a blob id alone does not give it
    oid = git(r, "rev-parse", "HEAD:.env")
    assert all(oid[:16] != f.hash for f in found)


def test_allow_paths_and_disabled_rule_drop_the_finding(tmp_path, monkeypatch):
    r = init_repo(tmp_path / "r")
    commit_file(r, ".env", ENV, "init")
    user = tmp_path / "user.toml"
    for body in ('[scan]\nallow_paths = [".env"]\n', f'[detect]\ndisabled_rules = ["{STORE_RULE}"]\n'):
        user.write_text(body)
        monkeypatch.setenv("TCG_POLICY", str(user))
        res = scan_paths([r], load_policy(include_repo=False), jobs=1)
        assert res.status == "clean", body


def test_a_dotfiles_repository_matches_the_policy_path_globs(tmp_path, monkeypatch):
    """`~/.config/gh/hosts.yml` is a store by its absolute path only (no telling name):
    a repository rooted at the home directory that tracks it holds a store."""
    home = init_repo(tmp_path / "home")
    monkeypatch.setenv("HOME", str(home))
    commit_file(home, ".config/gh/hosts.yml", f"github.com:\n  oauth_token: {VALUE}\n", "dotfiles")
    commit_file(home, ".config/other/hosts.yml", "nothing\n", "other")
    _, found = store_findings(home)
    assert [f.path for f in found] == [".config/gh/hosts.yml"]
