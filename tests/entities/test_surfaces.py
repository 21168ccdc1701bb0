"""The real entry points: the station, the MCP proxy, tcg verify, tcg scan-transcript;
and a planted-value grep of every file tcg wrote."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.leaks import all_files_under

from .conftest import ENTITIES

PLANTED = ["Петров", "Петрова", "Ромашка", "Ромашкой", "Сулейманов", "Дильноза", "Зорька"]
NOTES = ("Договор с ООО «Ромашка» подписал Петров А.И.; Дильнозой довольны.\n"
         "Сулейманову — копию. Петровка 38, петров день.\n"
         "aws_access_key_id = AKIAZ7VRSQ2YRBX3GHKQ\n")


def tcg_shell(args, cwd, env=None, **kw):
    return subprocess.run([sys.executable, "-c", "import sys; from tcg.shell_entry import main; "
                           "sys.exit(main())", *args], cwd=cwd, env={**os.environ, **(env or {})},
                          capture_output=True, timeout=120, **kw)


def tcg(args, cwd, env=None, **kw):
    return subprocess.run([sys.executable, "-m", "tcg", *args], cwd=cwd,
                          env={**os.environ, **(env or {})}, capture_output=True, timeout=300, **kw)


def assert_no_value_written(home: Path):
    """Every file tcg wrote, except the registry store (the one place values live)."""
    for path in all_files_under(home):
        if "tcg-entities" in path.parts:
            continue
        data = path.read_bytes()
        for v in PLANTED:
            assert v.encode() not in data, f"a registered value in {path}"


def test_station_aliases_agent_output(project):
    (project / "notes.txt").write_text(NOTES, encoding="utf-8")
    r = tcg_shell(["run-line", "cat notes.txt; grep -c 'Петров' notes.txt"], project,
                  {"TCG_ACTOR": "agent"})
    out = r.stdout.decode()
    assert r.returncode == 0
    assert out.startswith("Договор с ООО «CTXG_COMPANY_A» подписал CTXG_PERSON_1; CTXG_PERSON_3ой")
    assert "CTXG_PERSON_2у — копию. Петровка 38, петров день." in out
    assert "<SECRET:aws-access-key-id:" in out
    assert_no_value_written(Path(os.environ["TCG_HOME"]))
    events = (Path(os.environ["TCG_HOME"]) / "state" / "events.jsonl").read_text()
    assert "grep -c 'CTXG_PERSON_1' notes.txt" in events


def test_station_leaves_a_humans_output_alone(project):
    (project / "notes.txt").write_text(NOTES, encoding="utf-8")
    r = tcg_shell(["run-line", "cat notes.txt"], project)
    assert "Ромашка" in r.stdout.decode()
    assert_no_value_written(Path(os.environ["TCG_HOME"]))  # the event log still holds none


def test_station_withholds_output_when_the_registry_is_damaged(project):
    from tcg.entities.registry import Store

    Path(Store(str(project)).path).write_text("{broken")
    (project / "notes.txt").write_text(NOTES, encoding="utf-8")
    r = tcg_shell(["run-line", "cat notes.txt"], project, {"TCG_ACTOR": "agent"})
    assert r.returncode == 126 and "Ромашка" not in r.stdout.decode()
    assert b"output withheld" in r.stderr


SERVER = r"""
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" in msg:
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {
            "content": [{"type": "text", "text": sys.argv[1]}],
            "structuredContent": {"Ромашка": {"contact": "Петрова"}}}}, ensure_ascii=sys.argv[2] == "1"),
            flush=True)
"""


@pytest.mark.parametrize("ascii_json", ["0", "1"])
def test_mcp_proxy_aliases_responses(project, ascii_json):
    req = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                      "params": {"name": "read", "arguments": {}}}) + "\n"
    r = tcg(["mcp-proxy", "--", sys.executable, "-c", SERVER, NOTES, ascii_json], project,
            input=req.encode())
    msg = json.loads(r.stdout.decode().splitlines()[0])
    assert msg["id"] == 7
    text = msg["result"]["content"][0]["text"]
    assert text.startswith("Договор с ООО «CTXG_COMPANY_A» подписал CTXG_PERSON_1")
    assert msg["result"]["structuredContent"] == {"CTXG_COMPANY_A": {"contact": "CTXG_PERSON_1а"}}
    assert "<SECRET:" in text
    assert_no_value_written(Path(os.environ["TCG_HOME"]))


def test_verify_all_pass(tmp_path, hermetic_home):
    r = tcg(["verify"], tmp_path)
    out = r.stdout.decode()
    assert r.returncode == 0, out
    assert "FAIL" not in out and out.strip().endswith("passed, 0 failed")
    assert len([ln for ln in out.splitlines() if ln.startswith("PASS")]) >= 12
    for v in ("Канареечкин", "Зорька"):
        assert v not in out
    home = Path(os.environ["TCG_HOME"])
    assert not list((home / "state" / "tcg-entities").glob("*/registry.json"))  # cleaned up


def test_scan_transcript(project, tmp_path):
    tdir = tmp_path / "claude" / ".claude" / "projects" / "-p"
    tdir.mkdir(parents=True)
    lines = [{"type": "user", "message": {"content": "Петров и \u0420\u043e\u043c\u0430\u0448\u043a\u0430"}},
             {"type": "assistant", "message": {"content": [{"type": "text", "text": "CTXG_PERSON_1"}]}},
             {"type": "user", "toolUseResult": {"stdout": "key AKIAZ7VRSQ2YRBX3GHKQ"}}]
    (tdir / "s1.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\nnot json Сулейманову\n")
    (tdir / "s2.jsonl").write_text(json.dumps({"message": "CTXG_COMPANY_A only"}) + "\n")
    r = tcg(["scan-transcript"], project, {"HOME": str(tmp_path / "claude")})
    out = r.stdout.decode()
    assert r.returncode == 1
    assert "FOUND" in out and "company=1" in out and "person=2" in out and "aws-access-key-id=1" in out
    assert "clean" in out and "(1 non-JSON lines)" in out
    for v in PLANTED:
        assert v not in out
    r = tcg(["scan-transcript", "--json", str(tdir / "s2.jsonl")], project)
    assert r.returncode == 0 and json.loads(r.stdout) ["entities"] == {}
    assert len(ENTITIES) == 6
