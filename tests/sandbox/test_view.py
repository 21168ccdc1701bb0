"""The agent's view, end to end through `tcg_shell run-line`: what is covered, what
still works, what happens when the view cannot be built, as root and unprivileged."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from tests.sandbox.conftest import BASH, TCG_SHELL, run_agent, run_plain, sandbox_works
from tests.sandbox.exfil_table import b64py
from tests.sandbox.leakcheck import leaks

pytestmark = pytest.mark.skipif(sandbox_works() is not None, reason=f"no sandbox here: {sandbox_works()}")

# Reads a secret variable in a way the line policy does not see.
ENV_PROBE = "python3 -c \"import os;print(os.environ.get('deploy_password'.upper(),'unset'))\""
UNPRIVILEGED = ["unshare", "--user", "--map-user=1000", "--map-group=1000"]


def can_map_unprivileged() -> bool:
    if shutil.which("unshare") is None:
        return False
    return subprocess.run([*UNPRIVILEGED, "true"], capture_output=True).returncode == 0


def events(tcg_home):
    path = tcg_home / "state" / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def with_policy(world, tmp_path, text):
    policy = tmp_path / "policy.toml"
    policy.write_text(text)
    return {**world.env, "TCG_POLICY": str(policy)}


NORMAL = [
    ("git status --short --branch", b"## "),
    ("git log --oneline", b"initial"),
    ("echo change >> README.md && git diff --stat", b"README.md"),
    ("python3 -m pytest -q -p no:cacheprovider test_app.py", b"1 passed"),
    ("npm test", b"npm-ok"),
    ("make test", b"make-ok"),
    (f"{sys.executable} -m venv venv && venv/bin/python -m pip install -q -e . "
     "&& venv/bin/python -m pip show demo-app", b"Name: demo-app"),
    ("cat README.md", b"# demo"),
    ("ls -la ~/.ssh", b"id_ed25519.pub"),
    ("ssh-keygen -l -f ~/.ssh/id_ed25519.pub", b"ED25519"),
    ("cat .env.example", b"DB_PASSWORD=changeme"),
]


@pytest.mark.parametrize(("line", "expect"), NORMAL, ids=[n[0].split(" &&")[0][:40] for n in NORMAL])
def test_normal_developer_lines_work_unchanged(world, line, expect):
    tool = line.split()[0]
    if tool in ("npm", "make", "ssh-keygen") and shutil.which(tool) is None:
        pytest.skip(f"optional tool not installed: {tool}")
    r = run_agent(world, line, timeout=300)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert expect in r.stdout, r.stdout.decode(errors="replace")
    assert not leaks(r.stdout + r.stderr, world.values)


def test_the_obvious_cases_are_still_refused_by_the_line_policy(world):
    for line in ("cat .env", "printenv", "cat ~/.ssh/id_ed25519 | rev", "git cat-file -p HEAD:.env"):
        r = run_agent(world, line)
        assert r.returncode == 126, line
        assert b"tcg: blocked (" in r.stderr and b"hint: " in r.stderr


def test_stores_are_covered_and_secret_variables_are_gone(world, tcg_home):
    code = ("import os\n"
            "print('dotenv:', open('.env').read())\n"
            "print('key:', repr(open(os.path.expanduser('~/.ssh/id_ed25519')).read()))\n"
            "print('pub:', open(os.path.expanduser('~/.ssh/id_ed25519.pub')).read())\n"
            "print('vars:', sorted(k for k in os.environ if k in ('GITHUB_TOKEN','DEPLOY_PASSWORD','RELEASE_CFG')))\n"
            "print('pid:', os.getpid(), sorted(p for p in os.listdir('/proc') if p.isdigit()))\n")
    r = run_agent(world, b64py(code))
    out = r.stdout.decode()
    assert r.returncode == 0, r.stderr
    assert "PORT=5432" in out and "DB_HOST=<SECRET:" in out  # the twin keeps keys, and numbers
    assert "DB_PASSWORD=<SECRET:secret-store-value:" in out
    assert "key: ''" in out  # a private key is covered by an empty file
    assert "ssh-ed25519 " in out  # public keys stay
    assert "vars: []" in out
    pids = out.split("pid:")[1]
    assert "'1'" in pids and len(eval(pids.split(" ", 2)[2])) <= 4  # its own PID namespace
    assert not leaks(r.stdout + r.stderr, world.values)
    last = events(tcg_home)[-1]
    box = last["sandbox"]
    assert box["layer"] == "namespaces" and box["hidden"] >= 9 and box["twins"] >= 5
    assert box["env_removed"] == ["DEPLOY_PASSWORD", "GITHUB_TOKEN", "RELEASE_CFG"]
    assert not leaks(json.dumps(last).encode(), world.values)


def test_a_store_created_by_a_command_is_covered_from_the_next_command_on(world):
    write = b64py("open('.env.staging','w').write('STAGING_TOKEN=written-by-the-agent-xyz\\n')\n"
                  "print(open('.env.staging').read())")
    r = run_agent(world, write)
    assert b"written-by-the-agent-xyz" in r.stdout  # its own file: it already knows it
    r = run_agent(world, b64py("print(repr(open('.env.staging').read()))"))
    assert b"written-by-the-agent-xyz" not in r.stdout
    assert b"STAGING_TOKEN=<SECRET:secret-store-value:" in r.stdout


def test_writing_a_covered_store_fails_and_changes_nothing(world):
    r = run_agent(world, b64py("open('.e'+'nv','a').write('X=1')"))
    assert r.returncode != 0 and b"Read-only file system" in r.stderr
    assert "X=1" not in (world.project / ".env").read_text()


def test_exit_codes_signals_and_stdin_pass_through(world):
    assert run_agent(world, "exit 7").returncode == 7
    assert run_agent(world, "kill -TERM $$").returncode == 128 + 15
    r = subprocess.run([TCG_SHELL, "run-line", "--shell", BASH, "tr a-z A-Z"], cwd=world.project, env=world.env,
                       input=b"hello\n", capture_output=True, timeout=60)
    assert r.stdout == b"HELLO\n"


def test_a_background_process_outlives_the_command_without_holding_it(world):
    start = time.monotonic()
    r = run_agent(world, "(sleep 2; echo alive > bg.txt) > /dev/null 2>&1 & echo started")
    assert r.returncode == 0 and b"started" in r.stdout
    assert time.monotonic() - start < 30
    deadline = time.monotonic() + 60
    while not (world.project / "bg.txt").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert (world.project / "bg.txt").read_text() == "alive\n"


def test_termination_reaches_the_command(world):
    proc = subprocess.Popen([TCG_SHELL, "run-line", "--shell", BASH, "echo ready; exec sleep 60"],
                            cwd=world.project, env=world.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout.readline() == b"ready\n"
    proc.terminate()
    assert proc.wait(timeout=30) == 128 + 15


def test_a_nested_tcg_inside_the_view_runs_in_it(world):
    inner = "cat README.md; python3 -c \"import os;print(os.environ.get('github_token'.upper()))\"; echo done"
    r = run_agent(world, f"{TCG_SHELL} run-line '{inner}'")
    assert b"# demo" in r.stdout and b"done" in r.stdout
    assert not leaks(r.stdout + r.stderr, world.values)


@pytest.mark.skipif(not can_map_unprivileged(), reason="cannot map an unprivileged user here")
def test_unprivileged_user_gets_the_same_view(world):
    code = ("import os\nprint(os.getuid(), repr(open('.env').read()))\n"
            "print(repr(open(os.path.expanduser('~/.ssh/id_ed25519')).read()))\nprint(os.environ.get('GITHUB_TOKEN'))")
    r = run_agent(world, b64py(code), prefix=UNPRIVILEGED)
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    assert out.startswith("1000 ") and "DB_PASSWORD=<SECRET:" in out and "''" in out and "None" in out
    assert not leaks(r.stdout + r.stderr, world.values)
    for line, expect in (("git log --oneline", b"initial"), ("cat README.md", b"# demo")):
        r = run_agent(world, line, prefix=UNPRIVILEGED)
        assert r.returncode == 0 and expect in r.stdout
    # a namespace made inside the view cannot unmount a cover to see the store
    peek = "unshare -Urm sh -c 'umount .env 2>&1; cat .env'"
    r = run_agent(world, peek, prefix=UNPRIVILEGED)
    assert not leaks(r.stdout + r.stderr, world.values)


def test_root_cannot_unmount_a_cover(world):
    if os.geteuid() != 0:
        pytest.skip("runs as root only")
    r = run_agent(world, "umount .env; umount -l .env; cat .env.local; python3 -c \"print(open('.e'+'nv').read())\"")
    assert not leaks(r.stdout + r.stderr, world.values)
    # the covers' staging tmpfs stays beneath the view's /proc: it cannot be uncovered either
    r = run_agent(world, "umount /proc || umount -l /proc; ls /proc | head -3; cat /proc/1/environ | tr '\\0' '\\n'")
    assert b"twin0" not in r.stdout and b"empty" not in r.stdout.split()
    assert not leaks(r.stdout + r.stderr, world.values)


# ------------------------------------------------------------ when the view cannot be built


def test_missing_bwrap_blocks_by_default(world, tmp_path, tcg_home):
    env = with_policy(world, tmp_path, '[sandbox]\nmechanism = "bwrap"\nbwrap = "/nonexistent/bwrap"\n')
    r = run_agent(world, "touch ran.txt; echo hello", env=env)
    assert r.returncode == 126
    err = r.stderr.decode()
    assert err.startswith("tcg: blocked (sandbox-unavailable): ") and "/nonexistent/bwrap" in err
    assert "\nhint: " in err and "user namespaces" in err
    assert not (world.project / "ran.txt").exists() and r.stdout == b""
    assert events(tcg_home)[-1]["reason"] == "sandbox-unavailable"


def test_missing_bwrap_in_warn_mode_runs_with_a_warning_and_a_scrubbed_environment(world, tmp_path):
    env = with_policy(world, tmp_path, '[sandbox]\nmechanism = "bwrap"\nbwrap = "/nonexistent/bwrap"\n'
                                       'on-unavailable = "warn"\n')
    r = run_agent(world, f"{ENV_PROBE}; echo hello", env=env)
    assert r.returncode == 0 and b"hello" in r.stdout and b"unset" in r.stdout
    assert b"tcg: warning: the sandbox view for agent commands is unavailable" in r.stderr
    assert b"hint: " in r.stderr


def _blocked_namespaces_prefix() -> list[str]:
    """A real machine state where creating a user namespace fails: a user namespace
    whose limit is used up, with an unprivileged user inside it."""
    return ["unshare", "-Ur", "sh", "-c", 'echo 1 > /proc/sys/user/max_user_namespaces && exec "$@"', "sh",
            *UNPRIVILEGED]


@pytest.mark.skipif(not can_map_unprivileged(), reason="cannot map an unprivileged user here")
def test_blocked_unshare_blocks_with_a_clear_message(world, tmp_path):
    env = with_policy(world, tmp_path, '[sandbox]\nmechanism = "namespaces"\n')
    r = run_agent(world, "touch ran.txt; echo hello", env=env, prefix=_blocked_namespaces_prefix())
    assert r.returncode == 126, r.stderr
    err = r.stderr.decode()
    assert err.startswith("tcg: blocked (sandbox-unavailable): ") and "unshare" in err and "\nhint: " in err
    assert not (world.project / "ran.txt").exists()


@pytest.mark.skipif(not can_map_unprivileged(), reason="cannot map an unprivileged user here")
def test_blocked_unshare_in_warn_mode_runs_with_the_other_layers(world, tmp_path):
    env = with_policy(world, tmp_path, '[sandbox]\nmechanism = "namespaces"\non-unavailable = "warn"\n')
    r = run_agent(world, ENV_PROBE, env=env, prefix=_blocked_namespaces_prefix())
    assert r.returncode == 0 and r.stdout == b"unset\n"
    assert b"tcg: warning:" in r.stderr


@pytest.mark.skipif(not can_map_unprivileged(), reason="cannot map an unprivileged user here")
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="optional tool not installed: bwrap")
@pytest.mark.parametrize("mechanism", ["auto", "bwrap"])
def test_bubblewrap_that_cannot_create_namespaces_blocks(world, tmp_path, mechanism):
    """bwrap exits 1 both when it gives up and when the command exits 1; where it cannot
    create its namespaces (here, and inside Codex's own sandbox) nothing ran: refused."""
    env = with_policy(world, tmp_path, f'[sandbox]\nmechanism = "{mechanism}"\n')
    r = run_agent(world, "touch ran.txt; echo hello", env=env, prefix=_blocked_namespaces_prefix())
    assert r.returncode == 126, r.stderr
    err = r.stderr.decode()
    assert "tcg: blocked (sandbox-unavailable): " in err and "bubblewrap" in err and "\nhint: " in err
    assert b"hello" not in r.stdout and not (world.project / "ran.txt").exists()


@pytest.mark.skipif(not can_map_unprivileged(), reason="cannot map an unprivileged user here")
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="optional tool not installed: bwrap")
def test_bubblewrap_that_cannot_create_namespaces_in_warn_mode_runs_once(world, tmp_path):
    env = with_policy(world, tmp_path, '[sandbox]\nmechanism = "bwrap"\non-unavailable = "warn"\n')
    r = run_agent(world, f"echo x >> ran.txt; {ENV_PROBE}", env=env, prefix=_blocked_namespaces_prefix())
    assert r.returncode == 0 and r.stdout == b"unset\n", r.stderr
    assert b"tcg: warning:" in r.stderr and (world.project / "ran.txt").read_text() == "x\n"


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="optional tool not installed: bwrap")
def test_bubblewrap_keeps_a_command_exit_status_of_one(world, tmp_path):
    env = with_policy(world, tmp_path, '[sandbox]\nmechanism = "bwrap"\n')
    r = run_agent(world, "echo ran; exit 1", env=env)
    assert (r.returncode, r.stdout) == (1, b"ran\n"), r.stderr


def test_agent_command_never_runs_unrecorded(world, tcg_home, tmp_path):
    """An event log that cannot be opened (a directory in its place: it fails for root
    too) refuses an agent's command, even where the policy lets a person's command run
    with a warning (events.on-unwritable = "warn")."""
    log = tcg_home / "state" / "events.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    if log.exists():
        log.unlink()
    log.mkdir()
    env = with_policy(world, tmp_path, '[events]\non-unwritable = "warn"\n')
    r = run_agent(world, "touch ran.txt; echo hello", env=env)
    assert r.returncode == 126 and r.stdout == b""
    err = r.stderr.decode()
    assert err.startswith("tcg: blocked (event-log-unwritable): ") and "\nhint: " in err
    assert not (world.project / "ran.txt").exists()
    human = subprocess.run([TCG_SHELL, "run-line", "--shell", BASH, "echo hello"], cwd=world.project,
                           env={**env, "TCG_ACTOR": "human"}, stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=120)
    assert human.returncode == 0 and human.stdout == b"hello\n"
    assert b"the security event was not recorded" in human.stderr


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="optional tool not installed: bwrap")
def test_bubblewrap_mechanism_covers_the_same_stores(world, tmp_path):
    env = with_policy(world, tmp_path, '[sandbox]\nmechanism = "bwrap"\n')
    code = ("import os\nprint(open('.env').read())\nprint(repr(open(os.path.expanduser('~/.ssh/id_ed25519')).read()))\n"
            "print(os.environ.get('GITHUB_TOKEN'))")
    r = run_agent(world, b64py(code), env=env)
    assert r.returncode == 0, r.stderr
    assert b"DB_PASSWORD=<SECRET:" in r.stdout and b"''" in r.stdout and b"None" in r.stdout
    assert not leaks(r.stdout + r.stderr, world.values)
    assert run_agent(world, "git log --oneline", env=env).stdout.endswith(b"initial\n")


def test_plain_bash_sees_everything_the_view_hides(world):
    """The control: the same read without tcg shows the planted values."""
    r = run_plain(world, b64py("print(open('.env').read())"))
    assert leaks(r.stdout, world.values)


def test_a_store_edited_between_commands_is_covered_by_its_new_twin(world):
    store = world.project / ".env.production"
    store.write_text("OLD_KEY=first-version-value-1\n")
    try:
        read = b64py("print(repr(open('.env.production').read()))")
        r = run_agent(world, read)
        assert b"OLD_KEY=<SECRET:" in r.stdout and b"first-version" not in r.stdout
        # the same size and within the same second: the twin is remembered by inode,
        # size, mtime and ctime, and must not be served again
        store.write_text("NEW_KEY=other-version-value-2\n")
        r = run_agent(world, read)
        assert b"NEW_KEY=<SECRET:" in r.stdout and b"OLD_KEY" not in r.stdout
        assert b"other-version" not in r.stdout
        store.unlink()
        store.with_name(".env.production2").write_text("THIRD_KEY=third-version-value\n")
        r = run_agent(world, b64py("print(repr(open('.env.production2').read()))"))
        assert b"THIRD_KEY=<SECRET:" in r.stdout and b"third-version" not in r.stdout
    finally:
        for name in (".env.production", ".env.production2"):
            (world.project / name).unlink(missing_ok=True)
