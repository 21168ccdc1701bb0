"""What `tcg launch` hands Claude Code and Qwen Code: generated settings, merged with the
user's own, and the options and settings that would switch tcg's hooks off."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tcg.agents import claude, qwen, settings
from tcg.launcher.resolve import interpreter
from tcg.launcher.wiring import OwnSandboxError, UnmediatedError, WiringError, wire
from tests.launcher.conftest import TCG, commit, make_repo


def wired(agent: str, args: list[str], env: dict[str, str] | None = None, cwd: str | None = None):
    return wire(agent, "sess-1", env if env is not None else dict(os.environ), args, interpreter(), cwd=cwd)


def test_claude_gets_a_settings_file_with_every_hook_fail_closed(tcg_home):
    w = wired("claude", ["-p", "hi"])
    assert w.args[0] == "--settings" and w.args[2:] == ["-p", "hi"]
    path = Path(w.args[1])
    assert path.is_relative_to(tcg_home / "state") and path.stat().st_mode & 0o777 == 0o600
    data = json.loads(path.read_text())
    assert data["disableAllHooks"] is False  # overrides a user's or project's true (measured)
    assert set(data["hooks"]) == {"PreToolUse", "PostToolUse", "UserPromptSubmit", "SessionStart"}
    for groups in data["hooks"].values():
        (group,) = groups
        (hook,) = group["hooks"]
        assert claude.is_tcg_hook(hook) and hook["onFailure"] == "block" and hook["command"] == interpreter()
    assert w.wired == ["env", "claude-shell-prefix", "claude-hooks"]
    assert wired("claude", []).args[1] == w.args[1]  # same content, same file


def test_hooks_an_earlier_release_wrote_are_still_tcgs():
    """The entry changed (the hook now leaves without the interpreter's teardown):
    settings written with the earlier entry are still recognised, so install,
    uninstall and doctor find them; a look-alike without tcg's mark is not."""
    old = claude.hook_entry("/usr/bin/python3", "PreToolUse")
    old["args"] = ["-I", "-c", "import sys; from tcg.agents.claude import main; sys.exit(main(sys.argv[1:]))",
                   "PreToolUse"]
    assert claude.ENTRY not in old["args"] and claude.is_tcg_hook(old)
    assert not claude.is_tcg_hook({**old, "statusMessage": "mine"})
    assert not claude.is_tcg_hook({**old, "args": ["-I", "-c", "print(1)", "PreToolUse"]})


def test_a_users_own_settings_are_merged_not_lost(tmp_path):
    mine = tmp_path / "mine.json"
    mine.write_text(json.dumps({"model": "sonnet", "hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo mine"}]}]}}))
    w = wired("claude", ["--model", "x", "--settings", str(mine), "-p", "--settings={\"env\": {\"A\": \"1\"}}",
                         "--", "--settings", "literal"])
    assert w.args[2:] == ["--model", "x", "-p", "--", "--settings", "literal"]  # after `--` is the prompt
    data = json.loads(Path(w.args[1]).read_text())
    assert data["model"] == "sonnet" and data["env"] == {"A": "1"}
    pre = data["hooks"]["PreToolUse"]
    assert claude.is_tcg_hook(pre[0]["hooks"][0]) and pre[1]["hooks"][0]["command"] == "echo mine"


@pytest.mark.parametrize("value", ["/nonexistent/settings.json", "{not json", "[1]"])
def test_an_unreadable_settings_value_is_refused(value):
    with pytest.raises(WiringError) as err:
        wired("claude", ["--settings", value])
    assert not isinstance(err.value, UnmediatedError) and err.value.hint


@pytest.mark.parametrize(("args", "env", "why"), [
    (["--bare", "-p", "x"], {}, "--bare"),
    (["-p", "x", "--safe-mode"], {}, "--safe-mode"),
    ([], {"CLAUDE_CODE_SIMPLE": "1"}, "CLAUDE_CODE_SIMPLE"),
    ([], {"CLAUDE_CODE_SAFE_MODE": "true"}, "CLAUDE_CODE_SAFE_MODE"),
])
def test_claude_without_hooks_is_refused(args, env, why):
    with pytest.raises(UnmediatedError) as err:
        wired("claude", args, dict(os.environ, **env))
    assert why in err.value.message
    w = wire("claude", "s", dict(os.environ, **env), args, interpreter(), unmediated_ok=True)
    assert "claude-hooks" not in w.wired and w.args == args and "CLAUDE_CODE_SHELL_PREFIX" in w.env


def test_bare_after_dashdash_is_a_prompt_not_an_option():
    assert wired("claude", ["-p", "--", "--bare"]).args[2:] == ["-p", "--", "--bare"]


def test_managed_settings_that_disable_hooks_are_seen(tmp_path):
    managed = tmp_path / "claude-code"
    (managed / "managed-settings.d").mkdir(parents=True)
    assert settings.claude_hooks_switched_off([], {}, str(managed)) is None
    (managed / "managed-settings.d" / "10-corp.json").write_text('{"allowManagedHooksOnly": true}')
    assert "allowManagedHooksOnly" in settings.claude_hooks_switched_off([], {}, str(managed))
    (managed / "managed-settings.json").write_text("{broken")
    assert "cannot be read" in settings.claude_hooks_switched_off([], {}, str(managed))


def test_launch_refuses_bare_with_a_reason(tmp_path, launch_env, tcg_home):
    repo = make_repo(tmp_path / "repo")
    commit(repo, "a.py", "x = 1\n")
    proc = subprocess.run([TCG, "launch", "claude", "--bare", "-p", "hi"], cwd=repo, env=launch_env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 126
    assert "`claude --bare` runs without hooks" in proc.stderr and "hint:" in proc.stderr
    assert not Path(launch_env["FAKE_AGENT_OUT"]).exists()
    ev = json.loads((tcg_home / "state" / "events.jsonl").read_text().splitlines()[-1])
    assert (ev["decision"], ev["reason"]) == ("block", "agent-unmediated")
    policy = tcg_home / "config" / "policy.toml"
    policy.parent.mkdir(parents=True, exist_ok=True)
    policy.write_text('[launch]\non-unmediated = "allow"\n')
    proc = subprocess.run([TCG, "launch", "claude", "--bare", "-p", "hi"], cwd=repo, env=launch_env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "launch.on-unmediated allows it" in proc.stderr
    rec = json.loads(Path(launch_env["FAKE_AGENT_OUT"]).read_text())
    assert rec["argv"][1:] == ["--bare", "-p", "hi"]


def test_qwen_gets_a_system_settings_layer_merged_with_the_one_it_had(tmp_path):
    system = tmp_path / "system.json"
    system.write_text(json.dumps({"security": {"auth": {"selectedType": "openai"}},
                                  "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}))
    w = wired("qwen", ["--yolo"], dict(os.environ, QWEN_CODE_SYSTEM_SETTINGS_PATH=str(system)))
    assert w.args == ["--yolo"] and w.wired == ["env", "bash-env", "zdotdir", "qwen-hooks"]
    generated = Path(w.env["QWEN_CODE_SYSTEM_SETTINGS_PATH"])
    assert generated != system and w.env["TCG_USER_QWEN_SYSTEM_SETTINGS"] == str(system)
    data = json.loads(generated.read_text())
    assert data["security"] == {"auth": {"selectedType": "openai"}} and data["disableAllHooks"] is False
    assert data["hooks"]["Stop"] == [{"hooks": [{"type": "command", "command": "true"}]}]
    hook = data["hooks"]["PreToolUse"][0]["hooks"][0]
    assert hook["name"] == qwen.MARK and hook["env"]["BASH_ENV"] == "" and qwen.ENTRY in hook["command"]
    with pytest.raises(UnmediatedError):
        wired("qwen", ["--safe-mode"])


def test_codex_runs_its_commands_without_its_own_sandbox_and_without_a_snapshot():
    w = wired("codex", ["exec", "hi"])
    assert w.args == ["-c", "features.shell_snapshot=false", "-c", 'sandbox_mode="danger-full-access"', "exec", "hi"]
    assert "BASH_ENV" in w.env and w.wired[-2:] == ["codex-no-shell-snapshot", "codex-sandbox-by-tcg"]


@pytest.mark.parametrize("args", [["exec", "-s", "read-only", "hi"], ["-sworkspace-write"], ["--sandbox=read-only"],
                                  ["--sandbox", "workspace-write"], ["exec", "--approve-for-me"], ["--full-auto"],
                                  ["-c", 'sandbox_mode="read-only"'], ["--config=sandbox_mode=workspace-write"],
                                  ["-csandbox_mode='read-only'"]])
def test_codex_own_sandbox_chosen_is_refused(args):
    with pytest.raises(OwnSandboxError) as err:
        wired("codex", args)
    assert "its own sandbox" in err.value.message and err.value.hint.startswith("drop that option")


@pytest.mark.parametrize("args", [["-s", "danger-full-access"], ["--sandbox=danger-full-access"],
                                  ["-c", 'sandbox_mode="danger-full-access"'], ["--dangerously-bypass-approvals-and-sandbox"],
                                  ["-c", "model=o3"], ["exec", "--", "-s", "read-only"], ["exec", "use -s read-only"]])
def test_codex_options_that_keep_tcg_in_charge_pass(args):
    assert wired("codex", args).args[4:] == args
