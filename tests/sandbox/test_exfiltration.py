"""The exfiltration table, run as an agent through `tcg_shell run-line`: zero leaks.

Each line is also run under plain ``bash -c`` against a second, identical machine:
there it must leak, which proves the line really exfiltrates and the check can fail.
"""

from __future__ import annotations

import shutil

import pytest

from tests.helpers.leaks import assert_no_secret_written
from tests.sandbox.conftest import run_agent, run_plain, sandbox_works
from tests.sandbox.exfil_table import table
from tests.sandbox.leakcheck import leaks
from tests.sandbox.world import build

TABLE = table()
pytestmark = pytest.mark.skipif(sandbox_works() is not None, reason=f"no sandbox here: {sandbox_works()}")


def test_the_table_is_big_enough():
    assert len(TABLE) >= 120
    assert sum(1 for _, steps, _ in TABLE if len(steps) > 1) >= 20


@pytest.mark.parametrize(("steps", "tools"), [(s, t) for _, s, t in TABLE], ids=[i for i, _, _ in TABLE])
def test_no_leak_through_tcg_while_plain_bash_leaks(world, tmp_path, steps, tools):
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"optional tool not installed: {', '.join(missing)}")
    output = b""
    for step in steps:
        r = run_agent(world, step)
        output += r.stdout + r.stderr
    found = leaks(output, world.values)
    assert not found, f"leaked {found}: {output[:2000]!r}"
    for name, value in world.raw_only.items():
        assert value.encode() not in output, f"{name} leaked raw"

    control = build(tmp_path / "control-home", tmp_path / "control")
    plain = b""
    for step in steps:
        r = run_plain(control, step)
        plain += r.stdout + r.stderr
    assert leaks(plain, control.values), f"the line does not leak even without tcg: {plain[:1000]!r}"


def test_nothing_tcg_writes_holds_a_planted_value(world, tcg_home):
    for _, steps, _ in TABLE[::7]:
        for step in steps:
            run_agent(world, step)
    secrets = [*world.values.values(), *world.raw_only.values()]
    assert_no_secret_written(tcg_home / "state", secrets)
    assert_no_secret_written(tcg_home / "cache" / "sandbox", secrets)
