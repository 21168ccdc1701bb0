"""The repository-state key changes whenever a scan's result could change (real git repositories)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tcg.launcher import cache, state
from tests.launcher.conftest import commit, git, make_repo


def key(repo: Path) -> bytes:
    return state.state_material(repo)


def test_key_is_stable_when_nothing_changes(tmp_path):
    repo = make_repo(tmp_path / "r")
    commit(repo, "a.txt", "one\n")
    (repo / "untracked.txt").write_text("u\n")
    assert key(repo) == key(repo)


def test_same_size_edit_within_the_same_tick_changes_the_key(tmp_path):
    repo = make_repo(tmp_path / "r")
    commit(repo, "a.txt", "value = aaaaaaaa\n")
    before = key(repo)
    st = os.stat(repo / "a.txt")
    (repo / "a.txt").write_text("value = bbbbbbbb\n")  # same size
    os.utime(repo / "a.txt", ns=(st.st_atime_ns, st.st_mtime_ns))  # and the same mtime
    assert key(repo) != before
    mid = key(repo)
    (repo / "a.txt").write_text("value = cccccccc\n")
    os.utime(repo / "a.txt", ns=(st.st_atime_ns, st.st_mtime_ns))
    assert key(repo) != mid


def test_untracked_file_and_its_content_change_the_key(tmp_path):
    repo = make_repo(tmp_path / "r")
    commit(repo, "a.txt", "one\n")
    k0 = key(repo)
    (repo / "new.txt").write_text("x\n")
    k1 = key(repo)
    (repo / "new.txt").write_text("y\n")
    k2 = key(repo)
    assert len({k0, k1, k2}) == 3


def test_ignored_files_do_not_change_the_key(tmp_path):
    repo = make_repo(tmp_path / "r")
    commit(repo, ".gitignore", "build/\n")
    k0 = key(repo)
    (repo / "build").mkdir()
    (repo / "build" / "out.bin").write_text("anything\n")
    assert key(repo) == k0


def test_refs_index_stash_and_notes_change_the_key(tmp_path):
    repo = make_repo(tmp_path / "r")
    commit(repo, "a.txt", "one\n")
    seen = [key(repo)]
    git(repo, "tag", "v1")
    seen.append(key(repo))
    git(repo, "branch", "side")
    seen.append(key(repo))
    (repo / "a.txt").write_text("two\n")
    git(repo, "add", "a.txt")  # staged: the index differs from HEAD
    seen.append(key(repo))
    git(repo, "stash")  # work tree back to HEAD, refs/stash appears
    seen.append(key(repo))
    git(repo, "notes", "add", "-m", "a note")
    seen.append(key(repo))
    commit(repo, "b.txt", "three\n")
    seen.append(key(repo))
    git(repo, "checkout", "-q", "--detach", "v1")
    seen.append(key(repo))
    assert len(set(seen)) == len(seen)


def test_scanner_id_is_stable():
    assert cache.scanner_id() == cache.scanner_id()


@pytest.fixture
def layout_repo(tmp_path: Path) -> Path:
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


# Every change that could change what a scan finds must change the key.
CHANGES = {
    "tracked edit, same size and mtime": _same_size_same_mtime_edit,
    "untracked file, top level": _write("new.txt"),
    "untracked file, new nested directory": _write("new/deeper/f.txt"),
    "untracked file, directory of ignored files": _write("logs/notes.txt"),
    "untracked file, empty directory": _write("empty/f.txt"),
    "untracked file edited": _write("untracked.txt", "changed\n"),
    "tracked file deleted": lambda r: (r / "sub" / "b.txt").unlink(),
    "tracked file made executable": lambda r: (r / "a.txt").chmod(0o755),
    ".gitignore changed": _write(".gitignore", "build/\n"),
    ".git/info/exclude changed": lambda r: (r / ".git" / "info" / "exclude").write_text("untracked.txt\n"),
    "staged": lambda r: (_write("a.txt", "value = cccccccc\n")(r), git(r, "add", "a.txt")),
    "committed": lambda r: commit(r, "c.txt", "c\n"),
    "tag": _git("tag", "v1"),
    "branch": _git("branch", "side"),
    "stash": lambda r: (_write("a.txt", "stashed\n")(r), git(r, "stash")),
    "update-ref, new ref": _git("update-ref", "refs/heads/other", "HEAD"),
    "update-ref, existing ref": _git("update-ref", "refs/heads/main", "HEAD~1"),
    "packed ref moved": lambda r: (git(r, "tag", "p1"), git(r, "pack-refs", "--all"),
                                   git(r, "update-ref", "refs/tags/p1", "HEAD~1")),
    "notes": _git("notes", "add", "-m", "n"),
}


@pytest.mark.parametrize("name", list(CHANGES))
def test_every_change_changes_the_key(name, layout_repo):
    k0 = key(layout_repo)
    CHANGES[name](layout_repo)
    assert key(layout_repo) != k0, name


def test_ignored_content_and_config_do_not_change_the_key(layout_repo):
    k0 = key(layout_repo)
    (layout_repo / "build" / "out" / "o.bin").write_text("other\n")
    (layout_repo / "logs" / "y.log").write_text("more\n")
    git(layout_repo, "config", "core.autocrlf", "true")
    assert key(layout_repo) == k0


def test_repo_state_finds_the_root_from_a_subdirectory(layout_repo):
    found = state.repo_state(layout_repo / "sub")
    assert found is not None and found.root == str(layout_repo.resolve())
    assert found.material == key(layout_repo)
    assert state.repo_state(layout_repo.parent) is None


def test_unreadable_repository_raises(layout_repo):
    (layout_repo / ".git" / "HEAD").write_text("garbage\n")
    with pytest.raises(state.StateError):
        state.repo_state(layout_repo)


def test_find_repo(tmp_path):
    repo = make_repo(tmp_path / "r")
    (repo / "sub").mkdir()
    assert state.find_repo(repo / "sub") == str(repo.resolve())
    plain = tmp_path / "plain"
    plain.mkdir()
    assert state.find_repo(plain) is None
