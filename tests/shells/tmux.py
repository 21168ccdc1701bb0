"""Real bash and zsh in tmux panes: a plain shell and a shell in a tcg session,
driven the same way, so every test compares the two.

Each pane runs on a tmux server of its own (``-L tcg-test-<pid>-<n>``): other
test runs on this machine use tmux at the same time. The prompt carries a
counter (``P<n>> ``) that the shell's own prompt hook advances, so a test can
wait for "the next prompt" instead of sleeping. Side effects are checked in
files where possible, the screen where the screen is the point.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tcg.shells.shells import SHELLS, Features
from tests.helpers.waiting import wait_for

TMUX = shutil.which("tmux")
_counter = itertools.count()
WIDTH, HEIGHT = 150, 40
AGENTS = ("claude", "codex")
# ~/.{bash,z}shrc of the test user; the session variant sources the tcg hook last.
BASHRC = r"""PS1='P${_n}> '
PS2='> '
_n=0
PROMPT_COMMAND='_n=$((_n+1))'
HISTFILE=~/.bash_history
HISTSIZE=1000
bind 'set enable-bracketed-paste off'
alias ll='echo LL-ALIAS'
"""
ZSHRC = r"""PS1='P${_n}> '
PS2='> '
setopt PROMPT_SUBST NO_PROMPT_SP INTERACTIVE_COMMENTS
_n=0
_t_count() { _n=$((_n+1)); }
precmd_functions+=(_t_count)
HISTFILE=~/.zsh_history
HISTSIZE=1000
SAVEHIST=1000
unset zle_bracketed_paste
alias ll='echo LL-ALIAS'
"""


def render_hook(shell: str, python: str = sys.executable) -> str:
    return SHELLS[shell]().render(Features(python=python, session=True, launch=False,
                                           agents=AGENTS))


class Pane:
    """One shell in one tmux pane."""

    def __init__(self, shell: str, workdir: Path, home: Path, *, session: bool,
                 env: dict[str, str] | None = None, rc_extra: str = "", hook_text: str | None = None,
                 rc_first: str = "",
                 argv: list[str] | None = None, wait_prompt: bool = True,
                 must_start: bool | None = None):
        if TMUX is None:
            raise RuntimeError("tmux is not installed")
        self.shell = shell
        self.session = session
        self.workdir = workdir
        self.home = home
        self.socket = f"tcg-test-{os.getpid()}-{next(_counter)}"
        self.n = 1
        rc = rc_first + (BASHRC if shell == "bash" else ZSHRC)  # rc_first: the early start block
        rc += rc_extra + "\n"
        hook = home / f"tcg-hook.{shell}"
        if session:
            hook.write_text(hook_text if hook_text is not None else render_hook(shell))
            rc += f"source '{hook}'\n"
        rcfile = home / (".bashrc" if shell == "bash" else ".zshrc")
        rcfile.write_text(rc)
        full_env = dict(os.environ)
        full_env.update(env or {})
        full_env.update(HOME=str(home), LC_ALL="C.UTF-8", TERM="xterm-256color")
        if shell == "zsh":
            full_env["ZDOTDIR"] = str(home)
        self.env = full_env
        exe = shutil.which(shell)
        if must_start is None:  # the standard session; a test of a fault passes its own argv/hook
            must_start = session and argv is None and hook_text is None
        if argv is None:
            argv = [exe, "--noprofile", "--rcfile", "RCFILE", "-i"] if shell == "bash" \
                else [exe, "-i"]
        argv = [str(rcfile) if a == "RCFILE" else a for a in argv]  # the rc file's path
        # Set in the server's config, before the pane starts: a shell that ends at
        # once (a refused agent session) must not take the server with it.
        conf = home / "tmux.conf"
        conf.write_text("set-option -g status off\nset-option -g remain-on-exit on\n")
        self._tmux("-f", str(conf), "new-session", "-d", "-x", str(WIDTH), "-y", str(HEIGHT),
                   "-c", str(workdir), *self._env_args(), *argv)
        if not wait_prompt:
            return
        try:
            screen = self.wait_prompt(timeout=120)
            # A session that could not start falls back to the plain shell with a
            # notice (what a person should get); for a test that asked for the
            # standard session, that is a broken station and must fail here rather
            # than let the test pass against a plain shell.
            if must_start:
                assert "tcg: the session could not start" not in screen, (
                    f"the {shell} session did not start; screen:\n{screen}")
        except BaseException:
            self.close()  # the fixture never got this pane: do not leave its tmux server behind
            raise

    def _env_args(self) -> list[str]:
        keep = ("HOME", "ZDOTDIR", "TCG_HOME", "PATH", "LC_ALL", "TERM", "XDG_CONFIG_HOME",
                "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "TCG_ACTOR", "TCG_AGENT",
                "TCG_POLICY", "TCG_SESSION_AUTO", "TCG_DEBUG", "TMPDIR", "PYTHONDONTWRITEBYTECODE",
                "TCG_MASK_SERVER", "TCG_MASK_SERVER_IDLE")
        out = []
        for k in keep:
            if k in self.env:
                out += ["-e", f"{k}={self.env[k]}"]
        return out

    def _tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run([TMUX, "-L", self.socket, *args], capture_output=True, text=True,
                              env=self.env, timeout=60, check=check)

    # ------------------------------------------------------------------ input

    def keys(self, *keys: str) -> None:
        """tmux key names (Enter, C-c, C-z, Escape…)."""
        self._tmux("send-keys", *keys)

    def text(self, text: str) -> None:
        """Literal text, as if typed (no Enter)."""
        self._tmux("send-keys", "-l", text)

    def paste(self, text: str) -> None:
        """A paste without bracketed-paste markers (tmux paste-buffer without -p)."""
        self._tmux("set-buffer", "--", text)
        self._tmux("paste-buffer")

    def line(self, text: str, *, wait: bool = True, timeout: float = 60.0) -> str:
        """Type ``text`` and Enter; with ``wait``, return the screen at the next prompt."""
        self.text(text)
        self.keys("Enter")
        if not wait:
            return ""
        return self.wait_prompt(timeout=timeout)

    # ----------------------------------------------------------------- output

    def screen(self, escapes: bool = False) -> str:
        args = ["capture-pane", "-p", "-J"] + (["-e"] if escapes else [])
        return self._tmux(*args, "-S", "-200").stdout

    def prompt_mark(self, n: int | None = None) -> str:
        """The prompt being typed at (default), or prompt ``n``."""
        return f"P{self.n - 1 if n is None else n}> "

    def wait_prompt(self, n: int | None = None, timeout: float = 60.0) -> str:
        """Wait for prompt number ``n`` (default: the next one) and return the screen."""
        if n is None:
            n = self.n
            self.n += 1
        mark = f"P{n}> "
        return wait_for(lambda: s if mark in (s := self.screen()) else None, timeout,
                        lambda: f"prompt {mark!r} in {self.shell} "
                                f"({'session' if self.session else 'plain'}); screen:\n{self.screen()}"
                                f"\nprocesses under the pane:\n{self.process_tree()}")

    def process_tree(self) -> str:
        """``ps`` lines (state, kernel wait channel, elapsed time) of every process
        under this pane: what a timed-out wait was stuck on."""
        return "\n".join("  ".join(row) for row in pane_processes(self, "stat", "wchan:24", "etime"))

    def wait_screen(self, text: str, timeout: float = 60.0) -> str:
        return wait_for(lambda: s if text in (s := self.screen()) else None, timeout,
                        lambda: f"{text!r} on screen; screen:\n{self.screen()}")

    def file(self, name: str, timeout: float = 60.0) -> str:
        path = self.workdir / name
        wait_for(path.exists, timeout, f"{name} to be written")
        return wait_for(lambda: path.read_text(errors="replace") or None, timeout, f"{name} content")

    def pane_pid(self) -> int:
        return int(self._tmux("display-message", "-p", "#{pane_pid}").stdout.strip())

    def stty(self) -> str:
        """The terminal's settings as the shell in this pane sees them (``stty -a``)."""
        self.line("stty -a > stty.txt")
        text = self.file("stty.txt")
        (self.workdir / "stty.txt").unlink()
        return text

    def session_station_pid(self) -> int:
        """The pid of the resident session's station under this pane's shell."""
        out = subprocess.run(["pgrep", "-f", "-P", str(self.pane_pid()), "tcg.shell_entry session"],
                             capture_output=True, text=True).stdout.split()
        assert out, "no session station under the pane's shell"
        return int(out[0])

    def resize(self, cols: int, rows: int) -> None:
        self._tmux("resize-window", "-x", str(cols), "-y", str(rows))

    def dead(self) -> bool:
        return self._tmux("display-message", "-p", "#{pane_dead}").stdout.strip() == "1"

    def close(self) -> None:
        self._tmux("kill-server", check=False)


def pane_processes(pane: Pane, *columns: str) -> list[list[str]]:
    """``ps`` rows — pid, ppid, the ``columns``, the whole command line — of the
    pane's process and of every process below it, the pane's first."""
    fields = ",".join(["pid=", "ppid=", *(f"{c}=" for c in columns), "args="])
    out = subprocess.run(["ps", "-ww", "-e", "-o", fields], capture_output=True,
                         text=True).stdout  # -ww: the whole command line, however wide
    width = len(columns) + 3
    rows = [parts + [""] * (width - len(parts))
            for parts in (line.split(None, width - 1) for line in out.splitlines()) if parts]
    root = str(pane.pane_pid())
    found = [row for row in rows if row[0] == root]
    todo = [root]
    while todo:
        pid = todo.pop()
        for row in rows:
            if row[1] == pid:
                found.append(row)
                todo.append(row[0])
    return found


def stations(pane: Pane) -> list[str]:
    """Command lines of every station process under this pane (a station's first
    masking process is a fork of it, with its command line: told apart by name)."""
    from tcg.runner.session_mask import FORKED_NAME

    return [row[-1] for row in pane_processes(pane, "comm")
            if "tcg.shell_entry session" in row[-1] and row[2] != FORKED_NAME]


def both(panes, shell: str, **kw) -> tuple[Pane, Pane]:
    """A plain shell and the same shell in a session, set up alike (``panes`` is
    the fixture's factory). The session pane must really run a station: a
    comparison against a shell that fell back to plain would pass for nothing."""
    plain, session = panes(shell, session=False, **kw), panes(shell, session=True, **kw)
    assert stations(session), f"the {shell} session pane runs no station; screen:\n{session.screen()}"
    assert not stations(plain)
    return plain, session
