"""The repository-state key changes whenever a scan's result could change (issue 6 item 2)."""

from __future__ import annotations

import os
from pathlib import Path

from tcg.launcher import state
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
    assert state.scanner_id() == state.scanner_id()


def test_find_repo(tmp_path):
    repo = make_repo(tmp_path / "r")
    (repo / "sub").mkdir()
    assert state.find_repo(repo / "sub") == str(repo.resolve())
    plain = tmp_path / "plain"
    plain.mkdir()
    assert state.find_repo(plain) is None
