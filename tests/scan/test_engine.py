"""scan_repo / scan_paths against real git repositories and the real detector."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from tcg.policy.load import load_policy
from tcg.scan.engine import scan_paths, scan_repo

from .gitutil import commit_file, fake_secrets, git, init_repo, remove_file

SECRETS = fake_secrets()
GH = SECRETS["github-pat-classic"]
AWS = SECRETS["aws-access-key-id"]
SLACK = SECRETS["slack-bot-token"]


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, str, str]:
    """main: secret added in one commit, deleted in the next, plus clean files."""
    r = init_repo(tmp_path / "repo")
    commit_file(r, "README.md", "# demo\n", "init")
    added = commit_file(r, "app/settings.py", f"import os\n\nTOKEN = '{GH}'\n", "add settings")
    removed = remove_file(r, "app/settings.py", "oops, remove token")
    commit_file(r, "app/main.py", "print('hello')\n", "more")
    return r, added, removed


@pytest.mark.parametrize("jobs", [1, 2])
def test_secret_deleted_later_is_found_in_history(repo, jobs):
    r, added, _ = repo
    res = scan_repo(r, load_policy(), jobs=jobs)
    assert res.status == "findings", res.errors
    hits = [f for f in res.findings if f.rule_id == "github-pat-classic"]
    assert len(hits) == 1
    f = hits[0]
    assert (f.path, f.line, f.column, f.source) == ("app/settings.py", 3, 10, "history")
    assert f.commit == added  # the commit that introduced the blob
    assert f.blob == git(r, "rev-parse", f"{added}:app/settings.py")
    assert f.length == len(GH)
    assert res.counts_by_rule == {"github-pat-classic": 1}
    assert res.stats["blobs_scanned"] == 3  # README, settings, main: each unique blob once
    # and nothing was checked out or written into the repository
    assert git(r, "status", "--porcelain") == ""
    assert not (r / "app" / "settings.py").exists()


def test_no_history_scans_only_the_working_tree(repo):
    r, _, _ = repo
    (r / "notes.txt").write_text(f"slack: {SLACK}\n")  # untracked, not ignored
    (r / ".gitignore").write_text("ignored.txt\n")
    (r / "ignored.txt").write_text(f"aws {AWS}\n")
    res = scan_repo(r, load_policy(), history=False, jobs=1)
    assert [(f.rule_id, f.path, f.source) for f in res.findings] == [
        ("slack-bot-token", "notes.txt", "worktree")
    ]
    assert res.stats["blobs_scanned"] == 0
    assert res.stats["files_scanned"] == 4  # README, main.py, notes.txt, .gitignore


def test_history_mode_adds_modified_untracked_and_staged(repo):
    r, _, _ = repo
    (r / "notes.txt").write_text(f"slack: {SLACK}\n")
    (r / "staged.cfg").write_text(f"key={AWS}\n")
    git(r, "add", "staged.cfg")
    (r / "staged.cfg").write_text("key=removed-from-disk-but-still-staged\n")
    res = scan_repo(r, load_policy(), jobs=1)
    got = {(f.rule_id, f.path, f.source) for f in res.findings}
    assert ("slack-bot-token", "notes.txt", "worktree") in got
    assert ("aws-access-key-id", "staged.cfg", "index") in got
    assert ("github-pat-classic", "app/settings.py", "history") in got


def test_every_ref_kind_is_reached(tmp_path):
    r = init_repo(tmp_path / "refs")
    commit_file(r, "a.txt", "base\n", "base")
    git(r, "checkout", "-q", "-b", "side")
    commit_file(r, "side.txt", f"t={GH}\n", "side branch only")
    git(r, "checkout", "-q", "main")
    git(r, "branch", "-D", "side")  # ...but a tag still points at it? no: use explicit refs below
    # tag-only history
    commit_file(r, "tagged.txt", f"aws={AWS}\n", "tagged")
    git(r, "tag", "v1")
    git(r, "reset", "-q", "--hard", "HEAD~1")
    # remote-tracking ref only
    blob = git(r, "hash-object", "-w", "--stdin", input=f"slack={SLACK}\n".encode())
    tree = git(r, "mktree", input=f"100644 blob {blob}\tremote.txt\n".encode())
    c = git(r, "commit-tree", tree, "-m", "remote", "-p", "HEAD")
    git(r, "update-ref", "refs/remotes/origin/feature", c)
    # stash (uncommitted change) and notes
    (r / "a.txt").write_text("stashed ghp_" + "Q" * 4 + "\n" + f"k={GH[:-1]}Z\n")
    git(r, "stash", "-q")
    git(r, "notes", "add", "-m", f"note {AWS[:-1]}Q", "HEAD")
    res = scan_repo(r, load_policy(), jobs=1)
    got = {(f.rule_id, f.path) for f in res.findings}
    assert ("aws-access-key-id", "tagged.txt") in got  # tag
    assert ("slack-bot-token", "remote.txt") in got  # remote-tracking branch
    assert ("github-pat-classic", "a.txt") in got  # stash
    notes = [f for f in res.findings if f.rule_id == "aws-access-key-id" and f.path != "tagged.txt"]
    assert notes, "the notes blob was not scanned"
    assert ("github-pat-classic", "side.txt") not in got  # deleted branch: unreachable


def test_binary_large_and_allowed_paths_are_skipped_with_counts(tmp_path, monkeypatch):
    pol = tmp_path / "policy.toml"
    pol.write_text('[scan]\nmax-blob-bytes = 2000\nallow_paths = ["fixtures/*"]\n')
    monkeypatch.setenv("TCG_POLICY", str(pol))
    r = init_repo(tmp_path / "r")
    commit_file(r, "bin.dat", b"\0\x01" + GH.encode() + b"\n", "binary")
    commit_file(r, "big.txt", ("x" * 3000) + GH + "\n", "large")
    commit_file(r, "fixtures/fake.txt", f"{GH}\n", "fixture")
    commit_file(r, "ok.txt", "fine\n", "ok")
    res = scan_repo(r, load_policy(), jobs=1)
    assert res.status == "clean"
    s = res.stats
    assert (s["blobs_skipped_binary"], s["blobs_skipped_large"], s["blobs_skipped_allowed"]) == (1, 1, 1)
    assert s["blobs_scanned"] == 1


def test_inline_allow_comment_suppresses_that_line_only(tmp_path):
    r = init_repo(tmp_path / "r")
    commit_file(r, "t.py", f"A = '{GH}'  # tcg:allow test fixture\nB = '{AWS}'\n", "x")
    res = scan_repo(r, load_policy(), jobs=1)
    assert [f.rule_id for f in res.findings] == ["aws-access-key-id"]
    assert res.stats["suppressed_inline"] == 1


def test_budget_makes_the_scan_partial(tmp_path):
    r = init_repo(tmp_path / "r")
    for i in range(5):
        commit_file(r, f"f{i}.txt", f"clean {i}\n", f"c{i}")
    res = scan_repo(r, load_policy(), max_objects=2, jobs=1)
    assert (res.status, res.complete) == ("partial", False)
    assert res.stats["blobs_scanned"] == 2
    res = scan_repo(r, load_policy(), max_bytes=16, jobs=1)
    assert res.status == "partial" and res.stats["blobs_scanned"] == 2
    full = scan_repo(r, load_policy(), jobs=1)
    assert (full.status, full.complete, full.stats["blobs_scanned"]) == ("clean", True, 5)


def test_plain_directory_and_missing_path(tmp_path):
    d = tmp_path / "plain"
    (d / "sub").mkdir(parents=True)
    (d / "sub" / "cfg.ini").write_text(f"token={GH}\n")
    (d / "link").symlink_to("/etc/passwd")
    res = scan_paths([d, tmp_path / "nope", d / "sub" / "cfg.ini"], load_policy(), jobs=2)
    assert res.status == "error"
    assert any("nope" in e for e in res.errors)
    # the same secret reached through the directory and through the file itself (a single
    # file as PATH) is one secret, first seen under the first PATH, twice in all
    assert [(f.target, f.path, f.source, f.occurrences) for f in res.findings] == [
        (str(d), "sub/cfg.ini", "file", 2),
    ]
    assert res.stats["files_scanned"] == 2  # the symlink is not followed


def test_same_results_with_pool_and_inline(tmp_path):
    repos = []
    for i in range(3):
        r = init_repo(tmp_path / f"r{i}")
        commit_file(r, "s.txt", f"{GH if i != 1 else AWS}\n", "s")
        remove_file(r, "s.txt")
        repos.append(r)
    a = scan_paths(repos, load_policy(), jobs=1)
    b = scan_paths(repos, load_policy(), jobs=2)
    assert a.findings == b.findings and len(a.findings) == 2  # GH in two repositories is one secret
    gh = next(f for f in a.findings if f.rule_id == "github-pat-classic")
    assert (gh.target, gh.occurrences, gh.paths) == (str(repos[0]), 2, 2)
    assert a.stats == b.stats


def test_metadata_has_no_value_and_is_stable(repo):
    r, _, _ = repo
    res = scan_repo(r, load_policy(), jobs=1)
    meta = res.metadata()
    for key in ("status", "complete", "counts_by_rule", "blobs_scanned", "files_scanned", "duration_s", "policy"):
        assert key in meta
    text = repr(meta) + repr(res.findings)
    assert GH not in text and GH[4:16] not in text
    assert hashlib.sha256(GH.encode()).hexdigest()[:16] not in text  # keyed, not a plain hash


def test_categories_come_from_policy(tmp_path, monkeypatch):
    r = init_repo(tmp_path / "r")
    commit_file(r, "AUTHORS", "Jane Roe <jane.roe@corp-mail.net>\n", "authors")
    assert scan_repo(r, load_policy(), jobs=1).status == "clean"  # default: secrets only
    pol = tmp_path / "policy.toml"
    pol.write_text('[scan]\ncategories = ["pii"]\n')
    monkeypatch.setenv("TCG_POLICY", str(pol))
    res = scan_repo(r, load_policy(), jobs=1)
    assert [(f.rule_id, f.category) for f in res.findings] == [("email", "pii")]


def test_repository_config_cannot_run_commands(tmp_path):
    r = init_repo(tmp_path / "r")
    commit_file(r, "a.txt", "x\n", "a")
    marker = tmp_path / "pwned"
    git(r, "config", "core.fsmonitor", f"touch {marker}; false")
    (r / "a.txt").write_text("changed\n")
    res = scan_repo(r, load_policy(), jobs=1)
    assert res.status == "clean", res.errors
    assert not marker.exists()


def test_partial_clone_is_not_fetched_and_reported_partial(tmp_path):
    src = init_repo(tmp_path / "src")
    commit_file(src, "old.txt", f"t={GH}\n", "old")
    commit_file(src, "new.txt", "fine\n", "new")
    git(src, "config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "-q", "--filter=blob:none", "--no-checkout", f"file://{src}", str(clone)],
        check=True, capture_output=True,
    )
    res = scan_repo(clone, load_policy(), jobs=1)
    assert (res.status, res.complete, res.stats["blobs_missing"]) == ("partial", False, 2)
    # nothing was fetched from the promisor remote
    missing = git(clone, "rev-list", "--objects", "--all", "--missing=print")
    assert sum(1 for line in missing.splitlines() if line.startswith("?")) == 2


def test_bare_repository_and_git_dir_scan_history(repo, tmp_path):
    r, added, _ = repo
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(r), str(bare)], check=True)
    for target in (bare, r / ".git"):
        res = scan_repo(target, load_policy(), jobs=1)
        assert [(f.rule_id, f.path, f.commit) for f in res.findings] == [
            ("github-pat-classic", "app/settings.py", added)
        ], target
        assert res.stats["files_scanned"] == 0


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_fixture_secret_in_many_blob_versions_is_one_finding_with_a_count(tmp_path, jobs):
    """A fake key in a test fixture edited in N commits is N blobs: one finding at the commit
    that introduced it, with the count of occurrences, blobs and paths (gate counts too)."""
    r = init_repo(tmp_path / "fixture")
    versions = 12
    first = commit_file(r, "tests/fixtures/keys.py", f"KEY = '{GH}'\n# v0\n", "add fixture")
    for v in range(1, versions):
        commit_file(r, "tests/fixtures/keys.py", f"KEY = '{GH}'\n# v{v}\n", f"edit {v}")
    git(r, "mv", "tests/fixtures/keys.py", "tests/fixtures/old_keys.py")
    git(r, "commit", "-q", "-m", "rename")  # same blob: read once, counted once
    commit_file(r, "tests/fixtures/old_keys.py", f"KEY = '{GH}'\n# renamed\n", "edit renamed")
    res = scan_repo(r, load_policy(), jobs=jobs)
    assert len(res.findings) == 1
    f = res.findings[0]
    assert (f.rule_id, f.path, f.commit, f.line) == ("github-pat-classic", "tests/fixtures/keys.py", first, 1)
    assert (f.occurrences, f.blobs, f.paths) == (versions + 1, versions + 1, 2)
    assert res.counts_by_rule == {"github-pat-classic": 1}  # what the launch gate counts
    assert res.metadata()["findings"] == 1 and res.metadata()["occurrences"] == versions + 1
    assert res.occurrences == []  # kept only when asked
    kept = scan_paths([r], load_policy(), jobs=jobs, keep_occurrences=True)
    locs = kept.occurrences_by_key()[f.key]
    assert len(locs) == versions + 1 and locs[0].commit == first


def test_staged_scans_only_what_the_next_commit_adds(repo):
    r, _, _ = repo
    (r / "notes.txt").write_text(f"slack: {SLACK}\n")  # untracked: not staged
    (r / "new.cfg").write_text(f"key={AWS}\n")
    git(r, "add", "new.cfg")
    res = scan_paths([r], load_policy(), staged=True, jobs=1)
    # the history's GH token (committed and removed) is not the next commit's business
    assert [(f.rule_id, f.path, f.source, f.commit) for f in res.findings] == [
        ("aws-access-key-id", "new.cfg", "index", None)
    ]
    assert res.staged and not res.history and res.stats["blobs_scanned"] == 1
    git(r, "commit", "-q", "-m", "add cfg")
    assert scan_paths([r], load_policy(), staged=True, jobs=1).status == "clean"
    git(r, "rm", "-q", "new.cfg")  # a staged deletion adds nothing
    assert scan_paths([r], load_policy(), staged=True, jobs=1).status == "clean"


def test_staged_on_a_branch_without_commits(tmp_path):
    r = init_repo(tmp_path / "unborn")
    (r / "a.cfg").write_text(f"TOKEN={GH}\n")
    (r / "b.txt").write_text("nothing\n")
    git(r, "add", ".")
    res = scan_paths([r], load_policy(), staged=True, jobs=1)
    assert [(f.path, f.source) for f in res.findings] == [("a.cfg", "index")]


def test_both_engines_report_the_same_scan(repo):
    """A small scan runs the keyword + re engine (no hyperscan start-up), a big one
    hyperscan: the findings must not depend on which."""
    from tcg.detect.engine import load_detector
    from tcg.detect.hsdb import hyperscan_available

    if not hyperscan_available():
        pytest.skip("hyperscan wheel not installed on this platform")
    r, _, _ = repo
    (r / "notes.txt").write_text(f"slack: {SLACK}\naws {AWS}\n")
    pol = load_policy()
    got = [scan_paths([r], pol, jobs=1, detector=load_detector(pol, engine=e, categories=["secret"]))
           for e in ("re", "hyperscan")]
    assert got[0].findings == got[1].findings and len(got[0].findings) == 3


def test_a_tiny_scan_does_not_start_hyperscan(repo):
    r, _, _ = repo
    code = ("import sys\nfrom tcg.cli import main\nrc = main(['scan', sys.argv[1]])\n"
            "print('HS' if 'hyperscan' in sys.modules else 'NOHS', 'CLICK' if 'click' in sys.modules else 'NOCLICK')\n"
            "sys.exit(rc)")
    proc = subprocess.run([sys.executable, "-c", code, str(r)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "NOHS NOCLICK"


def test_staged_outside_a_repository_is_an_error(tmp_path):
    d = tmp_path / "plain"
    d.mkdir()
    (d / "a.env").write_text(f"TOKEN={GH}\n")
    res = scan_paths([d], load_policy(), staged=True, jobs=1)
    assert res.status == "error" and "--staged needs a git repository" in res.errors[0]
    assert not res.findings
