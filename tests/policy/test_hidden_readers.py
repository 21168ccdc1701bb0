"""Reads the line policy used to miss: word splitting on IFS, git alias bodies,
``curl file://``, ``sqlite3 readfile``, git object ids of secret stores, and
directories read recursively. Real files and real git in a temporary project."""

from __future__ import annotations

import os
import subprocess

import pytest

from tcg.decide.line import evaluate_line
from tcg.policy.load import load_policy


@pytest.fixture
def policy():
    return load_policy(include_repo=False)


@pytest.fixture
def project(tmp_path):
    p = tmp_path / "proj"
    (p / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=p, check=True)
    (p / ".env").write_text("DB_PASSWORD=x\n")
    (p / "README.md").write_text("# readme\n")
    (p / "src" / "app.py").write_text("print(1)\n")
    subprocess.run(["git", "add", "-f", ".env", "README.md", "src"], cwd=p, check=True)
    return p


def decide(policy, line, cwd, actor="agent"):
    v = evaluate_line(policy, line, actor, cwd=cwd, env=os.environ)
    return v.decision.value, v.reason


def blob(project, name):
    return subprocess.run(["git", "hash-object", name], cwd=project, capture_output=True, text=True,
                          check=True).stdout.strip()


@pytest.mark.parametrize(("line", "expected"), [
    ("IFS=_; x=cat_.env; $x", ("block", "secret-store-read")),
    ("x='cat .env'; $x", ("block", "secret-store-read")),
    ("IFS=,; x=head,-n1,.env; $x", ("block", "secret-store-read")),
    ("IFS=$SEP; x=cat_.env; $x", ("block", "unresolved-command")),
    ("IFS=_; x=ls_-la; $x", ("allow", "allowed")),
    ("x='ls -la'; $x", ("allow", "allowed")),
    ("x='cat .env'; echo \"$x\"", ("allow", "allowed")),  # quoted: not split, only printed
])
def test_word_splitting_on_ifs(policy, project, line, expected):
    assert decide(policy, line, project) == expected


@pytest.mark.parametrize(("line", "expected"), [
    ("git -c alias.x='!cat .env' x", ("block", "secret-store-read")),
    ("git -c alias.s='show HEAD:.env' s", ("block", "secret-store-read")),
    ("git config alias.leak '!cat ~/.netrc'", ("block", "secret-store-read")),
    ("git config --global alias.leak '!sh -c \"cat .env\"'", ("block", "secret-store-read")),
    ("git -c alias.x=\"$BODY\" x", ("block", "unresolved-command")),
    ("git config alias.st status", ("allow", "allowed")),
    ("git -c user.name=dev commit -m msg", ("allow", "allowed")),
])
def test_git_alias_bodies_are_code(policy, project, line, expected):
    assert decide(policy, line, project) == expected


@pytest.mark.parametrize(("line", "expected"), [
    ("curl -s file://$PWD/.env", ("block", "secret-store-read")),
    ("curl file:///proj/.env", ("block", "secret-store-read")),
    ("curl -s file://localhost/home/u/%2essh/id_rsa", ("block", "secret-store-read")),
    ("curl file:///etc/hostname", ("allow", "allowed")),
    ("curl -s https://example.com/.env", ("allow", "allowed")),  # a URL, not a file
    ("sqlite3 :memory: \"select readfile('.env')\"", ("block", "secret-store-read")),
    ("sqlite3 :memory: \"select readfile('.e'||'nv')\"", ("block", "unresolved-path")),
    ("sqlite3 app.db '.read ~/.pgpass'", ("block", "secret-store-read")),
    ("sqlite3 app.db 'select count(*) from users'", ("allow", "allowed")),
])
def test_urls_and_sql_that_open_files(policy, project, line, expected):
    assert decide(policy, line, project) == expected


def test_git_object_ids_of_secret_stores(policy, project):
    env_blob, readme_blob = blob(project, ".env"), blob(project, "README.md")
    assert decide(policy, f"git cat-file -p {env_blob}", project) == ("block", "secret-store-read")
    assert decide(policy, f"git show {env_blob[:10]}", project) == ("block", "secret-store-read")
    assert decide(policy, f"git cat-file -p {readme_blob}", project) == ("allow", "allowed")
    assert decide(policy, f"git cat-file -t {env_blob}", project) == ("allow", "allowed")  # the type only
    # a blob written straight into the object store: its file is unknown
    orphan = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=project, input="elsewhere\n",
                            capture_output=True, text=True, check=True).stdout.strip()
    assert decide(policy, f"git cat-file -p {orphan}", project) == ("block", "unresolved-path")
    assert decide(policy, f"echo {env_blob} | git cat-file --batch", project) == ("block", "unresolved-path")
    assert decide(policy, "git show HEAD~0", project)[0] == "allow"
    assert decide(policy, f"git cat-file -p {env_blob}", project, actor="human") == ("sanitize", "secret-store-read")


@pytest.mark.parametrize(("line", "expected"), [
    ("tar cf - .", ("block", "secret-store-read")),
    ("tar --create --file=out.tar .", ("block", "secret-store-read")),
    ("zip -qr - .", ("block", "secret-store-read")),
    ("grep -rn PASSWORD .", ("block", "secret-store-read")),
    ("grep -Rin PASSWORD", ("block", "secret-store-read")),  # no path: the working directory
    ("rsync -a ./ /tmp/backup/", ("block", "secret-store-read")),
    ("cp -r . /tmp/copy", ("block", "secret-store-read")),
    ("rg --hidden PASSWORD", ("block", "secret-store-read")),
    ("rg PASSWORD", ("allow", "allowed")),  # rg skips hidden files by default
    ("grep -rn PASSWORD --exclude=.env .", ("allow", "allowed")),
    ("grep -rn TODO src", ("allow", "allowed")),
    ("tar czf /tmp/src.tgz src", ("allow", "allowed")),
    ("tar xzf archive.tgz", ("allow", "allowed")),
    ("grep -n TODO README.md", ("allow", "allowed")),
    ("cp README.md src/", ("allow", "allowed")),
])
def test_recursive_reads_of_a_directory_holding_a_store(policy, project, line, expected):
    assert decide(policy, line, project) == expected
