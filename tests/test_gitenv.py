"""tcg.gitenv.popen_git: git children on posix_spawn, with subprocess's behaviour where
the scanner and the launch gate rely on it (both streams read without deadlock, exit
status, stderr, SIGPIPE back to its default, a missing program)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tcg.gitenv import DEVNULL, PIPE, git_env, popen_git

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (Linux)")


def _repo(tmp_path, files: int) -> str:
    repo = tmp_path / "r"
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t.invalid"}
    subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
    for i in range(files):
        (repo / f"f{i}").write_text(f"content {i}\n")
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", "c"], check=True, env=env)
    return str(repo)


def test_communicate_moves_more_than_a_pipe_holds_both_ways(tmp_path):
    """Input and output each far beyond a pipe buffer: written and read together."""
    repo = _repo(tmp_path, 3)
    oids = subprocess.run(["git", "-C", repo, "ls-files", "-s"], capture_output=True, check=True,
                          text=True).stdout.split()[1::4]
    request = "".join(f"{oid}\n" for oid in oids * 20000).encode()  # ~2.4 MB in
    proc = popen_git(["git", "-C", repo, "cat-file", "--batch-check"], env=git_env(), stdin=PIPE)
    out, err = proc.communicate(request)
    assert proc.returncode == 0 and err == b""
    lines = out.splitlines()
    assert len(lines) == len(oids) * 20000 and all(ln.endswith(b" blob 10") for ln in lines)


def test_exit_status_and_stderr_of_a_failing_command(tmp_path):
    proc = popen_git(["git", "-C", str(tmp_path / "absent"), "rev-parse", "HEAD"], env=git_env())
    out, err = proc.communicate()
    assert proc.returncode == 128 and out == b""
    assert b"cannot change to" in err


def test_one_child_reads_another_childs_output(tmp_path):
    repo = _repo(tmp_path, 5)
    env = git_env()
    rev = popen_git(["git", "-C", repo, "rev-list", "--objects", "--all"], env=env, stderr=DEVNULL)
    check = popen_git(["git", "-C", repo, "cat-file", "--batch-check=%(objecttype) %(rest)"], env=env,
                      stdin=rev.stdout, stderr=DEVNULL)
    assert rev.stdout is not None
    rev.stdout.close()
    out, _ = check.communicate()
    assert rev.wait() == 0 and check.returncode == 0
    kinds = sorted(line.split(b" ")[0] for line in out.splitlines())
    assert kinds == [b"blob"] * 5 + [b"commit", b"tree"]


@linux_only
def test_sigpipe_is_back_to_default_in_the_child():
    """Python ignores SIGPIPE; a git writing into a closed pipe must end as it would from
    a shell (subprocess's restore_signals does the same)."""
    assert sys.platform.startswith("linux")
    proc = popen_git(["sh", "-c", "grep '^SigIgn' /proc/self/status"], env=dict(os.environ))
    out, _ = proc.communicate()
    ignored = int(out.split()[1], 16)
    assert proc.returncode == 0 and not ignored & (1 << (13 - 1))  # SIGPIPE = 13


@linux_only
def test_missing_program_raises_and_leaks_no_descriptor():
    before = set(os.listdir("/proc/self/fd"))
    with pytest.raises(FileNotFoundError):
        popen_git(["tcg-no-such-program-here"], env={"PATH": os.defpath}, stdin=PIPE)
    assert set(os.listdir("/proc/self/fd")) == before


def test_kill_ends_a_waiting_child(tmp_path):
    repo = _repo(tmp_path, 1)
    proc = popen_git(["git", "-C", repo, "cat-file", "--batch"], env=git_env(), stdin=PIPE,
                     stderr=DEVNULL)
    proc.kill()
    assert proc.wait() != 0
    proc.kill()  # reaped: a second kill is a no-op
    for f in (proc.stdin, proc.stdout):
        f.close()
