"""Request check: normalisation, segments, symlinks, roots, policy entries."""

from __future__ import annotations

import pytest

from tcg.mcp.check_request import (
    RULE_DOTENV,
    RULE_POLICY,
    RULE_SSH_DIR,
    RULE_SSH_KEY,
    RequestChecker,
)

BLOCKED = {
    ".env": RULE_DOTENV, "a/.env": RULE_DOTENV, ".env.local": RULE_DOTENV,
    ".env.production": RULE_DOTENV, ".ENV": RULE_DOTENV, "%2Eenv": RULE_DOTENV,
    "%2eenv": RULE_DOTENV, "%252Eenv": RULE_DOTENV, "%25252Eenv": RULE_DOTENV,
    "sub\\..\\.env": RULE_DOTENV, "\\u002eenv": RULE_DOTENV, "\\x2eenv": RULE_DOTENV,
    "file:///srv/app/.env": RULE_DOTENV, "file:///srv/app/%2Eenv": RULE_DOTENV,
    "C:\\Users\\me\\.env": RULE_DOTENV, "cat .env": RULE_DOTENV, "'.env'": RULE_DOTENV,
    "~/.ssh/config": RULE_SSH_DIR, "/home/u/.ssh": RULE_SSH_DIR, "%2Essh/known_hosts": RULE_SSH_DIR,
    "id_rsa": RULE_SSH_KEY, "keys/ID_ED25519": RULE_SSH_KEY, "/x/id_ecdsa": RULE_SSH_KEY,
    "id_dsa": RULE_SSH_KEY,
}
ALLOWED = ["environment.txt", "my.env", "env", ".envrc", "id_rsa.pub", "docs/dotenv.md", "tools/call",
           "the environment", "ssh", "x.ssh.y", "2.0", ""]


@pytest.mark.parametrize(("text", "rule"), sorted(BLOCKED.items()))
def test_builtin_minimum(tmp_path, text, rule):
    assert RequestChecker(cwd=tmp_path).check_string(text) == rule


@pytest.mark.parametrize("text", ALLOWED)
def test_not_protected(tmp_path, text):
    assert RequestChecker(cwd=tmp_path).check_string(text) is None


def test_policy_cannot_remove_the_minimum_and_adds_entries(tmp_path):
    c = RequestChecker(["Secret-Plans.md", "*.kdbx", "prod-db"], cwd=tmp_path)
    assert c.check_string(".env") == RULE_DOTENV
    assert c.check_string("docs/secret-plans.md") == RULE_POLICY
    assert c.check_string("vault/Passwords.KDBX") == RULE_POLICY
    assert c.check_string("connect to PROD-DB now") == RULE_POLICY  # substring
    assert c.check_string("%70rod-db") == RULE_POLICY  # after normalisation
    assert c.check_string("readme.md") is None


def test_symlinks_relative_and_absolute(tmp_path):
    work = tmp_path / "w"
    work.mkdir()
    (work / ".env").write_text("X=1\n")
    (work / "innocent.txt").symlink_to(".env")
    (work / "abs.txt").symlink_to(work / ".env")
    ssh = tmp_path / "h" / ".ssh"
    ssh.mkdir(parents=True)
    (work / "keys").symlink_to(ssh)
    c = RequestChecker(cwd=work)
    assert c.check_string("innocent.txt") == RULE_DOTENV
    assert c.check_string(str(work / "innocent.txt")) == RULE_DOTENV
    assert c.check_string("abs.txt") == RULE_DOTENV
    assert c.check_string("keys/anything") == RULE_SSH_DIR
    assert c.check_string("please read innocent.txt") == RULE_DOTENV
    assert c.check_string("file://" + str(work / "innocent.txt")) == RULE_DOTENV
    assert c.check_string("plain.txt") is None


def test_roots_static_and_declared(tmp_path):
    work, root1, root2 = tmp_path / "w", tmp_path / "r1", tmp_path / "r2"
    for d in (work, root1, root2):
        d.mkdir()
    (tmp_path / ".env").write_text("X=1\n")
    (root1 / "cfg.txt").symlink_to(tmp_path / ".env")
    (root2 / "other.txt").symlink_to(tmp_path / ".env")
    c = RequestChecker(cwd=work, roots=[str(root1)])
    assert c.check_string("cfg.txt") == RULE_DOTENV
    assert c.check_string("other.txt") is None
    c.set_client_roots([root2.as_uri()])
    assert c.check_string("other.txt") == RULE_DOTENV


def test_cwd_inside_a_protected_directory(tmp_path):
    lookalike = tmp_path / "app.env.d"  # not a .env segment: nothing blocked
    inside = tmp_path / ".env.d"  # a dotenv directory: its existing entries are protected
    for d in (lookalike, inside):
        d.mkdir()
        (d / "readme.md").write_text("x")
    assert RequestChecker(cwd=lookalike).check_string("readme.md") is None
    assert RequestChecker(cwd=inside).check_string("readme.md") == RULE_DOTENV
    assert RequestChecker(cwd=inside).check_string("tools/call") is None  # not an existing entry


def test_every_string_of_a_message_keys_included(tmp_path):
    c = RequestChecker(cwd=tmp_path)
    msg = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
           "params": {"name": "x", "arguments": {"deep": [{"k": ["ok", {"id_rsa": 1}]}]}}}
    blocked = c.check(msg)
    assert blocked is not None and blocked.rule == RULE_SSH_KEY and blocked.reason == "protected-resource"
    msg["params"]["arguments"] = {"deep": "fine"}
    assert c.check(msg) is None


def test_the_policys_secret_stores_apply_to_paths(tmp_path):
    """The checker of a policy's model matches resolved paths against its secret stores
    (the shell's match); words that are no path, and allowed names, pass."""
    from tcg.mcp.check_request import RULE_SECRET_STORE
    from tcg.policy.load import load_policy

    (tmp_path / "server.pem").write_text("x")
    (tmp_path / "notes.md").write_text("x")
    c = RequestChecker.for_policy(load_policy(cwd=tmp_path, include_repo=False), cwd=tmp_path)
    assert c.check_string(str(tmp_path / "server.pem")) == RULE_SECRET_STORE
    assert c.check_string("server.pem") == RULE_SECRET_STORE  # relative, exists under the cwd
    assert c.check_string("~/.aws/credentials") == RULE_SECRET_STORE
    assert c.check_string("file:///srv/app/terraform.tfvars") == RULE_SECRET_STORE
    assert c.check_string(".env") == RULE_DOTENV  # the minimum keeps its own rule id
    for text in ("how do I rotate credentials?", "notes.md", str(tmp_path / "notes.md"), "/srv/id_rsa.pub"):
        assert c.check_string(text) is None, text
    assert RequestChecker(cwd=tmp_path).check_string(str(tmp_path / "server.pem")) is None  # no policy: minimum only
