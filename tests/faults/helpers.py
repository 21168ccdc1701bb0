"""Shared pieces of the fault matrix (docs/reliability.md): how faults are
injected for real on Linux, and the planted secrets they must never leak."""

from __future__ import annotations

import json
import os
import random
import shutil
import string
import subprocess
import sys
from pathlib import Path

import pytest

from tests.runner.helpers import BASH, TCG_SHELL, ZSH, station, station_env  # noqa: F401 - re-exported

TIMEOUT = 90


def run_station(line: str, **env: str) -> subprocess.CompletedProcess:
    """Run ``line`` through the station with no terminal and no input; output captured."""
    return subprocess.run(station(line), capture_output=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL,
                          env=station_env(**env))


def fresh_token() -> str:
    """A realistically shaped fake GitHub token, random per call (never a real one)."""
    return "ghp_" + "".join(random.choices(string.ascii_letters + string.digits, k=36))


def private_mounts_or_skip() -> None:
    """Private mount namespaces need root and unshare (CI runs as root)."""
    if os.name != "posix" or os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare(1) for a private mount namespace")
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"unshare -m is not permitted here: {probe.stderr.decode(errors='replace').strip()}")


def run_in_private_mount(setup: str, driver: str, env: dict[str, str], timeout: float = TIMEOUT):
    """Run shell ``setup`` (mounts) then the Python ``driver`` in a private mount
    namespace; the mounts vanish with it. The driver prints one JSON object."""
    script = f"set -e\n{setup}\nexec {sys.executable} -c \"$DRIVER\"\n"
    res = subprocess.run(
        ["unshare", "-m", "--propagation", "private", BASH, "-c", script],
        env={**env, "DRIVER": driver}, capture_output=True, timeout=timeout,
    )
    assert res.returncode == 0, res.stderr.decode(errors="replace")
    return json.loads(res.stdout.decode().strip().splitlines()[-1])


def all_lines_parse(path: Path) -> list[dict]:
    """Every line of a log file is a whole JSON object (no torn tail left)."""
    data = path.read_bytes()
    assert not data or data.endswith(b"\n"), "the log ends in a torn line"
    return [json.loads(line) for line in data.splitlines()]


def tree_fds_and_children(pid: int) -> tuple[int, list[int]]:
    """Open fds of ``pid`` and its direct children (Linux /proc)."""
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    children: list[int] = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as fh:
            children += [int(c) for c in fh.read().split()]
    return fds, children
