"""Fault matrix: what tcg reads and writes around a command goes bad — the
policy file is replaced by an invalid one between two commands, the install
key is deleted or unreadable, $HOME is read-only. Fail closed: 126 with the
file (and line) named, nothing run (docs/reliability.md)."""

from __future__ import annotations

import errno
import os
import sys
import textwrap

import pytest

from tests.faults.helpers import (
    all_lines_parse,
    private_mounts_or_skip,
    run_in_private_mount,
    run_station,
    station,
    station_env,
)

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the faults are injected with Linux tools")


def test_policy_replaced_by_an_invalid_one_between_commands_fails_closed_with_file_and_line(tmp_path):
    policy = tmp_path / "policy.toml"
    policy.write_text("[mask]\nterminal-hold-ms = 400\n")
    assert run_station("echo ok", TCG_POLICY=str(policy)).stdout == b"ok\n"  # the snapshot is now cached
    marker = tmp_path / "ran"
    for bad, line_no in (("[mask]\nterminal-hold-ms = 400\n[events\n", 3),
                         ("[mask]\nterminal-hold-ms = \"soon\"\n", 2),
                         ("[events]\nkeep = 0\n", 2)):
        new = tmp_path / "policy.new"
        new.write_text(bad)
        os.replace(new, policy)  # replaced the way editors save
        res = run_station(f"touch '{marker}'", TCG_POLICY=str(policy))
        assert res.returncode == 126 and not marker.exists()
        assert f"{policy}:{line_no}:".encode() in res.stderr and b"policy-invalid" in res.stderr


def test_deleted_key_is_recreated_and_the_command_is_logged(tmp_path, tcg_home):
    (tcg_home / "state" / "key").unlink()
    res = run_station("echo ok")
    assert res.returncode == 0 and res.stdout == b"ok\n"
    assert (tcg_home / "state" / "key").stat().st_size >= 32
    assert all_lines_parse(tcg_home / "state" / "events.jsonl")[-1]["command"] == "echo ok"


def test_unreadable_key_refuses_instead_of_running_unlogged(tmp_path, tcg_home):
    """Found by this matrix: with the key unreadable the line ran and only a
    warning said its event was lost."""
    key = tcg_home / "state" / "key"
    key.unlink()
    key.mkdir()  # unreadable even for root (EISDIR)
    with pytest.raises(OSError) as fault:
        key.read_bytes()
    assert fault.value.errno == errno.EISDIR
    marker = tmp_path / "ran"
    res = run_station(f"touch '{marker}'")
    assert res.returncode == 126 and not marker.exists()
    assert b"event-log-unwritable" in res.stderr and str(key).encode() in res.stderr


READ_ONLY_HOME_DRIVER = textwrap.dedent(
    """
    import json, os, subprocess
    home = os.environ["HOME"]
    try:
        open(os.path.join(home, "probe"), "w")
        probe = 0
    except OSError as exc:
        probe = exc.errno
    res = subprocess.run(json.loads(os.environ["ARGV"]), capture_output=True, stdin=subprocess.DEVNULL)
    print(json.dumps({"probe": probe, "rc": res.returncode, "stderr": res.stderr.decode("utf-8", "replace")}))
    """
)


def test_read_only_home_refuses_with_the_reason_and_a_hint(tmp_path, hermetic_home):
    private_mounts_or_skip()
    import json

    marker = tmp_path / "ran"
    home = hermetic_home
    setup = f'mount --bind "{home}" "{home}"\nmount -o remount,bind,ro "{home}"'
    env = station_env(ARGV=json.dumps(station(f"touch '{marker}'")))
    env.pop("TCG_HOME")  # the state dir lives under the read-only home (XDG_STATE_HOME)
    out = run_in_private_mount(setup, READ_ONLY_HOME_DRIVER, env)
    assert out["probe"] == errno.EROFS  # the fault happened
    assert out["rc"] == 126 and not marker.exists()
    assert "event-log-unwritable" in out["stderr"] and os.strerror(errno.EROFS) in out["stderr"]
    assert "permissions" in out["stderr"]  # the hint fits the error, not "free space"
