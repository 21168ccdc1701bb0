"""Sessions whose masking process comes from the fork server (tcg.runner.maskserver)
and sessions that start a fresh one show the same masked screen: a secret in the
prompt and one in a command's output are masked on both paths, also after the
server was killed mid-session, and none of them lands in a file tcg wrote.
Real bash and zsh under tmux."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.leaks import assert_no_secret_written
from tests.helpers.mask_servers import listening, mask_servers, served_workers
from tests.helpers.waiting import wait_for

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="finds processes in /proc")

PROMPT_TOKEN = "ghp_" + "Pm4Kx8Ry2Wq6Tz0Lb3Nc7Vd1Hf5Js9Ga2Ue6"
OUTPUT_TOKEN = "AKIA" + "R7NX2QW9KM4TZ8PL"
MASK = re.compile(r"<SECRET:[a-z0-9-]+:[0-9a-f]+>")


def _session(panes, shell: str, **env: str):
    # the prompt carries a secret and still ends in the harness's "P<n>> " mark
    ps1 = f"PS1='{PROMPT_TOKEN} P${{_n}}> '\n"
    p = panes(shell, session=True, rc_extra=ps1, env=env)
    (p.workdir / "creds.txt").write_text(f"aws_access_key_id = {OUTPUT_TOKEN}\n")
    return p


def _masked_lines(p) -> list[str]:
    """The masked lines on screen after ``cat creds.txt`` (prompt numbers dropped)."""
    screen = p.line("cat creds.txt")
    assert PROMPT_TOKEN not in screen and OUTPUT_TOKEN not in screen, screen
    lines = [line for line in screen.splitlines() if MASK.search(line)]
    assert any("aws_access_key_id = <SECRET:" in line for line in lines), screen
    assert any(re.search(r"<SECRET:[^>]+> P\d+> ", line) for line in lines), screen
    return sorted({re.sub(r"P\d+> ", "P> ", line) for line in lines})


def test_served_and_fresh_sessions_mask_alike_and_a_killed_server_unmasks_nothing(
        panes, shell_name):
    home = os.environ["TCG_HOME"]
    fresh = _session(panes, shell_name, TCG_MASK_SERVER="0")
    assert not mask_servers(home)  # switched off: none asked, none started
    first = _session(panes, shell_name)  # finds none: a fresh process, and starts the server
    wait_for(lambda: listening(os.environ), 120, "the fork server to listen")
    server = mask_servers(home)[0]
    served = _session(panes, shell_name)
    assert wait_for(lambda: served_workers(home), 60, "a served masking worker"), \
        "the second session did not get its masking process from the server"
    expected = _masked_lines(fresh)
    assert _masked_lines(first) == expected
    assert _masked_lines(served) == expected

    os.kill(server, signal.SIGKILL)  # mid-session: its worker keeps masking
    wait_for(lambda: not mask_servers(home), 60, "the server to die")
    assert _masked_lines(served) == expected
    after = _session(panes, shell_name)  # no server: the fresh path again
    assert _masked_lines(after) == expected

    for p in (fresh, first, served, after):
        p.close()
    # everything tcg writes (events, first-screen cache, the server's socket dir)
    assert_no_secret_written(Path(home), [PROMPT_TOKEN, OUTPUT_TOKEN])


def test_a_server_started_at_login_serves_the_first_session(panes, shell_name):
    """`tcg_shell mask-server start` in a login profile: the first terminal after
    login gets its masking process from the server, as later ones do."""
    home = os.environ["TCG_HOME"]
    started = subprocess.run([str(Path(sys.executable).with_name("tcg_shell")), "mask-server",
                              "start", "--wait", "120"], capture_output=True, text=True, timeout=180)
    assert started.returncode == 0, started.stderr
    [server] = mask_servers(home)
    first = _session(panes, shell_name)
    assert wait_for(lambda: served_workers(home), 60, "a served masking worker"), \
        "the first session did not get its masking process from the started server"
    assert mask_servers(home) == [server]  # the session found it: none launched beside it
    _masked_lines(first)
    first.close()
    assert_no_secret_written(Path(home), [PROMPT_TOKEN, OUTPUT_TOKEN])
