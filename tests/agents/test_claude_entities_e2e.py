"""Business-entity aliases with the REAL Claude Code CLI (2.1.328) through `tcg launch
claude`, offline: a project with a registered company and person; a scripted model
reads files (Read, and `cat` through its Bash tool), writes and edits them using the
aliases only. Every request body the CLI sent — exactly what a provider would
receive — must hold no registered value, and the files on disk must hold the real
names, byte for byte. Then `tcg scan-transcript` on the session's own transcript.
Skipped when the CLI is not installed (tests/launcher/test_claude_e2e.py gives the
install line).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tcg.entities.locate import STORE_DIR
from tcg.entities.registry import Store, add_entity
from tests.agents.test_claude_hooks_e2e import claude_bin, cli_env, launched, results  # noqa: F401 - fixture
from tests.helpers.leaks import all_files_under
from tests.launcher.conftest import TCG, commit, make_repo
from tests.launcher.fake_anthropic import call_turn, text_turn, tool_turn

PERSON = "Петров Алексей Иванович"  # CTXG_PERSON_1
COMPANY = 'Зорька "Рассвет"'  # CTXG_COMPANY_A: quotes, so a shell line must escape it
# every surface form a provider must never see (the registered values and their parts)
VALUES = [PERSON, "Петров", "Петрова", "Петрову", "Алексей Иванович", COMPANY, "Зорька", "Рассвет"]
CONTRACT = f"Договор поставки.\nЗаказчик: {COMPANY}.\nКонтакт: {PERSON}, тел. 100-200.\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "project")
    commit(repo, "README.md", "a project\n")
    (repo / "contract.md").write_text(CONTRACT, encoding="utf-8")
    with Store(str(repo)).locked() as reg:
        person, _ = add_entity(reg, PERSON, "person", "client contact")
        company, _ = add_entity(reg, COMPANY, "company", "retail client")
    assert (person.alias, company.alias) == ("CTXG_PERSON_1", "CTXG_COMPANY_A")
    return repo


def test_the_model_works_with_aliases_and_the_files_get_the_real_names(
        claude_bin, project, hermetic_home, tcg_home):  # noqa: F811 - claude_bin is the fixture
    letter = project / "letter.md"
    shell_out = project / "from-shell.txt"
    turns = [
        call_turn("t_read", "Read", {"file_path": str(project / "contract.md")}),
        tool_turn("t_cat", "cat contract.md"),
        call_turn("t_write", "Write", {"file_path": str(letter),
                                       "content": "Кому: CTXG_PERSON_1\nОт имени CTXG_COMPANY_A.\n"}),
        call_turn("t_edit", "Edit", {"file_path": str(project / "contract.md"), "old_string": "тел. 100-200",
                                     "new_string": "тел. 100-200, копия для CTXG_PERSON_1а"}),
        # an alias in old_string: Claude Code matches it against the file before any hook runs
        call_turn("t_edit_alias", "Edit", {"file_path": str(project / "contract.md"),
                                           "old_string": "Заказчик: CTXG_COMPANY_A.", "new_string": "x"}),
        tool_turn("t_echo", 'echo "Поставщик: CTXG_COMPANY_A" > from-shell.txt'),
        call_turn("t_reread", "Read", {"file_path": str(letter)}),
        text_turn("all done"),
    ]
    api = launched(claude_bin, turns, project, hermetic_home, tcg_home, "prepare the letter")
    got = results(api)
    bodies = list(api.bodies)
    # What the model read: aliases, never the names (Read through the hook, cat through the station).
    for tool_id in ("t_read", "t_cat"):
        assert "CTXG_COMPANY_A" in got[tool_id] and "CTXG_PERSON_1" in got[tool_id], got[tool_id]
    assert "CTXG_PERSON_1" in got["t_reread"] and "CTXG_COMPANY_A" in got["t_reread"], got["t_reread"]
    assert "String to replace not found" in got["t_edit_alias"], got["t_edit_alias"]
    for tool_id in ("t_write", "t_edit", "t_echo"):
        assert "blocked" not in got[tool_id] and "needs a person" not in got[tool_id], got[tool_id]
    # The glossary reached the model (SessionStart): aliases and hints only.
    assert any("CTXG_COMPANY_A (company): retail client" in b for b in bodies)
    for i, body in enumerate(bodies):
        text = json.loads(body)  # the decoded body: a value escaped as \uXXXX would still be found
        flat = json.dumps(text, ensure_ascii=False)
        for value in VALUES:
            assert value not in flat, f"request {i} carried a registered value ({VALUES.index(value)})"
    # The files on disk: the real names, byte for byte (a case ending restored into its form).
    assert letter.read_text(encoding="utf-8") == f"Кому: {PERSON}\nОт имени {COMPANY}.\n"
    assert (project / "contract.md").read_text(encoding="utf-8") == CONTRACT.replace(
        "тел. 100-200", "тел. 100-200, копия для Петрова Алексея Ивановича")
    assert shell_out.read_text(encoding="utf-8") == f"Поставщик: {COMPANY}\n"
    events = [json.loads(x) for x in (tcg_home / "state" / "events.jsonl").read_text().splitlines()]
    hooks = [e for e in events if e["event"] == "hook_decision"]
    assert any(e.get("input_updated") for e in hooks if e.get("tool") == "Write")
    assert any(e["reason"] == "entity-in-output" and e["tool"] == "Read" for e in hooks)
    for path in all_files_under(tcg_home):  # the registry (tcg-entities/) is the one place values live
        if STORE_DIR not in path.parts:
            data = path.read_bytes()
            assert not any(v.encode() in data for v in (PERSON, COMPANY, "Петрова")), path
    # What Claude Code kept of the session on disk (the transcript) names no registered value either.
    transcripts = list((hermetic_home / ".claude" / "projects").rglob("*.jsonl"))
    assert transcripts, "Claude Code wrote no transcript"
    scan = subprocess.run([TCG, "scan-transcript", "--json", *map(str, transcripts)], cwd=project,
                          env={**cli_env(claude_bin, api, hermetic_home, tcg_home)}, capture_output=True, text=True,
                          timeout=300)
    assert scan.returncode in (0, 1) and scan.stdout.strip(), scan.stderr
    # (secrets/PII are counted too: Claude Code's own transcript holds e-mail addresses of its own)
    assert [json.loads(line)["entities"] for line in scan.stdout.splitlines()] == [{}] * len(transcripts)
