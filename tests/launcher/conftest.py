"""Fixtures for the launch gate: real git repositories and a fake agent on a temp PATH."""

from __future__ import annotations

import os
import random
import string
import subprocess
import sys
from pathlib import Path

import pytest

VENV_BIN = Path(sys.executable).parent
TCG = str(VENV_BIN / "tcg")


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True)
    return proc.stdout.decode().strip()


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "commit.gpgsign", "false")
    return path


def commit(repo: Path, rel: str, content: str, msg: str = "edit") -> None:
    p = repo / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(content)
    git(repo, "add", "--", rel)
    git(repo, "commit", "-q", "-m", msg)


def github_pat(seed: int) -> str:
    """A realistically shaped fake GitHub token (the packaged rules detect it)."""
    rng = random.Random(seed)
    return "ghp_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))


FAKE_AGENT = '''#!{python}
# A stand-in agent: records what it was started with, then exits.
import json, os, sys
out = os.environ.get("FAKE_AGENT_OUT")
rec = {{
    "argv": sys.argv, "pid": os.getpid(), "ppid": os.getppid(),
    "isatty": [os.isatty(0), os.isatty(1), os.isatty(2)],
    "ttyname": [os.ttyname(fd) if os.isatty(fd) else None for fd in (0, 1, 2)],
    "env": {{k: v for k, v in os.environ.items() if k.startswith(("TCG_", "CLAUDE_CODE_", "BASH_ENV", "ZDOTDIR"))}},
    "cwd": os.getcwd(),
}}
if out:
    with open(out, "w") as fh:
        json.dump(rec, fh)
sys.exit(int(os.environ.get("FAKE_AGENT_RC", "0")))
'''


@pytest.fixture
def agent_bin(tmp_path: Path) -> Path:
    """A directory holding fake `claude` and `codex` executables."""
    d = tmp_path / "agent-bin"
    d.mkdir()
    for name in ("claude", "codex"):
        p = d / name
        p.write_text(FAKE_AGENT.format(python=sys.executable))
        p.chmod(0o755)
    return d


@pytest.fixture
def launch_env(agent_bin: Path, tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{agent_bin}{os.pathsep}/usr/bin{os.pathsep}/bin"
    env["FAKE_AGENT_OUT"] = str(tmp_path / "agent.json")
    return env


@pytest.fixture(scope="session")
def _compiled_detectors(tmp_path_factory) -> Path:
    """Compile the scanner's and the masker's hyperscan databases once per test session (>1 s each)."""
    home = tmp_path_factory.mktemp("hs-seed")
    code = (
        "from tcg.scan.engine import _load_detector\n"
        "from tcg.policy.load import load_policy\n"
        "p = load_policy(include_repo=False)\n"
        "for cats in (('secret',), ('secret', 'pii')):\n"
        "    _load_detector(p, frozenset(), frozenset(cats))\n"
        "from tcg.detect.engine import load_detector\n"
        "load_detector(p)\n"
    )
    env = dict(os.environ, TCG_HOME=str(home))
    subprocess.run([sys.executable, "-I", "-c", code], env=env, check=True, timeout=300)
    return home / "cache" / "detect"


@pytest.fixture(autouse=True)
def _seed_detector_cache(_compiled_detectors: Path, tcg_home: Path) -> None:
    """Each hermetic TCG_HOME starts with the compiled databases (a cache, not a result)."""
    import shutil

    if _compiled_detectors.is_dir():
        shutil.copytree(_compiled_detectors, tcg_home / "cache" / "detect", dirs_exist_ok=True)
