"""The pre-commit hook in .pre-commit-hooks.yaml, run by the real `pre-commit` package in a
real repository: `git commit` of a token is refused with the scan's message, a clean commit
goes through. pre-commit installs tcg from a snapshot of this checkout into its own
environment (pip, offline from the wheel cache where there is one), so this test is slow."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .gitutil import fake_secrets, git, init_repo

ROOT = Path(__file__).resolve().parents[2]
PRE_COMMIT = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) or shutil.which("pre-commit")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(PRE_COMMIT is None, reason="pre-commit is not installed (pip install -e '.[test]')"),
]


def _snapshot(dest: Path) -> str:
    """This checkout's files (tracked and new, as they are on disk) committed in a repository
    of their own: pre-commit installs hooks from a repository at a revision."""
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "-c", "-o", "--exclude-standard"],
                           capture_output=True, check=True).stdout.split(b"\0")
    init_repo(dest)
    for raw in files:
        rel = raw.decode()
        if not rel or not (ROOT / rel).is_file() or rel.startswith("tests/"):
            continue
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, dest / rel)
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "snapshot")
    return git(dest, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def hooked_repo(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    base = tmp_path_factory.mktemp("precommit")
    rev = _snapshot(base / "tcg-src")
    repo = init_repo(base / "project")
    git(repo, "config", "user.name", "tcg test")
    git(repo, "config", "user.email", "test@tcg.invalid")
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {base / 'tcg-src'}\n  rev: {rev}\n  hooks:\n  - id: tcg-scan\n"
    )
    # module scope runs before the per-test hermetic home: build this one's own
    home = base / "home"
    home.mkdir()
    env = dict(os.environ, PRE_COMMIT_HOME=str(base / "pre-commit-home"), HOME=str(home),
               TCG_HOME=str(base / "tcg-home"), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_CACHE_HOME=str(home / ".cache"), XDG_STATE_HOME=str(home / ".local" / "state"),
               XDG_DATA_HOME=str(home / ".local" / "share"), GIT_CONFIG_NOSYSTEM="1",
               GIT_AUTHOR_NAME="tcg test", GIT_AUTHOR_EMAIL="test@tcg.invalid",
               GIT_COMMITTER_NAME="tcg test", GIT_COMMITTER_EMAIL="test@tcg.invalid")
    env.pop("TCG_POLICY", None)
    subprocess.run([PRE_COMMIT, "install"], cwd=repo, env=env, check=True, capture_output=True)
    git(repo, "add", ".pre-commit-config.yaml")
    # the first commit builds the hook's environment (pip installs tcg): minutes at most
    first = subprocess.run(["git", "commit", "-q", "-m", "config"], cwd=repo, env=env,
                           capture_output=True, text=True, timeout=900)
    assert first.returncode == 0, first.stdout + first.stderr
    return repo, env


def _commit(repo: Path, env: dict[str, str], msg: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "commit", "-m", msg], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=300)


def test_a_commit_adding_a_token_is_refused(hooked_repo):
    repo, env = hooked_repo
    token = fake_secrets(3)["github-pat-classic"]
    (repo / "settings.py").write_text(f"GITHUB_TOKEN = '{token}'\n")
    git(repo, "add", "settings.py")
    proc = _commit(repo, env, "add settings")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "tcg scan (secrets in the staged changes)" in out and "Failed" in out
    assert "settings.py:1:" in out and "github-pat-classic" in out
    assert "do not commit them" in out and "hint:" in out
    assert token not in out and token[4:20] not in out  # the refusal never prints the value
    assert git(repo, "log", "--oneline").count("\n") == 0  # still only the config commit
    git(repo, "rm", "-q", "--cached", "settings.py")
    (repo / "settings.py").unlink()


def test_a_clean_commit_goes_through(hooked_repo):
    repo, env = hooked_repo
    (repo / "README.md").write_text("# project\nNothing secret here.\n")
    git(repo, "add", "README.md")
    proc = _commit(repo, env, "readme")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "tcg scan (secrets in the staged changes)" in proc.stdout + proc.stderr
    assert "Passed" in proc.stdout + proc.stderr
