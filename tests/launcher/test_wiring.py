"""Per-agent wiring: the generated helpers really route an agent's shell lines
through the station. Real bash and zsh, real station, no agent binary."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tcg.launcher import wiring
from tcg.launcher.resolve import interpreter
from tests.helpers.leaks import assert_no_secret_written
from tests.launcher.conftest import github_pat

ENV_VALUE = "hunter2-" + "Zq8" * 6
CLAUDE_LINE = (
    "source {snap} 2>/dev/null || true && shopt -u extglob 2>/dev/null || true "
    "&& eval {cmd} < /dev/null && pwd -P >| {cwdfile}"
)


@pytest.fixture
def workdir(tmp_path):
    d = tmp_path / "work"
    d.mkdir()
    (d / ".env").write_text(f"DB_PASSWORD={ENV_VALUE}\n")
    token = github_pat(5)
    (d / "notes.txt").write_text(f"deploy with {token}\n")
    return d, token


def claude_line(cmd: str, tmp_path: Path) -> str:
    import shlex

    snap = tmp_path / "snapshot-bash-1.sh"
    snap.write_text("unalias -a 2>/dev/null\n")
    return CLAUDE_LINE.format(snap=snap, cmd=shlex.quote(cmd), cwdfile=tmp_path / "claude-cwd")


def agent_environ(agent: str) -> dict[str, str]:
    env, _ = wiring.agent_env(agent, "sess0001", dict(os.environ), interpreter())
    return env


def run(argv: list[str], cwd: Path, env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=60)


def test_claude_prefix_is_materialised_verified_and_repaired(tcg_home):
    def ensure() -> Path:
        return Path(wiring.ensure_claude_prefix(interpreter()))

    path = ensure()
    assert path.is_relative_to(tcg_home / "state")
    assert path.stat().st_mode & 0o7777 == 0o700
    assert path.read_text().startswith(f"#!{interpreter()} -I\n")
    good = path.read_bytes()
    path.write_text("#!/bin/sh\nexec \"$@\"\n")  # tampered
    assert ensure().read_bytes() == good
    path.write_text("#!/bin/sh\nexec \"$@\"\n" + "#" * (len(good) - 20))  # tampered, same size
    assert ensure().read_bytes() == good
    path.chmod(0o777)  # loosened
    assert ensure().stat().st_mode & 0o7777 == 0o700
    path.unlink()
    path.symlink_to("/bin/true")  # replaced by a link
    fixed = ensure()
    assert not fixed.is_symlink() and fixed.read_bytes() == good


def test_prefix_text_without_a_shebang_safe_interpreter_uses_sh(tmp_path):
    text = wiring.claude_prefix_text("/opt/my python/bin/python3")
    assert text.startswith("#!/bin/sh\n") and "_tcg_py='/opt/my python/bin/python3'" in text


def test_claude_prefix_routes_the_line_through_the_station(workdir, tmp_path, tcg_home):
    d, token = workdir
    env = agent_environ("claude")
    prefix = env["CLAUDE_CODE_SHELL_PREFIX"]

    blocked = run([prefix, claude_line("cat .env", tmp_path)], d, env)
    assert blocked.returncode == 126
    assert "blocked (secret-store-read)" in blocked.stderr
    assert ENV_VALUE not in blocked.stdout + blocked.stderr

    masked = run([prefix, claude_line("cat notes.txt", tmp_path)], d, env)
    assert masked.returncode == 0, masked.stderr
    assert token not in masked.stdout and "<SECRET:github-pat" in masked.stdout

    hello = run([prefix, claude_line("echo hello", tmp_path)], d, env)
    assert (hello.returncode, hello.stdout) == (0, "hello\n")
    assert (tmp_path / "claude-cwd").read_text().strip() == str(d.resolve())

    # Hook commands come through the same prefix and read JSON on stdin.
    hook = run([prefix, "python3 -c 'import json,sys; print(json.load(sys.stdin)[\"ok\"])'"], d, env,
               stdin='{"ok": "yes"}')
    assert (hook.returncode, hook.stdout) == (0, "yes\n"), hook.stderr

    assert run([prefix, "echo", "two"], d, env).returncode == 126  # not Claude's one-argument form
    assert_no_secret_written(tcg_home, [ENV_VALUE, token])


@pytest.mark.parametrize("shell", ["bash -c", "bash -lc", "zsh -c", "zsh -lc"])
def test_shell_env_wiring_mediates_agent_shells(shell, workdir, tcg_home):
    """codex, qwen, cursor-agent: every `bash -c`/`zsh -c` they spawn reaches the station."""
    if shutil.which(shell.split()[0]) is None:
        pytest.skip(f"{shell.split()[0]} not installed")
    d, token = workdir
    env = agent_environ("codex")
    argv = shell.split()
    blocked = run([*argv, "cat .env"], d, env)
    assert blocked.returncode == 126, blocked.stderr
    assert ENV_VALUE not in blocked.stdout + blocked.stderr
    masked = run([*argv, "cat notes.txt"], d, env)
    assert masked.returncode == 0 and token not in masked.stdout and "<SECRET:github-pat" in masked.stdout
    hello = run([*argv, "echo hello; exit 3"], d, env)
    assert (hello.returncode, hello.stdout) == (3, "hello\n")
    # `sh -c LINE arg0 args…`: the positional parameters survive the re-routing.
    args = run([*argv, 'printf "[%s]" "$@"', "arg0", "one two", "it's", "$HOME"], d, env)
    assert args.stdout == "[one two][it's][$HOME]", args.stderr
    assert_no_secret_written(tcg_home, [ENV_VALUE, token])


def test_users_own_bash_env_and_zdotdir_still_load(tmp_path, workdir):
    d, _ = workdir
    user_env = tmp_path / "user-bash-env.sh"
    user_env.write_text("greet() { echo \"hi from the user's BASH_ENV\"; }\n")
    zdot = tmp_path / "zdot"
    zdot.mkdir()
    (zdot / ".zshenv").write_text("export USER_ZSHENV_RAN=yes\n")
    base = dict(os.environ, BASH_ENV=str(user_env), ZDOTDIR=str(zdot))
    env, wired = wiring.agent_env("qwen", "sess0002", base, interpreter())
    assert wired == ["env", "bash-env", "zdotdir", "qwen-hooks"]
    assert env["TCG_USER_BASH_ENV"] == str(user_env) and env["BASH_ENV"] != str(user_env)
    out = run(["bash", "-c", "greet"], d, env)
    assert out.stdout == "hi from the user's BASH_ENV\n", out.stderr
    if shutil.which("zsh"):
        out = run(["zsh", "-c", "echo $USER_ZSHENV_RAN"], d, env)
        assert out.stdout == "yes\n", out.stderr


def test_agent_env_marks_the_actor_and_drops_a_mediated_marker():
    base = dict(os.environ, TCG_MEDIATED="x", TCG_MEDIATED_FDS="1,2")
    env, wired = wiring.agent_env("claude", "sess0003", base, sys.executable)
    assert (env["TCG_ACTOR"], env["TCG_AGENT"], env["TCG_SESSION"]) == ("agent", "claude", "sess0003")
    assert "TCG_MEDIATED" not in env and "TCG_MEDIATED_FDS" not in env
    assert "BASH_ENV" not in env  # Claude Code's own snapshot shell must not be re-routed
    assert wired == ["env", "claude-shell-prefix", "claude-hooks"]


@pytest.mark.parametrize(("agent", "variable"), [("claude", "CLAUDE_CODE_SHELL_PREFIX"), ("qwen", "BASH_ENV")])
def test_the_agents_hook_recognises_the_helper_the_launch_wired(agent, variable, tcg_home):
    """The hook and the launcher agree on the helper's name (tcg.agents.routes): the
    hook trusts the station with the agent's shell commands only when the launch
    routed them there, and not for a look-alike path or outside a launched session."""
    from tcg.agents import claude, qwen

    adapter = {"claude": claude.ADAPTER, "qwen": qwen.ADAPTER}[agent]
    env = agent_environ(agent)
    assert adapter.shell_via_station(env)
    assert not adapter.shell_via_station({**env, variable: env[variable] + ".other"})
    assert not adapter.shell_via_station({k: v for k, v in env.items() if k != "TCG_SESSION"})


SHIMS = Path(wiring.__file__).parent / "shims"
SHELL_SHIMS = {"bash-env.bash": "bash", "claude-prefix.sh": "sh", "zshenv.zsh": "zsh"}


def _shellcheck(path: Path, shell: str) -> None:
    out = subprocess.run(["shellcheck", "-s", "bash" if shell == "zsh" else shell, str(path)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout


def _syntax(path: Path, shell: str) -> None:
    out = subprocess.run([shell, "-n", str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("name", sorted(SHELL_SHIMS))
def test_shim_files_are_clean_at_rest(name):
    """The templates are real files: valid shell, shellcheck-clean, one placeholder."""
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck not installed")
    shell = SHELL_SHIMS[name]
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} not installed")
    path = SHIMS / name
    _syntax(path, shell)
    _shellcheck(path, shell)
    assert path.read_text().count(f"'{wiring.PY_PLACEHOLDER}'") == 1


@pytest.mark.parametrize("py", ["/usr/bin/python3", "/opt/py thon/it's/python3", "/tmp/$(touch x)/py"])
def test_rendered_shims_are_clean_and_carry_the_interpreter(py, tmp_path):
    """Rendered with a path that needs quoting: still valid, and the shell reads the path back exactly."""
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck not installed")
    texts = {"bash-env.bash": wiring.bash_env_text(py), "zshenv.zsh": wiring.zshenv_text(py),
             "claude-prefix.sh": wiring.render_shell("claude-prefix.sh", py)}
    for name, text in texts.items():
        shell = SHELL_SHIMS[name]
        if shutil.which(shell) is None:
            continue
        path = tmp_path / name
        path.write_text(text)
        _syntax(path, shell)
        _shellcheck(path, shell)
        assert wiring.PY_PLACEHOLDER not in text
        # The TEMPLATE block alone, evaluated: the variable holds exactly the path.
        block = text.split("# --- TEMPLATE (begin) ---\n")[1].split("# --- TEMPLATE (end) ---")[0]
        got = subprocess.run([shell, "-c", block + 'printf %s "$_tcg_py"'], capture_output=True, text=True)
        assert got.stdout == py, (name, got.stderr)


def test_prefix_text_is_python_when_the_shebang_can_hold_the_path():
    text = wiring.claude_prefix_text(interpreter()) if wiring.shebang_ok(interpreter()) else ""
    if text:
        assert text.startswith(f"#!{interpreter()} -I\n") and "tcg-launch-shim" in text
        compile(text, "prefix", "exec")
