"""`tcg doctor`: one line per check, exit 1 with a list when something is wrong."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tcg.cli import main
from tcg.cli.doctor import FAIL, OK, WARN, run_checks
from tcg.events import EventLog
from tcg.keyhash import load_or_create_key
from tcg.paths import get_paths

VENV_BIN = Path(sys.executable).parent
needs_posix = pytest.mark.skipif(os.name != "posix", reason="POSIX modes and PATH layout")


def fake_path(tmp_path: Path, tools: list[str]) -> str:
    """A PATH holding only ``tools`` (symlinked to the real ones)."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    for name in tools:
        real = shutil.which(name, path=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
        if real is None:
            pytest.skip(f"{name} not installed")
        (bindir / name).symlink_to(real)
    return str(bindir)


def doctor(capsys) -> tuple[int, str, str]:
    rc = main(["doctor"])
    out, err = capsys.readouterr()
    return rc, out, err


def line_for(out: str, name: str) -> str:
    hits = [ln for ln in out.splitlines() if ln[6:].startswith(name + ":")]
    assert hits, f"no {name!r} line in:\n{out}"
    return hits[0]


@pytest.fixture
def full_path(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", fake_path(tmp_path, ["tcg", "tcg_shell", "git", "bash", "xclip"]))


@needs_posix
def test_healthy_install_exits_0(capsys, full_path, hermetic_home):
    (hermetic_home / ".bashrc").write_text('# mine\neval "$(tcg_shell init bash)"\n')
    EventLog().emit("policy_error", surface="cli")
    load_or_create_key()
    rc, out, err = doctor(capsys)
    assert rc == 0, out + err
    for name in ("python", "tcg", "tcg_shell", "policy", "event log", "key", "tool git", "hook bash"):
        assert line_for(out, name).startswith("ok  "), name
    assert "looks healthy" in out
    assert FAIL not in out


@needs_posix
def test_missing_optional_tools_and_hooks_only_warn(capsys, full_path, hermetic_home):
    (hermetic_home / ".bashrc").write_text('# eval "$(tcg_shell init bash)"\n')  # commented out
    rc, out, _ = doctor(capsys)
    assert rc == 0
    assert line_for(out, "hook bash").startswith("warn")
    assert "hint: echo 'eval \"$(tcg_shell init bash)\"' >> " in out
    assert line_for(out, "tool shellcheck").startswith("warn")
    assert line_for(out, "tool zsh").startswith("warn")
    assert "(with warnings)" in out


@needs_posix
def test_appended_hook_block_counts_as_installed(full_path, hermetic_home):
    (hermetic_home / ".bashrc").write_text("# >>> tcg shell hook >>>\n: hook body\n# <<< tcg shell hook <<<\n")
    checks = {c.name: c for c in run_checks()}
    assert checks["hook bash"].status == OK


@needs_posix
def test_the_early_start_block_is_reported_and_needs_the_hook(full_path, hermetic_home):
    from tcg.shells.generator import render

    rc = hermetic_home / ".bashrc"
    rc.write_text(render("bash", early=True) + "alias ll='ls -l'\n")
    check = {c.name: c for c in run_checks()}["hook bash"]
    assert check.status == WARN and "not the hook" in check.detail
    assert check.hint == f"tcg_shell init bash >> {rc}"
    rc.write_text(rc.read_text() + render("bash"))
    check = {c.name: c for c in run_checks()}["hook bash"]
    assert (check.status, check.detail) == (OK, f"present in {rc}, the early start block too")
    rc.write_text(render("bash"))
    check = {c.name: c for c in run_checks()}["hook bash"]
    assert check.status == OK and "runs it twice" in check.detail
    assert f"`tcg_shell init bash --early --rc {rc}` avoids that" in check.detail


@needs_posix
def test_a_hook_block_of_another_version_is_reported(full_path, hermetic_home):
    from tcg.shells.generator import render
    from tcg.shells.shells import SHELLS

    rc = hermetic_home / ".bashrc"
    rc.write_text(render("bash").replace(SHELLS["bash"]().hook_id, "tcg-shell-hook-v99"))
    assert {c.name: c for c in run_checks()}["hook bash"].status == OK  # a newer one is not stale
    rc.write_text(render("bash").replace(SHELLS["bash"]().hook_id, "tcg-shell-hook-v2"))
    check = {c.name: c for c in run_checks()}["hook bash"]
    assert check.status == WARN and "from an older tcg version" in check.detail
    assert check.hint == f"tcg_shell init --uninstall bash --rc {rc}, then tcg_shell init bash >> {rc}"


@needs_posix
def test_zsh_hook_is_looked_for_under_zdotdir(tmp_path, monkeypatch, hermetic_home):
    zdot = tmp_path / "zdot"
    zdot.mkdir()
    (zdot / ".zshrc").write_text('eval "$(tcg_shell init zsh)"\n')
    monkeypatch.setenv("ZDOTDIR", str(zdot))
    checks = {c.name: c for c in run_checks()}
    assert checks["hook zsh"].status == OK and str(zdot) in checks["hook zsh"].detail


@needs_posix
def test_invalid_policy_fails_with_file_and_line(capsys, full_path):
    p = get_paths().policy_file
    p.parent.mkdir(parents=True)
    p.write_text('[decisions.agent]\nsecret-store-read = "perhaps"\n')
    rc, out, err = doctor(capsys)
    assert rc == 1
    assert line_for(out, "policy").startswith("FAIL")
    assert f"{p}:2:" in out
    assert "1 problem(s):" in err and "- policy:" in err


@needs_posix
def test_loose_modes_fail(capsys, full_path):
    EventLog().emit("policy_error", surface="cli")
    load_or_create_key()
    paths = get_paths()
    os.chmod(paths.events_file, 0o644)
    os.chmod(paths.key_file, 0o640)
    rc, out, err = doctor(capsys)
    assert rc == 1
    assert "0644" in line_for(out, "event log") and line_for(out, "event log").startswith("FAIL")
    assert "0640" in line_for(out, "key") and line_for(out, "key").startswith("FAIL")
    assert f"hint: chmod 600 {paths.key_file}" in out
    assert "2 problem(s):" in err


@needs_posix
def test_damaged_key_fails(capsys, full_path, fresh_key):
    kf = get_paths().key_file
    kf.parent.mkdir(parents=True, mode=0o700, exist_ok=True)
    kf.write_bytes(b"abc")
    os.chmod(kf, 0o600)
    rc, out, _ = doctor(capsys)
    assert rc == 1 and "damaged" in line_for(out, "key")


@needs_posix
def test_missing_git_and_entry_points_fail(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", fake_path(tmp_path, ["bash"]))
    rc, out, err = doctor(capsys)
    assert rc == 1
    assert line_for(out, "tool git").startswith("FAIL")
    assert "not on PATH" in line_for(out, "tcg")
    assert "not on PATH" in line_for(out, "tcg_shell")
    assert "3 problem(s):" in err


@needs_posix
def test_unwritable_state_dir_fails():
    """As an unprivileged user (nobody when the tests run as root: root writes anywhere)."""
    from tests.helpers.unprivileged import run_unprivileged, unprivileged_home

    code = (
        "import os, sys\n"
        "from tcg.cli import main\n"
        "os.chmod(os.environ['TCG_HOME'], 0o500)\n"
        "sys.exit(main(['doctor']))\n"
    )
    with unprivileged_home() as home:
        proc = run_unprivileged(code, home)
        os.chmod(home, 0o700)
    assert proc.returncode == 1, proc.stderr
    assert line_for(proc.stdout, "event log").startswith("FAIL")


def test_doctor_does_not_write(full_path, tcg_home, fresh_key):
    before = sorted(str(p) for p in tcg_home.rglob("*"))  # the fixture's shared detector cache link
    run_checks()
    assert sorted(str(p) for p in tcg_home.rglob("*")) == before


def test_statuses_are_known(full_path):
    assert {c.status for c in run_checks()} <= {OK, WARN, FAIL}


@needs_posix
def test_real_entry_point(tmp_path, hermetic_home):
    (hermetic_home / ".bashrc").write_text('eval "$(tcg_shell init bash)"\n')
    env = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.run(
        [str(VENV_BIN / "tcg"), "doctor"], capture_output=True, text=True, timeout=60, env=env
    )
    if shutil.which("git", path=env["PATH"]) is None:
        pytest.skip("git not installed")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[0].startswith("ok    python: Python 3.")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fork server is Linux only")
def test_the_mask_server_is_reported_running_or_not(full_path, hermetic_home, monkeypatch):
    from tests.helpers.mask_servers import mask_servers
    from tests.helpers.waiting import wait_for

    check = {c.name: c for c in run_checks()}["mask server"]
    assert check.status == OK and check.detail.startswith("no server runs for this install")
    assert "`tcg_shell init --profile >> ~/.profile` starts it at login" in check.detail
    tcg_shell = str(Path(sys.executable).with_name("tcg_shell"))
    subprocess.run([tcg_shell, "mask-server", "start", "--wait", "120"], check=True, timeout=180)
    [pid] = wait_for(lambda: mask_servers(os.environ["TCG_HOME"]), 60, "the server")
    check = {c.name: c for c in run_checks()}["mask server"]
    assert (check.status, check.detail) == (OK, f"serving this install (pid {pid}; it exits after "
                                                 "43200 s without a new session)")
    monkeypatch.setenv("TCG_MASK_SERVER", "0")
    check = {c.name: c for c in run_checks()}["mask server"]
    assert check.status == OK and check.detail.startswith("off (TCG_MASK_SERVER=0)")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fork server is Linux only")
def test_a_login_block_made_for_another_install_is_reported(full_path, hermetic_home):
    tcg_shell = str(Path(sys.executable).with_name("tcg_shell"))
    block = subprocess.run([tcg_shell, "init", "--profile"], capture_output=True, text=True,
                           check=True, timeout=120).stdout
    profile = hermetic_home / ".profile"
    profile.write_text("export EDITOR=vi\n" + block)
    assert not [c for c in run_checks() if c.name == "mask server" and c.status == WARN]
    # what an upgrade does: the server's socket moves (its name hashes the version)
    old = block.replace("/maskserver/", "/maskserver/old-")
    assert old != block
    profile.write_text(old)
    [warn] = [c for c in run_checks() if c.name == "mask server" and c.status == WARN]
    assert f"the block in {profile} was made for another tcg install" in warn.detail
    assert warn.hint == ("delete its lines from `# >>> tcg mask server >>>` to `# <<< tcg mask "
                         f"server <<<` in {profile}, then tcg_shell init --profile >> {profile}")
