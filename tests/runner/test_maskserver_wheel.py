"""A masking fork server of a wheel install (what `pip install` / `pipx install`
give users) leaves when the install is upgraded: it names its code by the wheel's
RECORD (tcg.fingerprint.code_state), which pip rewrites on every install, so a
server started before the upgrade refuses the next client and exits instead of
masking with the code it loaded before. The install here is a real virtual
environment with tcg laid out as a wheel installs it (the package beside its
``tcg-VERSION.dist-info/RECORD``), driven through its own ``tcg_shell mask-server``
in processes of its own. The editable install's check (every file's state) is
tests/runner/test_maskserver.py's; reading the RECORD without a walk, and not
seeing a hand edit, is tests/test_cachestore.py's."""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import tcg
from tests.helpers.mask_servers import mask_servers
from tests.helpers.waiting import wait_for

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only (the server)")

PACKAGE = Path(tcg.__file__).resolve().parent
CMD = "import sys;from tcg.runner.maskserver_cmd import main;sys.exit(main(sys.argv[1:]))"


def _record_line(site: Path, path: Path) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(path.read_bytes()).digest()).rstrip(b"=")
    return f"{path.relative_to(site).as_posix()},sha256={digest.decode()},{path.stat().st_size}\n"


def _write_record(site: Path) -> None:
    """The dist-info RECORD as pip writes it: every installed file, hashed."""
    info = site / f"tcg-{tcg.__version__}.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: tcg\nVersion: {tcg.__version__}\n")
    files = sorted(p for p in (site / "tcg").rglob("*") if p.is_file())
    lines = [_record_line(site, p) for p in [*files, info / "METADATA"]]
    (info / "RECORD").write_text("".join(lines) + f"{info.name}/RECORD,,\n")


@pytest.fixture
def wheel_install(tmp_path: Path) -> tuple[Path, Path]:
    """(its python, its site-packages): a venv holding tcg as a wheel lays it out;
    the libraries tcg needs come from this test run's environment (a path line in
    a .pth file: that directory's own .pth files, this checkout's editable hook
    among them, are not run, so ``import tcg`` finds the wheel's copy)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-I", "-c", "import sysconfig;print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, check=True, timeout=60).stdout.strip())
    shutil.copytree(PACKAGE, site / "tcg", ignore=shutil.ignore_patterns("__pycache__"))
    _write_record(site)
    (site / "zz_test_libraries.pth").write_text(sysconfig.get_path("purelib") + "\n")
    found = subprocess.run([str(python), "-I", "-c", "import tcg;print(tcg.__file__)"],
                           capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    assert Path(found).resolve().parent == (site / "tcg").resolve()
    return python, site


def _mask_server(python: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(python), "-I", "-c", CMD, *args], capture_output=True, text=True,
                          timeout=300)


def test_an_upgraded_wheel_install_retires_the_server_it_had_started(wheel_install):
    python, site = wheel_install
    home = os.environ["TCG_HOME"]
    started = _mask_server(python, "start", "--wait", "240")
    assert started.returncode == 0, started.stderr
    status = _mask_server(python, "status")
    assert status.returncode == 0 and "serving this install" in status.stdout, status
    [pid] = mask_servers(home)

    # what pip does on an upgrade: new files, and a RECORD naming them
    module = site / "tcg" / "runner" / "session_mask.py"
    module.write_text(module.read_text() + "\n# upgraded\n")
    _write_record(site)

    after = _mask_server(python, "status")
    assert after.returncode != 0 and "one of other code has just left" in after.stdout, after
    wait_for(lambda: pid not in mask_servers(home), 60,
             "the server of the code before the upgrade to exit")
    # and the next start gives a server of the upgraded code, which serves
    again = _mask_server(python, "start", "--wait", "240")
    assert again.returncode == 0, again.stderr
    assert "serving this install" in _mask_server(python, "status").stdout
    assert mask_servers(home) != [pid]

