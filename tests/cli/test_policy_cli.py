"""`tcg policy show|check|path` through the real entry point and error handler."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tcg.cli import main
from tcg.paths import get_paths
from tcg.policy.load import load_policy, parse_toml


def run(capsys, *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def write_user_policy(text: str):
    p = get_paths().policy_file
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def test_show_prints_snapshot_and_fingerprint(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, out, _ = run(capsys, "policy", "show")
    pol = load_policy()
    assert rc == 0
    assert f"snapshot:    {pol.snapshot_id}\n" in out
    assert f"fingerprint: {pol.fingerprint}\n" in out
    # The body is TOML that reads back to exactly the effective policy.
    body = out.split("\n\n", 1)[1]
    assert parse_toml(body, "<policy show>") == pol.data


def test_show_json(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, out, _ = run(capsys, "policy", "show", "--json")
    doc = json.loads(out)
    pol = load_policy()
    assert rc == 0
    assert doc["fingerprint"] == pol.fingerprint
    assert doc["snapshot"] == pol.snapshot_id
    assert doc["policy"] == pol.data
    assert doc["sources"] == ["<builtin>"]


def test_show_reflects_user_edits(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _, before, _ = run(capsys, "policy", "show", "--json")
    write_user_policy('[decisions.human]\ncredential-dump = "block"\n')
    _, after, _ = run(capsys, "policy", "show", "--json")
    assert json.loads(before)["fingerprint"] != json.loads(after)["fingerprint"]
    assert json.loads(after)["policy"]["decisions"]["human"]["credential-dump"] == "block"


def test_show_prints_repo_notices(capsys, tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".tcg").mkdir()
    (tmp_path / ".tcg" / "policy.toml").write_text('[decisions.agent]\ncredential-dump = "allow"\n')
    monkeypatch.chdir(tmp_path)
    rc, out, _ = run(capsys, "policy", "show")
    assert rc == 0
    assert "notice:" in out and "decisions.agent.credential-dump" in out
    assert 'credential-dump = "block"' in out


def test_show_with_invalid_policy_exits_2(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    p = write_user_policy('[decisions.agent]\nsecret-store-read = "yes"\n')
    rc, out, err = run(capsys, "policy", "show")
    assert rc == 2
    assert f"{p}:2:" in err and "\nhint: " in err
    assert "Traceback" not in err


def test_check_valid_file(capsys, tmp_path):
    f = tmp_path / "p.toml"
    f.write_text('[decisions.human]\ncredential-dump = "ask"\n')
    rc, out, err = run(capsys, "policy", "check", str(f))
    assert rc == 0, err
    assert out.startswith("ok: tcg-default@v1:")


@pytest.mark.parametrize(
    "text", ["[decisions.agent\n", '[decisions.agent]\nsecret-store-read = "nope"\n', "[wat]\nx=1\n"]
)
def test_check_invalid_file_exits_2_naming_file_and_line(capsys, tmp_path, text):
    f = tmp_path / "p.toml"
    f.write_text(text)
    rc, out, err = run(capsys, "policy", "check", str(f))
    assert rc == 2
    assert out == ""
    first, hint = err.strip().split("\n")
    assert first.startswith(f"tcg: {f}:")
    assert hint.startswith("hint: ")


def test_check_missing_file_exits_2(capsys, tmp_path):
    rc, _, err = run(capsys, "policy", "check", str(tmp_path / "missing.toml"))
    assert rc == 2
    assert "not found" in err


def test_check_repo_file_reports_what_it_cannot_loosen(capsys, tmp_path):
    (tmp_path / ".tcg").mkdir()
    f = tmp_path / ".tcg" / "policy.toml"
    f.write_text('[secret_stores]\nallow_basenames = [".env"]\n')
    rc, out, _ = run(capsys, "policy", "check", str(f))
    assert rc == 0
    assert "notice:" in out and "cannot add exceptions" in out


def test_check_without_file_checks_the_effective_policy(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "policy", "check")[0] == 0
    write_user_policy("[decisions.agent]\nsecret-store-read = 1\n")
    assert run(capsys, "policy", "check")[0] == 2


def test_path(capsys, tmp_path, monkeypatch, tcg_home):
    rc, out, _ = run(capsys, "policy", "path")
    assert rc == 0
    assert out.strip() == str(tcg_home / "config" / "policy.toml")
    monkeypatch.setenv("TCG_POLICY", str(tmp_path / "x.toml"))
    rc, out, err = run(capsys, "policy", "path")
    assert out.strip() == str(tmp_path / "x.toml")
    assert "TCG_POLICY" in err


def test_real_entry_point(tmp_path):
    """The installed console script, as a user runs it."""
    proc = subprocess.run(
        [sys.executable, "-m", "tcg", "policy", "show"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("snapshot:    tcg-default@v1:")
    bad = tmp_path / "bad.toml"
    bad.write_text("= 1\n")
    proc = subprocess.run(
        [sys.executable, "-m", "tcg", "policy", "check", str(bad)],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 2
    assert f"{bad}:1:" in proc.stderr and "hint:" in proc.stderr
