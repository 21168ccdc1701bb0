"""Where tcg keeps its files (docs/install.md)."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from tcg.paths import ensure_private_dir, get_paths


def test_tcg_home_holds_config_state_and_cache(tcg_home):
    p = get_paths()
    assert (p.config, p.state, p.cache) == (tcg_home / "config", tcg_home / "state", tcg_home / "cache")
    assert p.policy_file == tcg_home / "config" / "policy.toml"
    assert p.events_file == tcg_home / "state" / "events.jsonl"
    assert p.key_file == tcg_home / "state" / "key"
    assert p.scan_cache == tcg_home / "cache" / "scan"
    assert p.all_roots() == (p.config, p.state, p.cache)


def test_explicit_environ_and_tilde(tmp_path):
    p = get_paths({"TCG_HOME": "~/tcg-root", "HOME": str(tmp_path)})
    assert p.config == Path(os.path.expanduser("~/tcg-root")) / "config"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG layout is Linux's")
def test_platformdirs_without_tcg_home(monkeypatch, hermetic_home):
    monkeypatch.delenv("TCG_HOME")
    p = get_paths()
    assert p.config == hermetic_home / ".config" / "tcg"
    assert p.state == hermetic_home / ".local" / "state" / "tcg"
    assert p.cache == hermetic_home / ".cache" / "tcg"


def test_empty_tcg_home_means_unset(monkeypatch, hermetic_home):
    monkeypatch.setenv("TCG_HOME", "")
    assert str(get_paths().config).startswith(str(hermetic_home))


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
def test_ensure_private_dir_creates_and_tightens(tmp_path):
    d = ensure_private_dir(tmp_path / "a" / "b")
    assert stat.S_IMODE(d.stat().st_mode) == 0o700
    os.chmod(d, 0o755)
    ensure_private_dir(d)
    assert stat.S_IMODE(d.stat().st_mode) == 0o700


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG layout is Linux's")
@pytest.mark.parametrize("xdg", [
    {},
    {"XDG_CONFIG_HOME": "/x/conf", "XDG_STATE_HOME": "/x/state", "XDG_CACHE_HOME": "/x/cache"},
    {"XDG_CONFIG_HOME": "   ", "XDG_STATE_HOME": "", "XDG_CACHE_HOME": "relative/cache"},
    {"XDG_CONFIG_HOME": " /padded ", "XDG_CACHE_HOME": "/c/"},
])
def test_linux_paths_agree_with_platformdirs(monkeypatch, hermetic_home, xdg):
    """tcg computes the XDG layout itself (platformdirs costs import time on every
    command); it must give exactly platformdirs' answer."""
    import platformdirs

    monkeypatch.delenv("TCG_HOME")
    for var in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    for var, value in xdg.items():
        monkeypatch.setenv(var, value)
    p = get_paths()
    assert p.config_dir == platformdirs.user_config_dir("tcg", appauthor=False)
    assert p.state_dir == platformdirs.user_state_dir("tcg", appauthor=False)
    assert p.cache_dir == platformdirs.user_cache_dir("tcg", appauthor=False)


def test_paths_are_immutable_values(tmp_path):
    a = get_paths({"TCG_HOME": str(tmp_path)})
    b = get_paths({"TCG_HOME": str(tmp_path)})
    assert a == b and hash(a) == hash(b)
    assert a.events_path == str(a.events_file) and a.key_path == str(a.key_file)
    with pytest.raises(AttributeError):
        a.cache_dir = "/elsewhere"  # type: ignore[misc]
