"""Fixtures for driving real bash and zsh with a rendered tcg hook.

`ShellSession` runs the shell under pexpect with a hermetic HOME/ZDOTDIR, a
unique prompt, bracketed paste off, and the hook sourced from a file. The
hook's interpreter path points at a recording shim (`py` in tmp): it logs every
hook-run call (the line it received) to a side-channel file and then runs the
real `tcg_shell` entry — either as installed (`real=True`) or through
stub_station.py, which replaces only the policy decision. Assertions read
side-channel files, not the screen.
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from tcg.shells.shells import SHELLS, Features

HERE = Path(__file__).parent
PROMPT = "TCGPROMPT"  # followed by a per-prompt counter and "> "
AGENTS = ("claude", "codex", "qwen", "qwen-code", "cursor-agent", "cursor")

SHIM = """#!/bin/sh
# Recording shim standing in for the interpreter path embedded in the hook.
# Every call is logged (NUL-separated records), then the real entry runs.
if [ -n "${{TCG_HOOK_LINE+x}}" ]; then
  printf 'LINE:%s\\0' "$TCG_HOOK_LINE" >> '{log}'
else
  printf 'ARGS:%s\\0' "$*" >> '{log}'
fi
shift 3  # -I -m tcg.shell_entry
exec '{py}' {entry} "$@"
"""


def features(python: str, *, mediate: bool = True, launch: bool = False) -> Features:
    return Features(python=python, mediate=mediate, launch=launch, agents=AGENTS)


def render(shell: str, **kw) -> str:
    python = kw.pop("python", sys.executable)
    return SHELLS[shell]().render(features(python, **kw))


def wait_for(cond, timeout: float = 30.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = cond()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


@functools.lru_cache(maxsize=1)
def real_mediation_works() -> bool:
    """`tcg_shell run-line true` exits 0: the station AND the policy engine work."""
    import subprocess

    tcg_shell = Path(sys.executable).with_name("tcg_shell")
    try:
        return subprocess.run([str(tcg_shell), "run-line", "true"], capture_output=True,
                              timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


class ShellSession:
    def __init__(self, shell: str, tmp: Path, *, real: bool = False, extra_rc: str = "",
                 env: dict | None = None):
        import pexpect

        self.shell = shell
        self.tmp = tmp
        self.log = tmp / "hook-calls.log"
        self.log.touch()
        shim = tmp / "py"
        entry = "-I -m tcg.shell_entry" if real else f"'{HERE / 'stub_station.py'}'"
        shim.write_text(SHIM.format(log=self.log, py=sys.executable, entry=entry))
        shim.chmod(0o755)
        hook = tmp / f"hook.{shell}"
        hook.write_text(render(shell, python=str(shim)))
        home = Path(os.environ["HOME"])
        self.histfile = home / f".{shell}_history"
        env = dict(os.environ, **(env or {}))
        env.update(TERM="xterm", LC_ALL="C.UTF-8", TMPDIR=str(tmp), PAGER="cat")
        env.pop("PROMPT_COMMAND", None)
        if shell == "bash":
            rc = tmp / "bashrc"
            rc.write_text(
                f"PS1='{PROMPT}$_n> '\nPS2=''\nHISTFILE='{self.histfile}'\nHISTSIZE=1000\n"
                "HISTFILESIZE=1000\nshopt -s histappend\n_n=0\n"
                "PROMPT_COMMAND='_n=$((_n+1)); history -a'\n"
                "bind 'set enable-bracketed-paste off'\nalias ll='echo LL-ALIAS'\n"
                f"{extra_rc}\nsource '{hook}'\n"
            )
            argv = [shutil.which("bash"), "--noprofile", "--rcfile", str(rc), "-i"]
        else:
            rc = home / ".zshrc"
            rc.write_text(
                f"PS1='{PROMPT}$_n> '\nPS2=''\nRPS1=''\nHISTFILE='{self.histfile}'\nHISTSIZE=1000\n"
                "SAVEHIST=1000\nsetopt INC_APPEND_HISTORY NO_PROMPT_SP PROMPT_SUBST\n"
                "unset zle_bracketed_paste\n_n=0\n_tcg_test_precmd() { _n=$((_n+1)); }\n"
                "precmd_functions+=(_tcg_test_precmd)\n"
                "alias ll='echo LL-ALIAS'\n"
                f"{extra_rc}\nsource '{hook}'\n"
            )
            env["ZDOTDIR"] = str(home)
            argv = [shutil.which("zsh"), "--no-globalrcs", "-i"]
        self.child = pexpect.spawn(argv[0], argv[1:], env=env, cwd=str(tmp), encoding="utf-8",
                                   codec_errors="replace", dimensions=(30, 200), timeout=60)
        self.n = 1
        self.child.expect_exact(f"{PROMPT}{self.n}> ")

    def type(self, text: str, *, wait_prompt: bool = True) -> str:
        """Type ``text`` and press Enter; return what the terminal showed until the prompt."""
        self.child.send(text + "\r")
        if not wait_prompt:
            return ""
        self.n += 1
        self.child.expect_exact(f"{PROMPT}{self.n}> ")
        return self.child.before

    def calls(self) -> list[str]:
        return [r for r in self.log.read_bytes().decode("utf-8", "surrogateescape").split("\0") if r]

    def lines(self) -> list[str]:
        return [c[5:] for c in self.calls() if c.startswith("LINE:")]

    def read(self, name: str, timeout: float = 30.0) -> str:
        path = self.tmp / name
        wait_for(lambda: path.exists(), timeout, f"{name} to be written")
        return path.read_text(encoding="utf-8", errors="surrogateescape")

    def history(self) -> str:
        return self.histfile.read_text(encoding="utf-8", errors="surrogateescape") if self.histfile.exists() else ""

    def close(self) -> None:
        self.child.close(force=True)


@pytest.fixture(params=["bash", "zsh"])
def shell_name(request):
    if shutil.which(request.param) is None:
        pytest.skip(f"{request.param} is not installed")
    return request.param


@pytest.fixture(scope="session")
def warm_cache(tmp_path_factory):
    """A detector cache built once (the first run in a fresh TCG_HOME compiles the
    pattern database, seconds on a loaded machine); each test gets a copy."""
    import subprocess

    home = tmp_path_factory.mktemp("warm-tcg-home")
    env = dict(os.environ, TCG_HOME=str(home), HOME=str(home))
    tcg_shell = Path(sys.executable).with_name("tcg_shell")
    subprocess.run([str(tcg_shell), "run-line", "true"], env=env, capture_output=True,
                   stdin=subprocess.DEVNULL, timeout=120)
    return home / "cache"


@pytest.fixture
def session_factory(tmp_path, warm_cache):
    pytest.importorskip("pexpect")
    if warm_cache.is_dir():
        shutil.copytree(warm_cache, Path(os.environ["TCG_HOME"]) / "cache", dirs_exist_ok=True)
    made: list[ShellSession] = []

    def make(shell: str, **kw) -> ShellSession:
        s = ShellSession(shell, tmp_path, **kw)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()
