"""Run a snippet as an unprivileged user, so permission checks mean something under root.

CI runs as root, and root reads and writes any file: a test of "an unreadable key" or
"an unwritable state directory" run in-process as root cannot fail. These helpers run
the snippet in a fresh interpreter as the current user when it is not root, and as
``nobody`` (util-linux ``setpriv``) when it is.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

NOBODY = 65534


def _dropping() -> bool:
    return os.name == "posix" and os.geteuid() == 0


@contextmanager
def unprivileged_home() -> Iterator[Path]:
    """A TCG_HOME the unprivileged user owns (under /tmp: pytest's own temp dirs are
    0700 root and would not let ``nobody`` in)."""
    if os.name != "posix":
        pytest.skip("POSIX permissions only")
    if _dropping() and shutil.which("setpriv") is None:
        pytest.skip("running as root and setpriv (util-linux) is missing: cannot drop privileges")
    base = Path(tempfile.mkdtemp(prefix="tcg-unpriv-"))
    try:
        os.chmod(base, 0o755)
        home = base / "tcg-home"
        home.mkdir()
        if _dropping():
            os.chown(home, NOBODY, NOBODY)
        yield home
    finally:
        shutil.rmtree(base, ignore_errors=True)


def run_unprivileged(code: str, tcg_home: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``python -c code`` with TCG_HOME=tcg_home, as the unprivileged user."""
    run_env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(tcg_home),
               "TCG_HOME": str(tcg_home), "LANG": "C.UTF-8", **env}
    argv = [sys.executable, "-I", "-c", code]
    if _dropping():
        argv = [shutil.which("setpriv") or "setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
                "--clear-groups", *argv]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, env=run_env,
                          stdin=subprocess.DEVNULL, cwd=str(tcg_home))
