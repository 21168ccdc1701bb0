"""The stat witness: a cache hit runs no git, and every change that could change the
scan result invalidates it (real git repositories; issue 6 acceptance, docs/agents.md "Cache")."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from tcg.launcher import fastpath, gate, state, witness
from tcg.paths import get_paths
from tests.launcher.conftest import TCG, commit, git, make_repo

FINGERPRINT = "test-policy"


@pytest.fixture
def trusting(monkeypatch):
    """No racy window: files written a moment before the witness count as settled.
    (Tests that exercise the window use the real RACY_NS.) The tests still sleep
    past a coarse clock tick before each change, as the real window would."""
    monkeypatch.setattr(witness, "RACY_NS", 0)


def settle() -> None:
    time.sleep(0.03)  # past the filesystem's coarse clock tick (ext4: one jiffy)


def witness_key(repo: Path) -> str | None:
    """The state key from the witness alone (None: the witness does not hold)."""
    root, _, key, _ = fastpath.witness_key(str(repo), get_paths())
    assert root == str(repo.resolve())
    return key


def git_key(repo: Path) -> str:
    """The state key git computes (and, as on every git-path lookup, a fresh witness)."""
    before = gate.GIT_KEYS[0]
    settle()
    _, keys = gate.lookup(repo, FINGERPRINT, get_paths())
    assert gate.GIT_KEYS[0] == before + 1
    return keys["state"]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """Tracked files in two directories, an untracked file, a wholly ignored directory,
    a directory holding only ignored files, and an empty directory."""
    r = make_repo(tmp_path / "repo")
    commit(r, ".gitignore", "build/\n*.log\n")
    commit(r, "a.txt", "value = aaaaaaaa\n")
    commit(r, "sub/b.txt", "b\n")
    (r / "untracked.txt").write_text("u\n")
    (r / "build" / "out").mkdir(parents=True)
    (r / "build" / "out" / "o.bin").write_text("x\n")
    (r / "logs").mkdir()
    (r / "logs" / "x.log").write_text("log\n")
    (r / "empty").mkdir()
    return r


def _same_size_same_mtime_edit(r: Path) -> None:
    st = os.stat(r / "a.txt")
    (r / "a.txt").write_text("value = bbbbbbbb\n")
    os.utime(r / "a.txt", ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(r / "a.txt").st_size == st.st_size


def _write(rel: str, text: str = "token\n"):
    def change(r: Path) -> None:
        (r / rel).parent.mkdir(parents=True, exist_ok=True)
        (r / rel).write_text(text)
    return change


def _git(*args: str):
    return lambda r: git(r, *args)


# (change, does git's key change too?) — the witness must fail for every one of them.
CHANGES = {
    "tracked edit, same size and mtime": (_same_size_same_mtime_edit, True),
    "untracked file, top level": (_write("new.txt"), True),
    "untracked file, new nested directory": (_write("new/deeper/f.txt"), True),
    "untracked file, directory of ignored files": (_write("logs/notes.txt"), True),
    "untracked file, empty directory": (_write("empty/f.txt"), True),
    "untracked file edited": (_write("untracked.txt", "changed\n"), True),
    "tracked file deleted": (lambda r: (r / "sub" / "b.txt").unlink(), True),
    "tracked file made executable": (lambda r: (r / "a.txt").chmod(0o755), True),
    ".gitignore changed": (_write(".gitignore", "build/\n"), True),
    ".git/info/exclude changed": (lambda r: (r / ".git" / "info" / "exclude").write_text("untracked.txt\n"), True),
    "staged": (lambda r: (_write("a.txt", "value = cccccccc\n")(r), git(r, "add", "a.txt")), True),
    "committed": (lambda r: commit(r, "c.txt", "c\n"), True),
    "tag": (_git("tag", "v1"), True),
    "branch": (_git("branch", "side"), True),
    "stash": (lambda r: (_write("a.txt", "stashed\n")(r), git(r, "stash")), True),
    "update-ref, new ref": (_git("update-ref", "refs/heads/other", "HEAD"), True),
    "update-ref, existing ref": (_git("update-ref", "refs/heads/main", "HEAD~1"), True),
    "notes": (_git("notes", "add", "-m", "n"), True),
    "config changed": (_git("config", "core.autocrlf", "true"), False),
}


@pytest.mark.parametrize("name", list(CHANGES))
def test_every_change_invalidates_the_witness(name, repo, trusting, tcg_home):
    change, key_changes = CHANGES[name]
    k0 = git_key(repo)
    assert witness_key(repo) == k0  # recorded, and it holds while nothing changes
    settle()
    change(repo)
    assert witness_key(repo) is None, f"{name}: the witness still held"
    k1 = git_key(repo)
    assert (k1 != k0) == key_changes
    assert witness_key(repo) == k1  # re-recorded by the git path


def test_packed_refs_update_invalidates(repo, trusting, tcg_home):
    git(repo, "tag", "v1")
    git(repo, "pack-refs", "--all")
    git_key(repo)
    settle()
    git(repo, "update-ref", "refs/tags/v1", "HEAD~1")  # rewrites packed-refs only
    assert witness_key(repo) is None


def test_global_excludes_file_is_witnessed(repo, trusting, tcg_home, tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    excludes = home / "ignore-these"
    excludes.write_text("nothing\n")
    (home / ".gitconfig").write_text(f"[core]\n\texcludesFile = {excludes}\n")
    monkeypatch.setenv("HOME", str(home))
    k0 = git_key(repo)
    assert witness_key(repo) == k0
    settle()
    excludes.write_text("untracked.txt\n")  # hides a file from git: the key changes
    assert witness_key(repo) is None
    assert git_key(repo) != k0
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(excludes))  # the environment is witnessed too
    assert witness_key(repo) is None


def test_ignored_content_does_not_invalidate(repo, trusting, tcg_home):
    k0 = git_key(repo)
    settle()
    (repo / "build" / "out" / "more.bin").write_text("y\n")  # inside a wholly ignored directory
    assert witness_key(repo) == k0


def test_a_hit_runs_no_git(repo, trusting, tcg_home, monkeypatch):
    k0 = git_key(repo)

    def no_git(*a, **k):
        raise AssertionError("git ran on a witness hit")

    monkeypatch.setattr(state, "_run_all", no_git)
    monkeypatch.setenv("PATH", "/nonexistent")
    before = gate.GIT_KEYS[0]
    _, keys = gate.lookup(repo, FINGERPRINT, get_paths())
    assert keys["state"] == k0 and gate.GIT_KEYS[0] == before
    _, keys = gate.lookup(repo / "sub", FINGERPRINT, get_paths())  # from a subdirectory as well
    assert keys["state"] == k0 and gate.GIT_KEYS[0] == before


def test_racy_files_are_not_trusted(repo, tcg_home):
    """Real window: files changed within RACY_NS of the key are not witnessed, so the
    next launch asks git (a same-tick edit after the witness would keep its stat)."""
    assert witness.RACY_NS >= 1_000_000_000
    git_key(repo)
    assert witness_key(repo) is None
    before = gate.GIT_KEYS[0]
    git_key(repo)
    assert gate.GIT_KEYS[0] == before + 1


def test_a_racy_store_removes_an_older_witness(repo, trusting, tcg_home, monkeypatch):
    git_key(repo)
    assert witness_key(repo) is not None
    monkeypatch.setattr(witness, "RACY_NS", 10**12)
    settle()
    (repo / "a.txt").write_text("changed\n")
    git_key(repo)  # racy now: nothing recorded, and the old witness is gone
    monkeypatch.setattr(witness, "RACY_NS", 0)
    (repo / "a.txt").write_text("value = aaaaaaaa\n")  # back to the recorded content
    assert witness_key(repo) is None


def test_unsupported_layouts_always_ask_git(tmp_path, trusting, tcg_home):
    main = make_repo(tmp_path / "main")
    commit(main, "a.txt", "a\n")
    git(main, "worktree", "add", "-q", str(tmp_path / "wt"))
    assert fastpath.discover(str(tmp_path / "wt")) is None  # a .git file: git decides
    assert fastpath.discover(str(main / ".git" / "refs")) is None  # inside the git dir
    # A gitlink (submodule) in the index: no witness is recorded.
    head = git(main, "rev-parse", "HEAD")
    git(main, "update-index", "--add", "--cacheinfo", f"160000,{head},sub")
    git_key(main)
    assert witness_key(main) is None
    plain = tmp_path / "plain"
    plain.mkdir()
    assert fastpath.discover(str(plain)) == ""  # certainly no repository


def test_witness_holds_no_readable_name(repo, trusting, tcg_home):
    git_key(repo)
    (wfile,) = (tcg_home / "cache" / "scan").glob("*.witness")
    data = wfile.read_bytes()
    for needle in (b"a.txt", b"sub/b.txt", b"untracked", b"logs", b".gitignore", os.fsencode(str(repo))):
        assert needle not in data
    assert oct(wfile.stat().st_mode & 0o777) == "0o600"


def test_damaged_witness_is_a_miss(repo, trusting, tcg_home):
    git_key(repo)
    (wfile,) = (tcg_home / "cache" / "scan").glob("*.witness")
    for junk in (b"", b"\x00garbage", wfile.read_bytes()[:-7]):
        wfile.write_bytes(junk)
        assert witness_key(repo) is None


def test_relaunch_hits_with_no_git_on_path(tmp_path, launch_env, agent_bin, tcg_home):
    """End to end with the real entry point: once the files are older than the racy
    window, the second launch hits with a PATH on which there is no git at all."""
    r = make_repo(tmp_path / "repo")
    commit(r, "main.py", "print('hi')\n")
    time.sleep(witness.RACY_NS / 1e9 + 0.2)
    env = dict(launch_env)
    proc = subprocess.run([TCG, "launch", "claude"], cwd=r, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    env["PATH"] = str(agent_bin)  # no git here
    proc = subprocess.run([TCG, "launch", "claude", "-x"], cwd=r, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(x) for x in (tcg_home / "state" / "events.jsonl").read_text().splitlines()]
    assert [(e["cache"], e["scanned"]) for e in events[-2:]] == [("miss", True), ("hit", False)]
    assert json.loads(Path(launch_env["FAKE_AGENT_OUT"]).read_text())["argv"][1:] == ["-x"]
    # A change afterwards: the witness fails, and without git the launch fails closed.
    (r / "main.py").write_text("print('changed')\n")
    proc = subprocess.run([TCG, "launch", "claude"], cwd=r, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 126 and "git" in proc.stderr


def test_many_files_are_compared_in_chunks(tmp_path, trusting, tcg_home):
    r = make_repo(tmp_path / "big")
    for i in range(fastpath._CHUNK + 100):
        (r / f"f{i:04d}.txt").write_text(f"{i}\n")
    git(r, "add", ".")
    git(r, "commit", "-q", "-m", "many")
    k0 = git_key(r)
    assert witness_key(r) == k0
    settle()
    last = r / f"f{fastpath._CHUNK + 99:04d}.txt"  # in the last chunk
    st = os.stat(last)
    last.write_text("X\n"[: len(last.read_text())].ljust(st.st_size, "Y"))
    os.utime(last, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert witness_key(r) is None
