"""Running tcg the way users do (the installed `tcg`, `tcg_shell run-line`, real bash
and git), and comparing directory trees byte for byte."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

BIN = Path(sys.executable).parent
TCG = str(BIN / "tcg")
TCG_SHELL = str(BIN / "tcg_shell")
BASH = shutil.which("bash") or "/bin/bash"
TIMEOUT = 120


def env_for(actor: str = "agent", **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("TCG_AGENT", None)
    env["TCG_ACTOR"] = actor
    env.update(extra)
    return env


def check(line: str, cwd: Path, actor: str = "agent") -> tuple[int, dict]:
    proc = subprocess.run([TCG, "check", "--json", "--actor", actor, line], cwd=cwd, capture_output=True,
                          timeout=TIMEOUT, env=env_for(actor))
    assert proc.stdout, proc.stderr.decode()
    return proc.returncode, json.loads(proc.stdout)


EXIT = {"allow": 0, "sanitize": 0, "relocate": 0, "snapshot": 0, "ask": 3, "block": 2}


def decided(line: str, cwd: Path, decision: str, reason: str | None = None,
            actors: tuple[str, ...] = ("agent", "human")) -> dict:
    """Assert `tcg check`'s decision (and deciding reason) for each actor; the last verdict."""
    verdict: dict = {}
    for actor in actors:
        rc, verdict = check(line, cwd, actor)
        got = (rc, verdict["decision"]) + ((verdict["reason"],) if reason else ())
        assert got == (EXIT[decision], decision) + ((reason,) if reason else ()), (actor, line, verdict)
    return verdict


def run_line(line: str, cwd: Path, actor: str = "agent") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([TCG_SHELL, "run-line", "--shell", BASH, line], cwd=cwd, capture_output=True,
                          stdin=subprocess.DEVNULL, timeout=TIMEOUT, env=env_for(actor))


def plain(line: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """The same line without tcg: what the user would have got."""
    return subprocess.run([BASH, "-c", line], cwd=cwd, capture_output=True, stdin=subprocess.DEVNULL,
                          timeout=TIMEOUT, env=env_for("human"))


def tcg(*args: str, cwd: Path, actor: str = "human") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([TCG, *args], cwd=cwd, capture_output=True, stdin=subprocess.DEVNULL, timeout=TIMEOUT,
                          env=env_for(actor))


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True, timeout=TIMEOUT)
    return proc.stdout.decode()


def tree(root: Path, skip_git: bool = True) -> dict[str, tuple]:
    """Every entry under ``root``: type, mode and bytes (files), target (links)."""
    out: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        if skip_git and ".git" in dirnames:
            dirnames.remove(".git")
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            rel = str(path.relative_to(root))
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st.st_mode))
            else:
                out[rel] = ("file", stat.S_IMODE(st.st_mode), path.read_bytes())
    return out


def events(kind: str | None = None) -> list[dict]:
    path = Path(os.environ["TCG_HOME"]) / "state" / "events.jsonl"
    if not path.exists():
        return []
    recs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in recs if kind is None or r["event"] == kind]


def last_txid() -> str:
    """The trash transaction of the last mediated line."""
    for rec in reversed(events("command_decision")):
        if rec.get("txid"):
            return rec["txid"]
    raise AssertionError("no command_decision event carries a txid")


def trash_dir() -> Path:
    return Path(os.environ["TCG_HOME"]) / "state" / "trash"
