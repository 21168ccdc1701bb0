"""The REAL Codex CLI (0.169.0) through `tcg launch codex`, offline.

A local stand-in for the Responses API scripts the model's `exec_command`
calls (the shell tool 0.169.0 offers; its arguments are `cmd` and
`yield_time_ms`) and keeps every request body. What is proven does not rest on
Codex's own log text: each scripted command must leave its `command_decision`
event, in the launch's session, with the decision and exit code the station
gave it, and the model must have received the station's answer — so a Codex
that ran a command without tcg (its own sandbox, another shell) fails here.

tcg runs Codex's commands with `sandbox_mode = "danger-full-access"` and gives
each its own OS view (docs/agents.md); inside Codex's own sandbox (reproduced
with `codex sandbox`) every command is refused with 126, never run unlogged.
Skipped when the CLI is not installed (`npm install --prefix tests/.npm @openai/codex@0.169.0`).
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
from tests.sandbox.conftest import sandbox_works

CODEX_VERSION = "0.169.0"
ENV_VALUE = "hunter2-" + "Lp9" * 6
TOKEN = github_pat(41)
# Codex reports a command as "still running" once yield_time_ms passes (default 10 s): the
# maximum it allows keeps a slow, loaded machine from cutting a mediated command short.
YIELD_MS = 30000


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


def events(tcg_home: Path) -> list[dict]:
    path = tcg_home / "state" / "events.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def codex_env(codex_bin: Path, codex_home: Path, hermetic_home: Path, tcg_home: Path) -> dict[str, str]:
    return {"PATH": f"{codex_bin}{os.pathsep}/usr/bin{os.pathsep}/bin", "HOME": str(hermetic_home),
            "CODEX_HOME": str(codex_home), "TCG_HOME": str(tcg_home), "TCG_FAKE_KEY": "dummy",
            "LANG": "C.UTF-8", "SHELL": "/bin/bash"}


def provider_args(url: str) -> list[str]:
    return ["-c", "model_provider=fake", "-c", "model=gpt-test", "-c", 'model_providers.fake.name="fake"',
            "-c", f'model_providers.fake.base_url="{url}/v1"', "-c", 'model_providers.fake.env_key="TCG_FAKE_KEY"',
            "-c", 'model_providers.fake.wire_api="responses"']


def shell(cmd: str, call_id: str) -> dict:
    return call("exec_command", {"cmd": cmd, "yield_time_ms": YIELD_MS}, call_id)


@pytest.mark.skipif(sandbox_works() is not None, reason=f"no sandbox view here: {sandbox_works()}")
def test_codex_commands_are_mediated(codex_bin, codex_home, tmp_path, hermetic_home, tcg_home):
    work = tmp_path / "work"
    work.mkdir()
    (work / ".env").write_text(f"DB_PASSWORD={ENV_VALUE}\n")
    (work / "notes.txt").write_text(f"token {TOKEN}\n")
    # A program that opens .env itself: the line policy cannot see it; the OS view shows it a
    # masked twin (same keys, placeholders for values).
    (work / "peek.py").write_text("print('peek:', open('.env').read().strip())\n")
    script = {"c_env": "cat .env", "c_notes": "cat notes.txt", "c_peek": "python3 peek.py",
              "c_exit": "echo hello; exit 3", "c_shell": "bash"}
    with FakeResponses([*(shell(cmd, cid) for cid, cmd in script.items()), text("done")]) as api:
        proc = subprocess.run([TCG, "launch", "codex", "exec", "--skip-git-repo-check", *provider_args(api.url),
                               "run the commands"], cwd=work,
                              env=codex_env(codex_bin, codex_home, hermetic_home, tcg_home),
                              capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, proc.stderr[-3000:]
        out = api.outputs()
        bodies = list(api.bodies)
    for i, body in enumerate(bodies):
        assert ENV_VALUE not in body and TOKEN not in body, f"request {i} carried a planted secret"
    assert set(out) == set(script), f"the model did not get every command's result: {sorted(out)}"

    log = events(tcg_home)
    gate = [e for e in log if e["event"] == "launch_gate"][-1]
    assert gate["decision"] == "allow" and "codex-sandbox-by-tcg" in gate["wired"]
    decisions = {e["command"]: e for e in log if e["event"] == "command_decision" and e["session"] == gate["session"]}
    # Every scripted command went through the station, exactly as the model asked for it.
    assert set(decisions) == set(script.values()), decisions.keys()
    assert all(e["actor"] == "agent" for e in decisions.values())

    env_ev = decisions["cat .env"]
    assert (env_ev["decision"], env_ev["reason"], env_ev["exit_code"]) == ("block", "secret-store-read", 126)
    assert "exited with code 126" in out["c_env"] and "tcg: blocked (secret-store-read)" in out["c_env"]

    notes = decisions["cat notes.txt"]
    assert (notes["decision"], notes["exit_code"]) == ("allow", 0)
    assert notes["sandbox"]["layer"] in ("namespaces", "bwrap")  # tcg's own view, not Codex's
    assert "<SECRET:github-pat" in out["c_notes"] and "exited with code 0" in out["c_notes"]

    peek = decisions["python3 peek.py"]
    assert (peek["decision"], peek["exit_code"]) == ("allow", 0) and peek["sandbox"]["twins"] >= 1
    assert "peek: DB_PASSWORD=<SECRET:" in out["c_peek"]

    assert decisions["echo hello; exit 3"]["exit_code"] == 3
    assert "exited with code 3" in out["c_exit"] and "hello" in out["c_exit"]
    # An interactive shell would read later input tcg cannot see: refused.
    bash = decisions["bash"]
    assert (bash["decision"], bash["reason"], bash["exit_code"]) == ("block", "unresolved-command", 126)
    assert "tcg: blocked (unresolved-command)" in out["c_shell"]
    assert "event was not recorded" not in proc.stderr + "".join(out.values())
    assert_no_secret_written(tcg_home, [ENV_VALUE, TOKEN])


@pytest.mark.parametrize("option", [["-s", "read-only"], ["--sandbox=workspace-write"], ["--approve-for-me"],
                                    ["-c", 'sandbox_mode="workspace-write"']])
def test_codex_own_sandbox_chosen_is_refused_at_launch(codex_bin, codex_home, tmp_path, hermetic_home, tcg_home,
                                                       option):
    with FakeResponses([text("done")]) as api:
        proc = subprocess.run([TCG, "launch", "codex", "exec", "--skip-git-repo-check", *provider_args(api.url),
                               *option, "hi"], cwd=tmp_path,
                              env=codex_env(codex_bin, codex_home, hermetic_home, tcg_home),
                              capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
        assert api.bodies == []  # Codex never started
    assert proc.returncode == 126
    first, hint = proc.stderr.splitlines()[:2]
    assert first.startswith("tcg: launch of codex refused: ") and option[-1] in first
    assert hint.startswith("hint: drop that option")
    gate = events(tcg_home)[-1]
    assert (gate["event"], gate["decision"], gate["reason"]) == ("launch_gate", "block", "agent-sandbox-conflict")


def _wired_env(codex_bin: Path, codex_home: Path, hermetic_home: Path, tcg_home: Path) -> dict[str, str]:
    """The environment `tcg launch codex` gives Codex (and so its commands)."""
    from tcg.launcher.resolve import interpreter
    from tcg.launcher.wiring import wire

    return wire("codex", "codex-own-sandbox", codex_env(codex_bin, codex_home, hermetic_home, tcg_home), [],
                interpreter()).env


def _in_codex_sandbox(env: dict[str, str], cwd: Path, config: list[str], line: str) -> subprocess.CompletedProcess:
    return subprocess.run(["codex", *config, "sandbox", "--", "bash", "-lc", line], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize(("config", "reason"), [
    # Codex's default for `codex exec`: tcg's state is read-only there.
    (['sandbox_mode="read-only"'], "event-log-unwritable"),
    # Even with tcg's state writable, Codex's sandbox forbids the namespaces tcg's view needs.
    (['sandbox_mode="workspace-write"', "sandbox_workspace_write.writable_roots=[{tcg_home}]"],
     "sandbox-unavailable"),
])
def test_inside_codex_own_sandbox_commands_fail_closed(codex_bin, codex_home, tmp_path, hermetic_home, tcg_home,
                                                       config, reason):
    """Should Codex's sandbox be in force anyway (a managed requirement, say), no command
    runs without tcg's view or unrecorded: the station refuses it with 126."""
    env = _wired_env(codex_bin, codex_home, hermetic_home, tcg_home)
    work = tmp_path / "work"
    work.mkdir()
    args = [x for c in config for x in ("-c", c.replace("{tcg_home}", json.dumps(str(tcg_home))))]
    probe = subprocess.run(["codex", *args, "sandbox", "--", "true"], cwd=work, env=env,
                           capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    if probe.returncode != 0:
        pytest.skip(f"Codex's own sandbox does not run here: {probe.stderr.strip()[:200]}")
    (tcg_home / "state").mkdir(exist_ok=True)
    r = _in_codex_sandbox(env, work, args, "echo ran > ran.txt; echo hello")
    assert r.returncode == 126, r.stderr
    assert f"tcg: blocked ({reason}): " in r.stderr and "\nhint: " in r.stderr
    assert "hello" not in r.stdout and not (work / "ran.txt").exists()
    if reason == "sandbox-unavailable":  # the log is writable there: the refusal is recorded
        last = events(tcg_home)[-1]
        assert (last["event"], last["decision"], last["reason"], last["exit_code"]) == \
            ("command_decision", "block", reason, 126)
