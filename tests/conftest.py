"""Test-wide fixtures. Every test is hermetic: HOME, TCG_HOME and the XDG dirs
point into tmp_path, and a test that writes into the real home directory (or
the real tcg config/state/cache dirs) fails."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.hermetic import home_fingerprint, real_tcg_dirs
from tests.helpers.mask_servers import stop_mask_servers

REAL_HOME = Path(os.path.expanduser("~"))


def _home_fingerprint() -> tuple:
    return home_fingerprint(REAL_HOME, real_tcg_dirs())


@pytest.fixture(scope="session")
def shared_detect_cache(tmp_path_factory) -> Path:
    """One compiled-detector cache for the whole run.

    Compiling the hyperscan database for every rule takes seconds; every test
    has its own TCG_HOME, so without this each test (and each tcg subprocess a
    test starts) would recompile it. The database holds patterns, no values.
    """
    return tmp_path_factory.mktemp("detect-cache")


@pytest.fixture(scope="session")
def shared_inbound_cache(tmp_path_factory) -> Path:
    """One compiled inbound-gate cache for the run (see shared_detect_cache): its
    prefilter database takes seconds to compile and holds rule literals only."""
    return tmp_path_factory.mktemp("inbound-cache")


@pytest.fixture(scope="session")
def shared_install_key() -> bytes:
    """One install key for the run, pre-seeded in every hermetic TCG_HOME: tcg's
    start-up caches (the compiled detector above, derived masker data) are signed
    with the install key and would otherwise be rebuilt — seconds each — by every
    test. Tests about creating the key use the ``fresh_key`` fixture."""
    return os.urandom(32)


@pytest.fixture
def fresh_key(tcg_home):
    """No install key yet (the hermetic home is pre-seeded with the shared one)."""
    (tcg_home / "state" / "key").unlink()


@pytest.fixture(autouse=True)
def hermetic_home(tmp_path_factory, monkeypatch, shared_detect_cache, shared_inbound_cache,
                  shared_install_key):
    """Point HOME/TCG_HOME/XDG into a temp dir; fail on writes to the real home."""
    base = tmp_path_factory.mktemp("hermetic")
    home = base / "home"
    tcg_home = base / "tcg-home"
    home.mkdir()
    (tcg_home / "cache").mkdir(parents=True, mode=0o700)
    (tcg_home / "cache" / "detect").symlink_to(shared_detect_cache, target_is_directory=True)
    (tcg_home / "cache" / "inbound").symlink_to(shared_inbound_cache, target_is_directory=True)
    (tcg_home / "state").mkdir(mode=0o700)
    key = tcg_home / "state" / "key"
    key.touch(mode=0o600)
    key.write_bytes(shared_install_key)
    before = _home_fingerprint()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("TCG_HOME", str(tcg_home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("ZDOTDIR", str(home))
    for var in ("TCG_POLICY", "TCG_ACTOR", "TCG_AGENT", "TCG_MEDIATED", "TCG_SESSION", "TCG_DEBUG",
                "TCG_SHELL", "HISTFILE", "BASH_ENV", "ENV", "CLAUDE_CODE_SHELL_PREFIX"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GIT_AUTHOR_NAME", "tcg test")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "test@tcg.invalid")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "tcg test")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "test@tcg.invalid")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    # The teardown below stops this home's masking fork servers, but one still starting
    # then (a session's detached start) is missed: it would wait out the 30 idle
    # minutes (52 of them, ~0.9 GB, after a full run). Two idle minutes end it.
    monkeypatch.setenv("TCG_MASK_SERVER_IDLE", "120")
    yield home
    stop_mask_servers(tcg_home)  # a session the test ran may have started one
    monkeypatch.undo()
    after = _home_fingerprint()
    assert before == after, (
        f"test wrote into the real home directory {REAL_HOME} or the real tcg dirs"
    )


@pytest.fixture
def tcg_home() -> Path:
    """The hermetic TCG_HOME of this test."""
    return Path(os.environ["TCG_HOME"])
