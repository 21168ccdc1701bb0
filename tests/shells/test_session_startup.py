"""Getting into a session: the two install forms, the opt-out, no loop, nested
shells, other tools' DEBUG traps, and what a broken or removed install does."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.waiting import wait_for

from .tmux import render_hook, stations

pytestmark = pytest.mark.shell
PY = shlex.quote(sys.executable)
TCG_SHELL = str(Path(sys.executable).with_name("tcg_shell"))


def test_static_text_appended_to_the_rc_file_starts_one_session(panes, shell_name):
    """`tcg_shell init >> ~/.zshrc`: static text, no Python at shell start
    besides the session itself; exactly one station, no loop."""
    text = subprocess.run([TCG_SHELL, "init", shell_name], capture_output=True, text=True,
                          check=True).stdout
    p = panes(shell_name, session=True, hook_text=text)
    assert len(stations(p)) == 1
    p.line("echo ${TCG_SESSION:+in-session} > s.txt")
    assert p.file("s.txt") == "in-session\n"


def test_eval_form_works_too(panes, shell_name):
    p = panes(shell_name, session=True,
              hook_text=f'eval "$({shlex.quote(TCG_SHELL)} init {shell_name})"\n')
    assert len(stations(p)) == 1
    p.line("echo ${TCG_SESSION:+in-session} > s.txt")
    assert p.file("s.txt") == "in-session\n"


def early_block(shell: str) -> str:
    return subprocess.run([TCG_SHELL, "init", shell, "--early"], capture_output=True, text=True,
                          check=True).stdout


RC_RUNS = 'echo "$$" >> ~/rc-runs\n'  # one line per shell that ran the rest of the rc file


@pytest.mark.parametrize("early", [True, False], ids=["early-block", "hook-only"])
def test_the_early_start_block_runs_the_rest_of_the_rc_file_once(panes, shell_name, early):
    """`init --early` first in the rc file: the shell the terminal started becomes
    a session before it reads the rest, which runs once (in the shell inside),
    where the hook, last, joins the session: one station, lines decided. Without
    the block (the control) the rest runs twice: in both shells."""
    p = panes(shell_name, session=True, rc_first=early_block(shell_name) if early else "",
              rc_extra=RC_RUNS)
    assert len(stations(p)) == 1
    p.line("echo $$ > inner.txt")
    runs = (p.home / "rc-runs").read_text().split()
    assert runs[-1] == p.file("inner.txt").strip()
    assert len(runs) == (1 if early else 2)
    p.line('cp "$TCG_HOME/state/key" stolen.key', wait=False)
    p.wait_screen("tcg: blocked (self-protection)")
    assert not (p.workdir / "stolen.key").exists()
    assert "tcg: warning" not in p.screen()


@pytest.mark.parametrize("where", ["below", "above"])
def test_a_variable_the_rc_file_changes_below_the_early_block_is_reported(panes, shell_name,
                                                                          tmp_path, where):
    """The station starts before the rest of the rc file: a setting tcg reads
    that the file changes after the block is not the station's, and the hook
    inside says which. Set above the block, the station has it: no warning."""
    setting = f"export XDG_CACHE_HOME='{tmp_path / 'other-cache'}'\n"
    block = early_block(shell_name)
    p = panes(shell_name, session=True, rc_first=block if where == "below" else setting + block,
              rc_extra=setting if where == "below" else "")
    assert len(stations(p)) == 1
    p.line("echo ready > r.txt")
    p.file("r.txt")
    screen = p.screen()
    if where == "below":
        assert ("tcg: warning: the session station started with other settings than this shell "
                "has: XDG_CACHE_HOME; it decides and masks by its own") in screen
        assert ("hint: set them where the session's first shell gets them (above the early "
                "start block in your rc file") in screen
    else:
        assert "tcg: warning" not in screen


def test_a_nested_shell_with_its_own_settings_is_told_and_a_new_session_is_not(panes, shell_name,
                                                                               tmp_path):
    """The check compares with the station the shell is in: a shell nested in the
    session after an `export` is told; a session started by hand with that
    setting has it itself, and its shell is not."""
    p = panes(shell_name, session=True)
    other = tmp_path / "other-cache"
    nested = (f"bash --noprofile --rcfile {p.home / '.bashrc'} -i" if shell_name == "bash"
              else "zsh -i")
    p.line(f"export XDG_CACHE_HOME='{other}'; {nested}", wait=False)
    p.wait_screen("started with other settings than this shell has: XDG_CACHE_HOME;")
    p.line("exit")
    p.line("echo $TCG_SESSION > outer.txt")
    outer = p.file("outer.txt")
    p.line(f"{shlex.quote(TCG_SHELL)} session {shell_name} -- "
           + (f"--noprofile --rcfile {p.home / '.bashrc'} -i" if shell_name == "bash" else "-i"),
           wait=False)
    p.line("echo $TCG_SESSION > inner.txt", wait=False)  # (its prompts count from 1 again)
    assert p.file("inner.txt") not in ("", outer)  # a session of its own
    assert p.screen().count("started with other settings") == 1


def test_opt_out_keeps_a_plain_shell(panes, shell_name):
    p = panes(shell_name, session=True, env={"TCG_SESSION_AUTO": "0"})
    assert stations(p) == []
    p.line('echo "[${TCG_SESSION-}]" > s.txt')
    assert p.file("s.txt") == "[]\n"


def test_nested_shell_shares_the_session(panes, shell_name):
    """A shell started inside the session joins it (same channel): no second
    station, and its lines are decided too."""
    p = panes(shell_name, session=True)
    nested = (f"bash --noprofile --rcfile {p.home / '.bashrc'} -i" if shell_name == "bash"
              else "zsh -i")
    p.line(nested, wait=False)
    wait_for(lambda: p.screen().count("P1> ") >= 2, 60, "the nested shell's prompt")
    assert len(stations(p)) == 1
    p.line('cp "$TCG_HOME/state/key" stolen.key', wait=False)
    p.wait_screen("tcg: blocked (self-protection)")
    assert not (p.workdir / "stolen.key").exists()


def test_a_removed_tcg_does_not_take_new_terminals_down(panes, shell_name, tmp_path):
    """The rc file still sources the hook after tcg was uninstalled: no session,
    a working shell."""
    from tcg.shells.shells import package_dir

    text = render_hook(shell_name).replace(package_dir(), str(tmp_path / "gone-tcg"))
    p = panes(shell_name, session=True, hook_text=text)
    assert stations(p) == []
    p.line("echo alive > a.txt")
    assert p.file("a.txt") == "alive\n"


FAULT = """
import sys
import tcg.runner.maskproc as m
def boom(self):
    raise OSError(5, "injected: no masking process")
m.MaskerProcess.start = boom
from tcg.runner.session import session_main
sys.exit(session_main(sys.argv[1:]))
"""


def test_a_session_that_cannot_start_falls_back_to_the_plain_shell(panes, shell_name, tmp_path):
    """The masking process cannot start (a fault injected into the real start-up
    path): a person still gets their shell, with a warning and without a
    session inside it (no loop); an agent gets nothing (126)."""
    script = tmp_path / "fault.py"
    script.write_text(FAULT)
    argv = [sys.executable, str(script), "--shell", shutil.which(shell_name), "--"]
    argv += ["--noprofile", "--rcfile", "RCFILE", "-i"] if shell_name == "bash" else ["-i"]
    p = panes(shell_name, session=True, argv=argv, wait_prompt=False)
    screen = p.wait_prompt(timeout=120)
    assert "tcg: the session could not start: the masking process could not start" in screen
    assert "injected: no masking process" in screen
    assert stations(p) == []
    p.line('echo "[$TCG_SESSION_AUTO] [${TCG_SESSION-}]" > s.txt')
    assert p.file("s.txt") == "[0] []\n"
    # The status comes from a wrapper: tmux does not always record a pane's exit
    # status (#{pane_dead_status}) when its program ends at once.
    status = tmp_path / "agent-status"
    wrapped = ["/bin/sh", "-c", '"$@"; echo $? > "$0"', str(status), *argv]
    a = panes(shell_name, session=True, env={"TCG_ACTOR": "agent"}, wait_prompt=False, argv=wrapped)
    wait_for(status.exists, 120, "the agent's session to refuse")
    assert wait_for(lambda: status.read_text().strip() or None, 30, "the status") == "126"
    assert "tcg: the session could not start" in a.wait_screen("tcg: the session could not start")



def test_a_session_that_fell_back_fails_the_shell_tests(panes, tmp_path):
    """A broken station fails the shell tests instead of letting them pass against
    the plain shell it fell back to: a pane that asked for a session checks that
    the session started."""
    script = tmp_path / "fault.py"
    script.write_text(FAULT)
    argv = [sys.executable, str(script), "--shell", shutil.which("bash"), "--",
            "--noprofile", "--rcfile", "RCFILE", "-i"]
    with pytest.raises(AssertionError, match="the bash session did not start"):
        panes("bash", session=True, argv=argv, must_start=True)

def test_bash_debug_trap_of_another_tool_keeps_running(panes):
    """bash: the hook chains an existing DEBUG trap (bash-preexec, starship…):
    it still runs for every command, and the line is still decided first."""
    rc = "_t_seen=0\ntrap '_t_seen=$((_t_seen+1))' DEBUG\n"
    p = panes("bash", session=True, rc_extra=rc, env={"TCG_ACTOR": "agent"})
    (p.workdir / ".env").write_text("API_KEY=not-a-real-value-0123456789\n")
    p.line("a=$_t_seen; true; true; echo $((_t_seen - a)) > seen.txt")
    assert int(p.file("seen.txt")) >= 3
    screen = p.line("cat .env")
    assert "tcg: blocked" in screen and "not-a-real-value" not in screen
    # Replacing the trap later (a tool loaded after the hook) is repaired at the next prompt.
    p.line("trap '_t_seen=$((_t_seen+1))' DEBUG")
    screen = p.line("cat .env")
    assert screen.count("tcg: blocked") == 2 and "not-a-real-value" not in screen


@pytest.mark.parametrize("fault", ["broken-toml", "unreadable"])
def test_an_invalid_policy_at_start_refuses_the_session_clearly(panes, shell_name, tmp_path, fault):
    """TCG_POLICY names a broken or unreadable file when a terminal opens: the
    session does not start (fail closed: the shell inside is stopped before any
    of its output is shown and before it reads a line), the screen says why and
    what to do, the terminal is left in its
    normal mode, and the station does not start masking processes over and
    over. With the automatic start the message waits for Enter (the window
    would otherwise close before it can be read); the status is 126."""
    if fault == "broken-toml":
        policy = tmp_path / "bad.toml"
        policy.write_text("this is [not toml\n")
        why = "invalid TOML"
    else:
        policy = tmp_path / "policy-dir.toml"
        policy.mkdir()  # a directory: cannot be read as a file (even by root)
        why = str(policy)
    status = tmp_path / "status"
    exe = shutil.which(shell_name)
    inner = [exe, "--noprofile", "--rcfile", "RCFILE", "-i"] if shell_name == "bash" else [exe, "-i"]
    # The wrapper records the status and the terminal's mode after the session.
    wrapped = ["/bin/sh", "-c", '"$@"; echo $? > "$0"; stty -a > "$0.stty"', str(status), *inner]
    p = panes(shell_name, session=True, env={"TCG_POLICY": str(policy)}, wait_prompt=False,
              argv=wrapped, rc_extra='if [ -n "${TCG_SESSION-}" ]; then echo INNER-SHELL-OUTPUT; fi\n')
    screen = p.wait_screen("press Enter", timeout=120)
    lines = screen.splitlines()
    assert any(ln.startswith("tcg: the session could not start: ") and "policy" in ln for ln in lines), screen
    assert why in screen, screen
    assert any(ln.startswith("hint: ") for ln in lines), screen  # at the start of a line: no staircase
    assert "masking process" not in screen, screen
    assert "P1> " not in screen and "INNER-SHELL-OUTPUT" not in screen  # nothing the shell inside printed
    time.sleep(1.0)
    assert not status.exists(), "the message waits for Enter"
    p.keys("Enter")
    assert wait_for(lambda: status.exists() and status.read_text().strip() or None, 60, "the status") == "126"
    stty = wait_for(lambda: (Path(f"{status}.stty").read_text() or None)
                    if Path(f"{status}.stty").exists() else None, 30, "stty")
    words = stty.split()
    assert {"icanon", "echo", "isig"} <= set(words) and not {"-icanon", "-echo", "-isig"} & set(words), stty
    # An agent actor is refused the same way, without waiting for a key.
    a_status = tmp_path / "agent-status"
    a_wrapped = ["/bin/sh", "-c", '"$@"; echo $? > "$0"', str(a_status), *inner]
    a = panes(shell_name, session=True, env={"TCG_POLICY": str(policy), "TCG_ACTOR": "agent"},
              wait_prompt=False, argv=a_wrapped)
    assert wait_for(lambda: a_status.exists() and a_status.read_text().strip() or None, 120,
                    "the agent's status") == "126"
    assert "tcg: the session could not start" in a.wait_screen("tcg: the session could not start")
