"""Fixtures for the shell tests: real bash and zsh, plain and in a tcg session.

``panes(shell)`` gives a factory: ``make(session=True|False, …)`` starts the
shell in a tmux pane of its own (tests/shells/tmux.py) with a hermetic HOME
and TCG_HOME; every pane is closed at the end of the test.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .tmux import TMUX, Pane


@pytest.fixture(params=["bash", "zsh"])
def shell_name(request):
    if shutil.which(request.param) is None:
        pytest.skip(f"{request.param} is not installed")
    return request.param


@pytest.fixture(scope="session")
def warm_detector(shared_detect_cache, tmp_path_factory, shared_install_key):
    """Compile the detector database once (the first masker in a fresh cache
    takes seconds on a loaded machine); every test's TCG_HOME links to it."""
    home = tmp_path_factory.mktemp("warm-tcg")
    (home / "cache").mkdir(mode=0o700)
    (home / "cache" / "detect").symlink_to(shared_detect_cache, target_is_directory=True)
    (home / "state").mkdir(mode=0o700)
    (home / "state" / "key").write_bytes(shared_install_key)
    env = dict(os.environ, TCG_HOME=str(home))
    subprocess.run([str(Path(sys.executable).with_name("tcg")), "mask", "--mode", "terminal"],
                   input=b"x\n", env=env, capture_output=True, timeout=300, check=True)
    return shared_detect_cache


@pytest.fixture
def panes(tmp_path, warm_detector, hermetic_home):
    if TMUX is None:
        pytest.skip("tmux is not installed")
    pytest.importorskip("pexpect")
    made: list[Pane] = []
    counter = iter(range(1000))

    def make(shell: str, *, session: bool, **kw) -> Pane:
        n = next(counter)
        work = tmp_path / f"work{n}"
        work.mkdir()
        home = tmp_path / f"home{n}"
        home.mkdir()
        pane = Pane(shell, work, home, session=session, **kw)
        made.append(pane)
        return pane

    yield make
    for pane in made:
        pane.close()


def hook_path(pane: Pane) -> Path:
    return pane.home / f"tcg-hook.{pane.shell}"
