"""`tcg agents install|uninstall claude` and `tcg doctor`'s view of Claude Code's hooks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tcg.agents import claude, install
from tcg.cli.doctor import FAIL, OK, WARN, check_agent_hooks

TCG = str(Path(sys.executable).parent / "tcg")
USER_SETTINGS = {
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo mine"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    },
}


def tcg(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([TCG, *args], capture_output=True, text=True, timeout=60, env=dict(os.environ))


@pytest.fixture
def settings_file(hermetic_home: Path) -> Path:
    path = hermetic_home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(USER_SETTINGS, indent=4))
    path.chmod(0o640)
    return path


def test_install_merges_keeps_a_backup_and_is_idempotent(settings_file):
    before = settings_file.read_text()
    out = tcg("agents", "install", "claude")
    assert out.returncode == 0 and "installed" in out.stdout
    assert settings_file.with_name("settings.json.tcg-bak").read_text() == before
    data = json.loads(settings_file.read_text())
    assert data["model"] == "opus" and data["permissions"] == USER_SETTINGS["permissions"]
    assert install.installed(data)
    assert data["hooks"]["Stop"] == USER_SETTINGS["hooks"]["Stop"]
    pre = data["hooks"]["PreToolUse"]
    assert USER_SETTINGS["hooks"]["PreToolUse"][0] in pre and len(pre) == 2
    tcg_hook = next(h for g in pre for h in g["hooks"] if claude.is_tcg_hook(h))
    assert tcg_hook["onFailure"] == "block" and tcg_hook["command"] == os.path.abspath(sys.executable)
    assert settings_file.stat().st_mode & 0o777 == 0o640  # the user's mode kept
    first = settings_file.read_text()
    again = tcg("agents", "install", "claude")
    assert again.returncode == 0 and "already installed" in again.stdout
    assert settings_file.read_text() == first


def test_install_replaces_a_stale_interpreter(settings_file):
    assert install.install_claude(os.environ, "/old/venv/bin/python")[1]
    path, changed = install.install_claude(os.environ, sys.executable)
    assert changed
    data = json.loads(path.read_text())
    commands = {h["command"] for groups in data["hooks"].values() for g in groups for h in g["hooks"]
                if claude.is_tcg_hook(h)}
    assert commands == {sys.executable}  # replaced, never duplicated


def test_uninstall_removes_exactly_tcgs_entries(settings_file):
    assert tcg("agents", "install", "claude").returncode == 0
    out = tcg("agents", "uninstall", "claude")
    assert out.returncode == 0 and "removed" in out.stdout
    assert json.loads(settings_file.read_text()) == USER_SETTINGS
    out = tcg("agents", "uninstall", "claude")
    assert out.returncode == 0 and "no tcg hooks" in out.stdout


def test_install_on_a_fresh_home_and_back(hermetic_home):
    path = hermetic_home / ".claude" / "settings.json"
    assert tcg("agents", "install", "claude").returncode == 0
    assert install.installed(json.loads(path.read_text()))
    assert tcg("agents", "uninstall", "claude").returncode == 0
    assert json.loads(path.read_text()) == {}


def test_an_invalid_settings_file_is_left_alone(hermetic_home):
    path = hermetic_home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"hooks": [')
    out = tcg("agents", "install", "claude")
    assert out.returncode == 1 and "not valid JSON" in out.stderr and "hint:" in out.stderr
    assert path.read_text() == '{"hooks": ['
    assert not path.with_name("settings.json.tcg-bak").exists()


def test_doctor_reports_other_hooks_and_switches(settings_file, tmp_path):
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text(json.dumps({
        "disableAllHooks": True,
        "hooks": {"PostToolUse": [{"matcher": "Read", "hooks": [{"type": "command", "command": "redact.sh"}]}]}}))
    checks = check_agent_hooks(os.environ, str(project))
    text = [(c.status, c.detail) for c in checks]
    assert (WARN, f"another PreToolUse hook on 'Bash' (echo mine) in {settings_file}") in text
    assert any(s == WARN and "another PostToolUse hook on 'Read' (redact.sh)" in d for s, d in text)
    assert any(s == WARN and "sets disableAllHooks" in d for s, d in text)
    assert any(c.status == WARN and c.name == "claude hooks" and "not installed" in c.detail for c in checks)
    install.install_claude(os.environ, sys.executable)
    checks = check_agent_hooks(os.environ, str(project))
    assert any(c.status == OK and c.name == "claude hooks" for c in checks)
    assert not any(c.status == FAIL for c in checks)
    out = tcg("doctor")
    assert "another PreToolUse hook on 'Bash'" in out.stdout and "claude hooks" in out.stdout


def test_doctor_fails_when_the_hooks_interpreter_is_gone(settings_file):
    install.install_claude(os.environ, "/gone/venv/bin/python")
    checks = check_agent_hooks(os.environ, str(settings_file.parent))
    assert any(c.status == FAIL and "/gone/venv/bin/python, which is gone" in c.detail for c in checks)
