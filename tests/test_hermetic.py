"""The autouse hermetic fixture really isolates tests from the real home."""

from __future__ import annotations

import os
from pathlib import Path

from tcg.paths import get_paths
from tests.conftest import REAL_HOME
from tests.helpers.hermetic import home_fingerprint


def test_home_and_tcg_home_point_into_tmp(hermetic_home, tcg_home, tmp_path_factory):
    base = tmp_path_factory.getbasetemp()
    assert Path(os.environ["HOME"]) == hermetic_home
    for var in ("HOME", "TCG_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME",
                "XDG_DATA_HOME", "ZDOTDIR"):
        value = Path(os.environ[var])
        assert value.is_relative_to(base), var
        assert not value.is_relative_to(REAL_HOME) or REAL_HOME.is_relative_to(base), var
    assert Path(os.path.expanduser("~")) == hermetic_home
    for root in get_paths().all_roots():
        assert root.is_relative_to(tcg_home)
    assert "TCG_POLICY" not in os.environ and "TCG_SESSION" not in os.environ


def test_fingerprint_sees_writes_to_a_home(tmp_path):
    home = tmp_path / "fake-home"
    home.mkdir()
    (home / ".bashrc").write_text("# rc\n")
    tcg_dir = home / ".config" / "tcg"
    fp = lambda: home_fingerprint(home, [tcg_dir])  # noqa: E731

    before = fp()
    (home / ".bashrc").read_text()
    assert fp() == before  # reading changes nothing

    with open(home / ".bashrc", "a") as fh:  # an appended hook line: home's mtime is unchanged
        fh.write('eval "$(tcg_shell init bash)"\n')
    after_rc = fp()
    assert after_rc != before

    (home / ".tcg-stray").write_text("x")
    after_new = fp()
    assert after_new != after_rc

    tcg_dir.mkdir(parents=True)
    assert fp() != after_new
