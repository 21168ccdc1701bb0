"""Keyed hashes: per-install HMAC key, private, stable, race-free to create."""

from __future__ import annotations

import hashlib
import hmac
import os
import stat
import subprocess
import sys
import textwrap

from tcg.keyhash import KEY_BYTES, KeyedHasher, load_or_create_key
from tcg.paths import get_paths

H8 = "from tcg.keyhash import KeyedHasher; print(KeyedHasher.for_install().h8('hunter2'))"


def h8_in_subprocess(env: dict[str, str]) -> str:
    return subprocess.run(
        [sys.executable, "-c", H8], capture_output=True, text=True, check=True, timeout=60, env=env
    ).stdout.strip()


def test_key_is_created_private(tcg_home, fresh_key):
    key = load_or_create_key()
    kf = get_paths().key_file
    assert kf == tcg_home / "state" / "key"
    assert len(key) == KEY_BYTES and kf.read_bytes() == key
    if os.name == "posix":
        assert stat.S_IMODE(kf.stat().st_mode) == 0o600
        assert stat.S_IMODE(kf.parent.stat().st_mode) == 0o700
    assert [p.name for p in kf.parent.iterdir()] == ["key"]  # no temp file left behind


def test_hashes_are_hmac_sha256_under_the_key():
    hasher = KeyedHasher.for_install()
    key = load_or_create_key()
    full = hmac.new(key, b"hunter2", hashlib.sha256).hexdigest()
    assert hasher.hexdigest("hunter2") == full
    assert hasher.h8("hunter2") == full[:8]
    assert hasher.h16(b"hunter2") == full[:16]
    assert hasher.h8("hunter2") != hashlib.sha256(b"hunter2").hexdigest()[:8]


def test_stable_across_processes_and_different_across_installs(tmp_path):
    here = KeyedHasher.for_install().h8("hunter2")
    assert h8_in_subprocess(dict(os.environ)) == here
    other = {**os.environ, "TCG_HOME": str(tmp_path / "other-install")}
    theirs = h8_in_subprocess(other)
    assert theirs != here
    assert h8_in_subprocess(other) == theirs


CREATOR = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from tcg.keyhash import load_or_create_key
    go = Path(sys.argv[1])
    deadline = time.monotonic() + 60
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.0005)
    print(load_or_create_key().hex())
    """
)


def test_concurrent_creation_yields_one_key(tmp_path, fresh_key):
    go = tmp_path / "go"
    procs = [
        subprocess.Popen([sys.executable, "-c", CREATOR, str(go)], stdout=subprocess.PIPE, text=True)
        for _ in range(8)
    ]
    go.touch()
    keys = {p.communicate(timeout=120)[0].strip() for p in procs}
    assert all(p.returncode == 0 for p in procs)
    assert keys == {get_paths().key_file.read_bytes().hex()}
    assert [p.name for p in get_paths().state.iterdir()] == ["key"]


def test_damaged_key_is_replaced(fresh_key):
    kf = get_paths().key_file
    kf.parent.mkdir(parents=True, exist_ok=True)
    kf.write_bytes(b"short")
    key = load_or_create_key()
    assert len(key) == KEY_BYTES and kf.read_bytes() == key


def test_unreadable_key_is_a_clear_error():
    """As an unprivileged user (nobody when the tests run as root: root reads any file)."""
    from tests.helpers.unprivileged import run_unprivileged, unprivileged_home

    code = (
        "import os\n"
        "from tcg.keyhash import KeyFileError, load_or_create_key\n"
        "from tcg.paths import get_paths\n"
        "load_or_create_key()\n"
        "os.chmod(get_paths().key_file, 0)\n"
        "try:\n"
        "    load_or_create_key()\n"
        "except KeyFileError as exc:\n"
        "    print('REFUSED', 'chmod 600' in (exc.hint or ''))\n"
        "else:\n"
        "    print('READ')\n"
    )
    with unprivileged_home() as home:
        proc = run_unprivileged(code, home)
    assert proc.stdout.strip() == "REFUSED True", proc.stderr
