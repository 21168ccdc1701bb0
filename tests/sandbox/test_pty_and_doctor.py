"""An agent command on a terminal gets the same view; `tcg doctor` says which layer is active."""

from __future__ import annotations

import pexpect
import pytest

from tcg.cli.doctor import FAIL, OK, WARN, check_sandbox
from tests.sandbox.conftest import BASH, TCG_SHELL, sandbox_works
from tests.sandbox.exfil_table import b64py
from tests.sandbox.leakcheck import leaks

pytestmark = pytest.mark.skipif(sandbox_works() is not None, reason=f"no sandbox here: {sandbox_works()}")


def test_pty_mode_agent_command_runs_in_the_view(world):
    code = "import os\nprint('T', open('.env').read(), os.environ.get('github_token'.upper()), os.getpid())"
    child = pexpect.spawn(TCG_SHELL, ["run-line", "--shell", BASH, b64py(code) + "; tty"], cwd=str(world.project),
                          env=world.env, timeout=60)
    child.expect(pexpect.EOF)
    out = child.before
    child.close()
    assert child.exitstatus == 0, out
    assert b"DB_PASSWORD=<SECRET:secret-store-value:" in out and b"None" in out
    assert b"/dev/pts/" in out  # still on a terminal
    assert not leaks(out, world.values)


def test_doctor_reports_the_active_layer(world, tmp_path):
    assert check_sandbox(world.env)[0].status == OK
    assert "namespaces" in check_sandbox(world.env)[0].detail
    policy = tmp_path / "p.toml"
    policy.write_text('[sandbox]\nmechanism = "bwrap"\nbwrap = "/nonexistent/bwrap"\n')
    c = check_sandbox({**world.env, "TCG_POLICY": str(policy)})[0]
    assert c.status == FAIL and "refused" in c.detail and "user namespaces" in c.hint
    policy.write_text('[sandbox]\nmechanism = "bwrap"\nbwrap = "/nonexistent/bwrap"\non-unavailable = "warn"\n')
    c = check_sandbox({**world.env, "TCG_POLICY": str(policy)})[0]
    assert c.status == WARN and "line policy" in c.detail


def test_a_humans_sanitized_read_of_a_store_masks_every_secret_named_value(world):
    """`cat .env` at a human's terminal runs (SANITIZE); inside the store every value of a
    secret-named key is masked whatever it looks like (a passphrase has no entropy)."""
    import subprocess

    env = {**world.env, "TCG_ACTOR": "human"}
    r = subprocess.run([TCG_SHELL, "run-line", "--shell", BASH, "cat .env"], cwd=world.project, env=env,
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    assert r.returncode == 0
    out = r.stdout.decode()
    assert "DB_PASSWORD=<SECRET:secret-store-value:" in out and "DB_HOST=localhost" in out and "PORT=5432" in out
    assert world.values["dotenv-passphrase"] not in out
