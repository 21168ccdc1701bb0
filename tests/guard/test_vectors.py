"""The delete-guard's test vectors, through `tcg check` and `tcg_shell run-line`, in
real git repositories with real bash.

For RELOCATE and SNAPSHOT lines the effect must be the one the line has without
tcg — a twin of the project runs the same line with plain bash, and exit code,
output and the resulting tree must match — and `tcg restore` must bring the
original bytes back exactly. Refused lines must leave the tree untouched.

Lines aimed at `/` or `~` run under bubblewrap with a read-only root, so a guard
that failed to refuse them could not harm the machine running the tests.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.guard.conftest import make_repo
from tests.guard.helpers import (
    BASH,
    TCG_SHELL,
    TIMEOUT,
    check,
    decided,
    env_for,
    events,
    git,
    last_txid,
    plain,
    run_line,
    tcg,
    trash_dir,
    tree,
)

WEIRD = "weird\nname"
BLOB = bytes(range(256)) * 64


def populate(root: Path) -> None:
    """A project with something of everything: build output, sources, logs, an
    ignored object file, an untracked directory, a newline in a name, a staged new file."""
    make_repo(root)
    (root / "build" / "sub").mkdir(parents=True)
    (root / "build" / "sub" / "out.bin").write_bytes(BLOB)
    (root / "build" / "index.html").write_bytes(b"<html></html>\n")
    (root / "build" / "link").symlink_to("index.html")
    (root / "src").mkdir()
    (root / "src" / "main.c").write_bytes(b"int main(void) { return 0; }\n")
    (root / "a.log").write_bytes(b"log a\n")
    (root / "src" / "b.log").write_bytes(b"log b\n")
    (root / "notes.md").write_bytes(b"# notes\nrm -rf old\n")
    (root / "x").write_bytes(b"precious data\n")
    (root / "a.o").write_bytes(b"\x7fELF object\n")
    (root / "ud" / "deep").mkdir(parents=True)
    (root / "ud" / "deep" / "f").write_bytes(b"untracked deep\n")
    (root / WEIRD).write_bytes(b"a newline in my name\n")
    (root / "empty").mkdir()
    (root / "staged_new.txt").write_bytes(b"staged, never committed\n")
    git(root, "add", "staged_new.txt")
    (root / "tracked.txt").write_bytes(b"one\ntwo\nmodified\n")
    git(root, "branch", "feat")


@pytest.fixture
def twins(tmp_path: Path) -> tuple[Path, Path, dict]:
    a, b = tmp_path / "a" / "proj", tmp_path / "b" / "proj"
    populate(a)
    populate(b)
    assert tree(a) == tree(b)
    return a, b, tree(a)


def assert_same_effect(line: str, a: Path, b: Path) -> subprocess.CompletedProcess[bytes]:
    got = run_line(line, a)
    want = plain(line, b)
    assert (got.returncode, got.stdout, got.stderr) == (want.returncode, want.stdout, want.stderr), line
    assert tree(a) == tree(b), f"{line}: the tree differs from running it without tcg"
    assert git(a, "status", "--porcelain=v1", "-z") == git(b, "status", "--porcelain=v1", "-z")
    return got


# ----------------------------------------------------------------- RELOCATE

RELOCATE = [
    "rm -rf build/",
    "rm -r src",
    "rm -r src missing",
    "unlink x",
    "rmdir empty",
    "rm -rf build src a.log",
    "test -d build && rm -rf build",
    "find . -name '*.log' -delete",
    "find . -name '*.log' -exec rm {} \\;",
    "find . -name '*.log' | xargs rm -f",
    "find src -type f -delete",
    "git clean -fdx",
    "git clean -fd",
    "git clean -f",
    "python3 -c 'import shutil; shutil.rmtree(\"build\")'",
    "FOO=1 rm -rf build",
    "command rm -r -- src",
]


@pytest.mark.parametrize("line", RELOCATE)
def test_relocate_runs_unchanged_and_restores_exactly(line, twins):
    a, b, original = twins
    assert decided(line, a, "relocate", "delete-relocate")["actions"]
    assert tree(a) == original, "tcg check must not move anything"
    assert_same_effect(line, a, b)
    txid = last_txid()
    assert tcg("restore", txid, cwd=a).returncode == 0
    assert tree(a) == original, f"{line}: tcg restore did not bring everything back exactly"
    again = tcg("restore", txid, cwd=a)
    assert again.returncode == 0 and b"already restored" in again.stdout


def test_mv_over_a_file_keeps_the_old_one(twins, tmp_path):
    a, b, original = twins
    rc, verdict = check("mv notes.md x", a)
    assert (rc, verdict["decision"]) == (0, "relocate")
    assert_same_effect("mv notes.md x", a, b)
    refused = tcg("restore", last_txid(), cwd=a)
    assert refused.returncode == 1 and b"exists" in refused.stderr  # x holds notes.md's bytes now
    out = tmp_path / "old"
    assert tcg("restore", last_txid(), "--to", str(out), cwd=a).returncode == 0
    assert (out / "x").read_bytes() == original["x"][2]


def test_weird_name_from_git_clean_comes_back_byte_exact(twins):
    a, b, original = twins
    assert_same_effect("git clean -fdx", a, b)
    assert not (a / WEIRD).exists()
    assert tcg("restore", last_txid(), cwd=a).returncode == 0
    assert (a / WEIRD).read_bytes() == b"a newline in my name\n"
    assert tree(a) == original


@pytest.mark.parametrize("line", ["false && rm -rf build", "rm -i build/index.html < /dev/null",
                                  "[ -e nothere ] && rm -r src"])
def test_a_delete_that_does_not_happen_changes_nothing(line, twins):
    a, b, original = twins
    assert_same_effect(line, a, b)
    assert tree(a) == original
    settle = events("guard_settle")[-1]
    assert settle["kept"] == 0 and settle["returned"] >= 1


def test_relocating_a_directory_is_a_rename(repo):
    """Same filesystem: the directory is renamed into the trash (same inode), not copied."""
    big = repo / "big"
    big.mkdir()
    for i in range(50):
        (big / f"f{i}").write_bytes(BLOB)
    ino = big.stat().st_ino
    assert run_line("rm -rf big", repo).returncode == 0
    moved = events("guard_relocate")[-1]
    assert moved["renamed"] == 1 and moved["copied"] == 0
    entry = trash_dir() / last_txid() / "files" / "0"
    assert entry.stat().st_ino == ino
    assert tcg("restore", last_txid(), cwd=repo).returncode == 0
    assert big.stat().st_ino == ino and len(list(big.iterdir())) == 50


# ----------------------------------------------------------------- SNAPSHOT

def test_reset_hard_snapshot_brings_back_the_staged_new_file(twins):
    a, b, _ = twins
    rc, verdict = check("git reset --hard", a)
    assert (rc, verdict["decision"], verdict["reason"]) == (0, "snapshot", "git-snapshot")
    assert_same_effect("git reset --hard", a, b)
    assert not (a / "staged_new.txt").exists()  # git itself deletes it
    txid = last_txid()
    assert git(a, "for-each-ref", f"refs/tcg/snapshots/{txid}")
    assert tcg("restore", txid, cwd=a).returncode == 0
    assert (a / "staged_new.txt").read_bytes() == b"staged, never committed\n"
    assert "staged_new.txt" in git(a, "diff", "--cached", "--name-only")
    assert (a / "tracked.txt").read_bytes() == b"one\ntwo\nmodified\n"


def test_reset_hard_on_a_clean_tree_is_allow_with_nothing_to_snapshot(repo):
    rc, verdict = check("git reset --hard", repo)
    assert (rc, verdict["decision"], verdict["reason"]) == (0, "allow", "nothing-to-snapshot")
    proc = run_line("git reset --hard", repo)
    assert proc.returncode == 0
    assert events("command_decision")[-1]["reason"] == "nothing-to-snapshot"
    assert not git(repo, "for-each-ref", "refs/tcg")


def test_branch_delete_keeps_the_tip(twins):
    a, b, _ = twins
    sha = git(a, "rev-parse", "feat").strip()
    rc, verdict = check("git branch -D feat", a)
    assert (rc, verdict["decision"]) == (0, "snapshot")
    assert_same_effect("git branch -D feat", a, b)
    txid = last_txid()
    assert git(a, "rev-parse", f"refs/tcg/branches/{txid}/feat").strip() == sha
    assert tcg("restore", txid, cwd=a).returncode == 0
    assert git(a, "rev-parse", "feat").strip() == sha
    refused = tcg("restore", txid, cwd=a)
    assert refused.returncode == 0 and b"already restored" in refused.stdout


def test_stash_drop_keeps_the_entry(repo):
    (repo / "tracked.txt").write_bytes(b"stashed change\n")
    git(repo, "stash", "push", "-q", "-m", "wip")
    sha = git(repo, "rev-parse", "stash@{0}").strip()
    assert run_line("git stash drop", repo).returncode == 0
    assert not git(repo, "stash", "list")
    assert tcg("restore", last_txid(), cwd=repo).returncode == 0
    assert git(repo, "rev-parse", "stash@{0}").strip() == sha


@pytest.mark.parametrize("line", ["git checkout -- .", "git restore tracked.txt", "git checkout -f main"])
def test_worktree_discards_are_snapshotted(line, twins):
    a, b, _ = twins
    rc, verdict = check(line, a)
    assert (rc, verdict["decision"], verdict["reason"]) == (0, "snapshot", "git-snapshot")
    assert_same_effect(line, a, b)
    assert (a / "tracked.txt").read_bytes() == b"one\ntwo\n"
    assert tcg("restore", last_txid(), cwd=a).returncode == 0
    assert (a / "tracked.txt").read_bytes() == b"one\ntwo\nmodified\n"


OVERWRITE = [
    (": > tracked.py", "tracked.py"),
    ("> tracked.py", "tracked.py"),
    ("truncate -s0 x", "x"),
    ("shred -u x", "x"),
    ("shred -n 0 -z x", "x"),
    ("cp /dev/null x", "x"),
    ("dd if=/dev/zero of=x bs=4 count=1 status=none", "x"),
    ("echo new > notes.md", "notes.md"),
    ("sed -i s/one/ONE/ tracked.txt", "tracked.txt"),
    ("printf 'a\\n' | tee x", "x"),
]


@pytest.mark.parametrize(("line", "name"), OVERWRITE)
def test_overwrite_keeps_a_copy(line, name, twins, tmp_path):
    a, b, original = twins
    rc, verdict = check(line, a)
    assert (rc, verdict["decision"], verdict["reason"]) == (0, "snapshot", "overwrite-snapshot"), verdict
    assert_same_effect(line, a, b)
    txid = last_txid()
    if (a / name).exists():
        refused = tcg("restore", txid, cwd=a)
        assert refused.returncode == 1 and b"exists" in refused.stderr
        out = tmp_path / "restored"
        assert tcg("restore", txid, "--to", str(out), cwd=a).returncode == 0
        assert (out / name).read_bytes() == original[name][2]
    else:
        assert tcg("restore", txid, cwd=a).returncode == 0
        assert (a / name).read_bytes() == original[name][2]


def test_overwriting_a_new_or_empty_file_needs_no_snapshot(repo):
    (repo / "empty.txt").write_bytes(b"")
    for line in ("echo hi > new.txt", ": > empty.txt", "echo hi >> tracked.txt", "echo hi > /dev/null"):
        rc, verdict = check(line, repo)
        assert (rc, verdict["decision"]) == (0, "allow"), (line, verdict)


# ------------------------------------------------------------------ refused

def sandboxed(line: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """run-line under bubblewrap: everything but the test's temp dir is read-only."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (bwrap) is not installed: lines aimed at / and ~ are only checked, not run")
    base = Path(str(cwd)).parents[2]
    argv = ["bwrap", "--ro-bind", "/", "/", "--bind", str(base), str(base), "--dev", "/dev", "--proc", "/proc",
            "--chdir", str(cwd), "--", TCG_SHELL, "run-line", "--shell", BASH, line]
    return subprocess.run(argv, capture_output=True, stdin=subprocess.DEVNULL, timeout=TIMEOUT, env=env_for("agent"))


BLOCK = [
    ("rm -rf .", "delete-protected-target"),
    ("rm -rf ./", "delete-protected-target"),
    ("rm -rf ..", "delete-protected-target"),
    ("rm -rf $DIR/", "delete-dynamic-target"),
    ('rm -rf "$DIR"/*', "delete-dynamic-target"),
    ("rm -rf ${DIR:?}/", "delete-dynamic-target"),
    ("rm -rf -- *", "delete-glob"),
    ("rm -f *.log", "delete-glob"),
    ("cat list | xargs rm -f", "delete-dynamic-target"),
    ("FOO=1 rm -rf /", None),
    ("env -i rm -rf ~", None),
    ("\\rm -rf ~", None),
    ("/bin/rm -rf ~", None),
    ("sudo rm -rf /", None),
    ("eval \"rm -rf ~\"", None),
    ("echo 'rm -rf /' | sh", None),
    ("$(echo rm) -rf /", "delete-opaque"),
    ("bash <<<'rm -rf ~'", None),
    ("bash -c 'rm -rf ~'", None),
    ("python3 -c 'import shutil; shutil.rmtree(\"/home\")'", "delete-protected-target"),
    ("python3 -c 'import shutil,sys; shutil.rmtree(sys.argv[1])' build", "delete-opaque"),
    ("find / -name '*.log' -delete", "delete-protected-target"),
    ("find . -name '*.log' -exec sh -c 'rm \"$1\"' _ {} \\;", "delete-opaque"),
    ("rsync -a --delete empty/ ./", "delete-opaque"),
    ("rm -rf build/link/", "delete-opaque"),
    ("find -L . -name '*.log' -delete", "delete-opaque"),
    ("git push origin +main", "git-push-rewrite"),
    ("git push --mirror", "git-push-rewrite"),
    ("git push origin :main", "git-push-rewrite"),
    ("git push --delete origin main", "git-push-rewrite"),
    ("git push --force origin main", "git-push-rewrite"),
    ("git push -f", "git-push-rewrite"),
    ("git reflog expire --expire=now --all", "git-history-destroy"),
    ("git gc --prune=now", "git-history-destroy"),
    ("git update-ref -d refs/heads/main", "git-history-destroy"),
    ("git filter-branch --force", "git-history-destroy"),
    ("git -C \"$X\" clean -fdx", "delete-dynamic-target"),
    ("mv x /dev/null", "overwrite-device"),
]


@pytest.mark.parametrize(("line", "reason"), BLOCK)
def test_refused_lines_run_nothing(line, reason, twins):
    a, _b, original = twins
    verdict = decided(line, a, "block")
    if reason is not None:
        assert reason in {r["code"] for r in verdict["reasons"]}, verdict
    proc = sandboxed(line, a)
    assert proc.returncode == 126, proc.stderr
    assert b"hint:" in proc.stderr
    assert tree(a) == original


ASK = [
    ("cd .. && rm -rf proj", "delete-compound"),
    ("touch f && rm f", "delete-compound"),
    ("cat x && rm x", "delete-compound"),
    ("make -v; rm -rf build", "delete-compound"),
    ("sleep 0 & rm -rf build", "delete-compound"),
    ("git add -A && git reset --hard", "delete-compound"),
    ("git push --force-with-lease", "git-push-lease"),
]


@pytest.mark.parametrize(("line", "reason"), ASK)
def test_ask_lines_wait_for_a_person(line, reason, twins):
    a, _b, original = twins
    rc, verdict = check(line, a, "human")
    assert (rc, verdict["decision"], verdict["reason"]) == (3, "ask", reason), verdict
    proc = run_line(line, a)
    assert proc.returncode == 126
    assert b"tcg approve " in proc.stderr
    assert tree(a) == original
    assert events("command_decision")[-1]["approval"] == "requested"


# ------------------------------------------------------------------ data only

DATA_ONLY = [
    'grep "rm -rf" notes.md',
    'git commit -m "rm -rf old"',
    'echo "git reset --hard"',
    "echo 'rm -rf /'",
    "grep 'rm -rf' notes.md",
    "printf '%s\\n' 'git push --force'",
    "cat <<EOF\nrm -rf /home/user\ngit reset --hard\nEOF",
    "cat <<'EOF'\nrm -rf $HOME\nEOF",
    "wc -l <<EOF\nrm -rf /\ngit clean -fd\nEOF",
    "grep -n rm <<<'rm -rf /home/user'",
    "sort <<EOF\ngit branch -D main\nEOF",
    "git log --oneline -3",
    "git status --short",
    "git diff HEAD",
    "git branch -a",
    "git branch feature-new",
    "git branch -d feat",
    "git stash list",
    "git checkout -b new-feature",
    "git checkout main",
    "git reset --soft HEAD",
    "git reset HEAD",
    "git clean -n -d",
    "git clean --dry-run -x",
    "git restore --staged staged_new.txt",
    "git rm --cached staged_new.txt",
    "git fetch --all",
    "git tag v1.0.0",
    "ls -la build",
    "find . -name '*.log'",
    "find . -name '*.log' -print",
    "rm -f does-not-exist",
    "rm -r empty-not-here",
    "echo rm -rf build",
    "man rm",
    "type rm",
    "alias ll='ls -l'",
    "python3 -c 'print(\"shutil.rmtree is dangerous\")'",
]


@pytest.mark.parametrize("line", DATA_ONLY)
def test_data_only_lines_are_allowed(line, twins):
    decided(line, twins[0], "allow")


def test_run_line_reports_the_txid_and_records_events(twins):
    a, _b, _ = twins
    proc = run_line("rm -rf build", a)
    assert proc.returncode == 0
    rec = events("command_decision")[-1]
    assert rec["decision"] == "relocate" and rec["txid"]
    moved = events("guard_relocate")[-1]
    assert moved["txid"] == rec["txid"] and moved["entries"] == 1 and moved["dirs"] == 1
    assert len(moved["manifest_hash"]) == 64
    settle = events("guard_settle")[-1]
    assert (settle["txid"], settle["kept"], settle["returned"]) == (rec["txid"], 1, 0)
    listing = tcg("trash", "list", cwd=a)
    assert rec["txid"].encode() in listing.stdout and b"build/" in listing.stdout


def test_git_outside_a_repository_fails_as_git_does(tmp_path):
    for line in ("git reset --hard", "git branch -D feat", "git clean -fdx"):
        got, want = run_line(line, tmp_path), plain(line, tmp_path)
        assert (got.returncode, got.stderr) == (want.returncode, want.stderr), line


def test_no_copy_of_a_secret_is_kept(repo):
    """Overwriting a file that holds a secret would copy the secret into tcg's trash:
    ASK instead. Deleting it (a rename, no copy) is still reversible."""
    from tests.guard.test_channels import leaks, token

    tok = token()
    (repo / "deploy.cfg").write_text(f"token = {tok}\n")
    rc, verdict = check("echo x > deploy.cfg", repo)
    assert (rc, verdict["decision"], verdict["reason"]) == (3, "ask", "unsaved-secret")
    assert tok not in json.dumps(verdict)
    assert run_line("echo x > deploy.cfg", repo).returncode == 126
    decided("rm deploy.cfg", repo, "relocate", "delete-relocate")
    ino = (repo / "deploy.cfg").stat().st_ino
    assert run_line("rm deploy.cfg", repo).returncode == 0
    # the trash holds the user's own file (the same inode, renamed), and nothing else holds it
    (moved,) = leaks(tok)
    assert moved == trash_dir() / last_txid() / "files" / "0" and moved.stat().st_ino == ino
    assert tcg("restore", last_txid(), cwd=repo).returncode == 0
    assert tok in (repo / "deploy.cfg").read_text()
