"""`tcg inbound check` as a user runs it: a real process, stdin in, exit code out."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.inbound.vectors import DOCUMENTED_MISSES, MUST_FLAG, MUST_PASS


def run(text: str, *args: str, env=None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "tcg", "inbound", "check", *args],
                          input=text.encode("utf-8"), capture_output=True, timeout=120, env=env)


@pytest.mark.parametrize(("name", "text", "rule"), MUST_FLAG, ids=[v[0] for v in MUST_FLAG])
def test_flagged_vectors_exit_1(name, text, rule):
    res = run(text, "--json")
    assert res.returncode == 1, res.stderr
    verdict = json.loads(res.stdout)
    assert verdict["verdict"] == "flagged" and rule in verdict["rules"] and verdict["action"] == "warn"


def test_clean_and_pinned_misses_exit_0():
    for _, text in MUST_PASS + DOCUMENTED_MISSES:
        res = run(text)
        assert res.returncode == 0 and res.stdout.startswith(b"pass"), (text, res.stdout)


def test_output_delivers_with_banner_and_cut():
    res = run("\u0f40" * 13_000, "--output", "--surface", "mcp-result")
    assert res.returncode == 1
    out = res.stdout.decode("utf-8")
    assert out.startswith("tcg inbound warning: this MCP tool result")
    assert out.count("\u0f40") == 2000 and b"flagged (mcp-result, action warn)" in res.stderr


def test_user_prompt_block_output():
    res = run("\u200b" * 10_000, "--output", "--surface", "user-prompt")
    assert res.returncode == 1 and "\u200b" not in res.stdout.decode("utf-8")
    assert b"withheld" in res.stdout


def test_invalid_policy_exits_2(tcg_home):
    (tcg_home / "config").mkdir(exist_ok=True)
    (tcg_home / "config" / "policy.toml").write_text("[inbound.surfaces.web]\ninjection = 1\n")
    res = run("hello")
    assert res.returncode == 2 and b"policy.toml" in res.stderr and b"hint:" in res.stderr


def test_bad_surface_is_a_usage_error():
    res = run("hello", "--surface", "email")
    assert res.returncode == 2 and b"email" in res.stderr


def test_records_no_event(tcg_home):
    run(MUST_FLAG[0][1])
    assert not (tcg_home / "state" / "events.jsonl").exists()
