"""The REAL Codex CLI (0.169.0) through `tcg launch codex`, offline.

A local stand-in for the Responses API scripts the model's `exec_command`
calls and keeps every request body. Measured here: Codex runs each command as
`/bin/bash -lc CMD` (inside its own sandbox: read-only for `codex exec` by
default), so BASH_ENV routes it through the station: policy first, output
masked strictly (the command's stdout is a pipe), exit status kept. Skipped
when the CLI is not installed (`npm install --prefix tests/.npm @openai/codex@0.169.0`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.agents.conftest import installed_cli
from tests.agents.fake_openai import FakeResponses, call, text
from tests.helpers.leaks import assert_no_secret_written
from tests.launcher.conftest import TCG, github_pat

CODEX_VERSION = "0.169.0"
ENV_VALUE = "hunter2-" + "Lp9" * 6
TOKEN = github_pat(41)


@pytest.fixture
def codex_home():
    """Codex refuses to create its helper binaries (among them the sandbox launcher its
    bubblewrap sandbox execs) under /tmp, where pytest's directories are: its home goes
    under /var/tmp instead (removed afterwards)."""
    if not os.path.isdir("/var/tmp"):
        pytest.skip("Codex needs a home outside /tmp; /var/tmp does not exist here")
    home = tempfile.mkdtemp(prefix="tcg-test-codex-", dir="/var/tmp")
    yield Path(home)
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def codex_bin() -> Path:
    return installed_cli("codex", "@openai/codex", CODEX_VERSION)


def test_codex_commands_are_mediated(codex_bin, codex_home, tmp_path, hermetic_home, tcg_home):
    work = tmp_path / "work"
    work.mkdir()
    (work / ".env").write_text(f"DB_PASSWORD={ENV_VALUE}\n")
    (work / "notes.txt").write_text(f"token {TOKEN}\n")
    turns = [call("exec_command", {"cmd": "cat .env"}, "c_env"),
             call("exec_command", {"cmd": "cat notes.txt"}, "c_notes"),
             call("exec_command", {"cmd": "echo hello; exit 3"}, "c_exit"),
             call("exec_command", {"cmd": "bash"}, "c_shell"),
             text("done")]
    with FakeResponses(turns) as api:
        env = {"PATH": f"{codex_bin}{os.pathsep}/usr/bin{os.pathsep}/bin", "HOME": str(hermetic_home),
               "CODEX_HOME": str(codex_home), "TCG_HOME": str(tcg_home), "TCG_FAKE_KEY": "dummy",
               "LANG": "C.UTF-8", "SHELL": "/bin/bash"}
        args = ["exec", "--skip-git-repo-check", "-c", "model_provider=fake", "-c", "model=gpt-test",
                "-c", 'model_providers.fake.name="fake"', "-c", f'model_providers.fake.base_url="{api.url}/v1"',
                "-c", 'model_providers.fake.env_key="TCG_FAKE_KEY"', "-c", 'model_providers.fake.wire_api="responses"',
                "run the commands"]
        proc = subprocess.run([TCG, "launch", "codex", *args], cwd=work, env=env, capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]
        out = api.outputs()
        for i, body in enumerate(api.bodies):
            assert ENV_VALUE not in body and TOKEN not in body, f"request {i} carried a planted secret"
    assert "/bin/bash -lc 'cat notes.txt'" in proc.stderr  # how Codex starts a command (its own log)
    assert "exited with code 126" in out["c_env"] and "tcg: blocked (secret-store-read)" in out["c_env"]
    assert "<SECRET:github-pat" in out["c_notes"] and "exited with code 0" in out["c_notes"]
    assert "exited with code 3" in out["c_exit"] and "hello" in out["c_exit"]
    # An interactive shell would read later input tcg cannot see: refused.
    assert "exited with code 126" in out["c_shell"] and "tcg: blocked (unresolved-command)" in out["c_shell"]
    # Inside Codex's sandbox tcg's state is read-only: the decisions hold, the events cannot be
    # written, and every command says so (docs/agents.md).
    assert "the security event was not recorded" in out["c_notes"]
    events = [json.loads(x) for x in (tcg_home / "state" / "events.jsonl").read_text().splitlines()]
    gate = [e for e in events if e["event"] == "launch_gate"][-1]
    assert gate["wired"] == ["env", "bash-env", "zdotdir", "codex-no-shell-snapshot"]
    assert_no_secret_written(tcg_home, [ENV_VALUE, TOKEN])
