"""Business-entity aliases through `tcg hook claude EVENT`, run as Claude Code runs it
(the settings' exec form, a real process, the event JSON on stdin), in a project with
a real registry: SessionStart's glossary, alias → real in PreToolUse inputs, real →
alias in PostToolUse outputs (after the secrets are masked), refusals, a damaged
registry failing closed."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tcg.entities.locate import STORE_DIR
from tcg.entities.registry import Store, add_entity
from tests.agents.test_claude_hook import events, hook, pre
from tests.helpers.leaks import all_files_under, assert_no_secret_written
from tests.launcher.conftest import github_pat

PERSON = "Петров Алексей Иванович"  # CTXG_PERSON_1
COMPANY = 'Зорька "Рассвет"'  # CTXG_COMPANY_A: a value that needs escaping
VALUES = [PERSON, "Петров", "Петрова", COMPANY, "Зорька", "Рассвет"]
TOKEN = github_pat(61)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    with Store(str(proj)).locked() as reg:
        add_entity(reg, PERSON, "person", "client contact")
        add_entity(reg, COMPANY, "company", "retail client")
    return proj


def post(tool: str, response: object, cwd: Path) -> tuple[dict | None, int, str]:
    return hook("PostToolUse", {"tool_name": tool, "tool_input": {}, "tool_response": response,
                                "tool_use_id": "t1"}, cwd)


def updated(reply: dict | None) -> dict:
    assert reply is not None
    out = reply["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse" and "permissionDecision" not in out, reply
    return out["updatedInput"]


def decision(reply: dict | None) -> tuple[str, str]:
    assert reply is not None
    out = reply["hookSpecificOutput"]
    return out["permissionDecision"], out["permissionDecisionReason"]


def no_value(text: str) -> None:
    for v in VALUES:
        assert v not in text, f"a registered value reached the model: {v!r} in {text[:300]!r}"


# ------------------------------------------------------------------ SessionStart


@pytest.mark.parametrize("source", ["startup", "resume", "clear", "compact"])
def test_session_start_injects_the_glossary(source, project, tcg_home):
    reply, rc, _ = hook("SessionStart", {"source": source}, project)
    text = reply["hookSpecificOutput"]["additionalContext"]
    assert rc == 0 and "This session is protected by tcg" in text
    assert "- CTXG_PERSON_1 (person): client contact" in text and "- CTXG_COMPANY_A (company): retail client" in text
    no_value(text)
    ev = events(tcg_home)[-1]
    assert (ev["hook_event"], ev["source"], ev["glossary"]) == ("SessionStart", source, True)


def test_session_start_without_a_registry_has_no_glossary(tmp_path):
    reply, _, _ = hook("SessionStart", {"source": "startup"}, tmp_path)
    assert "CTXG_" not in reply["hookSpecificOutput"]["additionalContext"]


# ------------------------------------------------------------------ PreToolUse: alias → real


def test_write_gets_the_real_names_in_the_complete_input(project):
    target = str(project / "client.json")
    content = json.dumps({"contact": "CTXG_PERSON_1", "client": "CTXG_COMPANY_A"}) + "\n"
    got = updated(pre("Write", {"file_path": target, "content": content}, project)[0])
    assert set(got) == {"file_path", "content"} and got["file_path"] == target
    assert json.loads(got["content"]) == {"contact": PERSON, "client": COMPANY}  # JSON escaping kept


def test_edit_old_string_becomes_the_files_own_bytes(project):
    """The model copied old_string from a Read it saw aliased; the file spells the name its
    own way (upper case, a Latin look-alike letter): the Edit gets those exact bytes."""
    path = project / "notes.txt"
    path.write_text("Звонил ПЕТРОВ из Зорька \"Рассвет\"\nвторая строка\n", encoding="utf-8")
    shown = post("Read", {"type": "text", "file": {"filePath": str(path), "content": path.read_text()}},
                 project)[0]["hookSpecificOutput"]["updatedToolOutput"]["file"]["content"]
    first = shown.splitlines()[0]
    assert first == "Звонил CTXG_PERSON_1 из CTXG_COMPANY_A"
    got = updated(pre("Edit", {"file_path": str(path), "old_string": first,
                               "new_string": first + " — перезвонить CTXG_PERSON_1у", "replace_all": False},
                      project)[0])
    assert set(got) == {"file_path", "old_string", "new_string", "replace_all"}
    assert got["old_string"] == "Звонил ПЕТРОВ из Зорька \"Рассвет\""
    assert got["new_string"] == "Звонил ПЕТРОВ из Зорька \"Рассвет\" — перезвонить Петрову Алексею Ивановичу"


def test_multiedit_and_notebookedit_are_restored(project):
    path = project / "a.md"
    path.write_text("x\ny\n", encoding="utf-8")
    got = updated(pre("MultiEdit", {"file_path": str(path), "edits": [
        {"old_string": "x", "new_string": "для CTXG_PERSON_1а"}, {"old_string": "y", "new_string": "CTXG_COMPANY_A"}]},
        project)[0])
    assert [e["new_string"] for e in got["edits"]] == ["для Петрова Алексея Ивановича", COMPANY]
    got = updated(pre("NotebookEdit", {"notebook_path": str(project / "n.ipynb"), "cell_id": "c1",
                                       "new_source": "client = 'CTXG_COMPANY_A'", "cell_type": "code"}, project)[0])
    assert got["new_source"] == "client = 'Зорька \"Рассвет\"'"


def test_bash_read_grep_glob_arguments_are_restored(project):
    got = updated(pre("Bash", {"command": "grep -rn CTXG_COMPANY_A docs | wc -l", "description": "d"}, project)[0])
    assert shlex.split(got["command"])[2] == COMPANY and got["description"] == "d"
    got = updated(pre("Read", {"file_path": str(project / "CTXG_PERSON_1.txt")}, project)[0])
    assert got == {"file_path": str(project / f"{PERSON}.txt")}
    got = updated(pre("Grep", {"pattern": "CTXG_COMPANY_A", "path": str(project)}, project)[0])
    assert re.fullmatch(got["pattern"], COMPANY) and got["path"] == str(project)  # literal text in a regex
    got = updated(pre("Glob", {"pattern": "**/CTXG_PERSON_1*"}, project)[0])
    assert got == {"pattern": f"**/{PERSON}*"}


@pytest.mark.parametrize("bad", ["CTXG_COMPANY_AB", "ctxg_company_a", "client_CTXG_COMPANY_A"])
def test_unclear_aliases_are_asked_about(bad, project, tcg_home):
    reply, rc, _ = pre("Write", {"file_path": str(project / "a.txt"), "content": f"see {bad}"}, project)
    kind, reason = decision(reply)
    assert rc == 0 and kind == "ask"
    assert reason.startswith("tcg: needs a person's confirmation (entity-alias-unclear)") and "hint:" in reason
    no_value(reason)
    ev = events(tcg_home)[-1]
    assert (ev["decision"], ev["reason"]) == ("ask", "entity-alias-unclear")


def test_a_secret_placeholder_is_never_written_back(project, tmp_path):
    for where in (project, tmp_path):  # with and without a registry
        reply, _, _ = pre("Write", {"file_path": str(where / "cfg.py"),
                                    "content": "TOKEN = '<SECRET:github-pat:0123abcd>'\n"}, where)
        kind, reason = decision(reply)
        assert kind == "deny" and reason.startswith("tcg: blocked (placeholder-write)")
    # alias-shaped text in a project without a registry is just text
    assert pre("Write", {"file_path": str(tmp_path / "x"), "content": "CTXG_COMPANY_A"}, tmp_path)[0] is None


@pytest.mark.parametrize(("tool", "tool_input"), [
    ("WebFetch", {"url": "https://example.org/search", "prompt": f"find news about {COMPANY}"}),
    ("WebSearch", {"query": "Петрова Алексея Ивановича"}),
    ("Task", {"description": "d", "prompt": f"write to {PERSON}"}),
    ("mcp__crm__lookup", {"filter": {"names": ["x", COMPANY]}}),  # nested arguments
])
def test_a_real_name_leaving_the_machine_is_refused(tool, tool_input, project, tcg_home):
    kind, reason = decision(pre(tool, tool_input, project)[0])
    assert kind == "deny" and reason.startswith("tcg: blocked (entity-in-request)")
    no_value(reason)
    # with the alias it goes as it is (never restored off the machine)
    alias_input = json.loads(json.dumps(tool_input, ensure_ascii=False)
                             .replace(COMPANY.replace('"', '\\"'), "CTXG_COMPANY_A")
                             .replace("Петрова Алексея Ивановича", "CTXG_PERSON_1а").replace(PERSON, "CTXG_PERSON_1"))
    assert pre(tool, alias_input, project)[0] is None


def test_a_prompt_naming_an_entity_is_blocked(project, tcg_home):
    reply, rc, _ = hook("UserPromptSubmit", {"prompt": "напиши письмо Петрову"}, project)
    assert rc == 0 and reply["decision"] == "block"
    assert reply["reason"].startswith("tcg: blocked (entity-in-prompt)") and "CTXG_PERSON_1" in reply["reason"]
    no_value(reply["reason"])
    assert hook("UserPromptSubmit", {"prompt": "напиши письмо CTXG_PERSON_1у"}, project)[0] is None


# ------------------------------------------------------------------ PostToolUse: real → alias


def test_outputs_are_aliased_in_their_own_shape(project, tcg_home):
    edit = {"filePath": "/p/a.txt", "oldString": "x", "newString": f"для {PERSON}",
            "originalFile": f"Петрова нет\n{COMPANY}\n", "structuredPatch": [{"lines": [f"+для {PERSON}"]}],
            "userModified": False, "replaceAll": False}
    reply, rc, _ = post("Edit", edit, project)
    out = reply["hookSpecificOutput"]["updatedToolOutput"]
    assert rc == 0 and set(out) == set(edit) and out["userModified"] is False
    assert out["newString"] == "для CTXG_PERSON_1" and out["originalFile"] == "CTXG_PERSON_1а нет\nCTXG_COMPANY_A\n"
    no_value(json.dumps(out, ensure_ascii=False))
    ev = events(tcg_home)[-1]
    assert (ev["decision"], ev["reason"], ev["entities"], ev["masked"]) == ("sanitize", "entity-in-output", 4, 0)
    assert post("Bash", {"stdout": "nothing here", "stderr": ""}, project)[0] is None


def test_secrets_are_masked_before_names_are_aliased_as_the_station_does(project, tcg_home):
    """The order every surface uses (tcg_shell run-line for an agent: the strict masker,
    then the alias stream): the hook shows the model exactly what the station shows."""
    text = (f"contact: {PERSON}, {COMPANY}\n"
            f"deploy token {TOKEN}\n"
            f"db: postgres://Petrov:Qm9vQmFyQmF6MTIz@db.internal/crm\n"
            f"Петровка 38; петров день\n")
    path = project / "mixed.txt"
    path.write_text(text, encoding="utf-8")
    env = {**os.environ, "TCG_ACTOR": "agent"}
    env.pop("TCG_MEDIATED", None)
    station = subprocess.run([sys.executable, "-c", "import sys; from tcg.shell_entry import main; sys.exit(main())",
                              "run-line", "cat mixed.txt"], cwd=project, env=env, capture_output=True, timeout=120)
    assert station.returncode == 0, station.stderr.decode()
    reply, _, _ = post("Read", {"type": "text", "file": {"filePath": str(path), "content": text}}, project)
    shown = reply["hookSpecificOutput"]["updatedToolOutput"]["file"]["content"]
    assert shown == station.stdout.decode("utf-8")
    assert "<SECRET:github-pat" in shown and "CTXG_PERSON_1" in shown and "Петровка 38; петров день" in shown
    no_value(shown.replace("Петровка", ""))
    assert_no_secret_written(tcg_home, [TOKEN])
    for path in all_files_under(tcg_home):  # the registry (tcg-entities/) is the one place names live
        if STORE_DIR not in path.parts:
            assert PERSON.encode() not in path.read_bytes() and COMPANY.encode() not in path.read_bytes(), path


# ------------------------------------------------------------------ a damaged registry fails closed


def test_a_damaged_registry_fails_closed(project, tcg_home):
    store = Store(str(project))
    Path(store.path).write_text("{ not json", encoding="utf-8")
    for name in os.listdir(store.dir):  # the compiled files too: nothing stale to fall back on
        if name != "registry.json" and not name.endswith(".lock"):
            os.unlink(os.path.join(store.dir, name))
    kind, reason = decision(pre("Write", {"file_path": str(project / "a"), "content": "CTXG_PERSON_1"}, project)[0])
    assert kind == "deny" and reason.startswith("tcg: blocked (entity-registry-invalid)")
    kind, reason = decision(pre("WebSearch", {"query": "anything"}, project)[0])
    assert kind == "deny" and "entity-registry-invalid" in reason
    reply, rc, _ = post("Read", {"type": "text", "file": {"filePath": "/p/a", "content": f"from {PERSON}"}}, project)
    out = reply["hookSpecificOutput"]["updatedToolOutput"]
    assert rc == 0 and PERSON not in json.dumps(out, ensure_ascii=False) and out["file"]["content"].startswith(
        "[withheld by tcg")
    assert events(tcg_home)[-1]["reason"] == "entity-registry-invalid"
    text = hook("SessionStart", {"source": "resume"}, project)[0]["hookSpecificOutput"]["additionalContext"]
    assert "entity registry cannot be read" in text
    assert hook("UserPromptSubmit", {"prompt": "hello"}, project)[0]["decision"] == "block"


def test_a_read_without_a_registry_loads_no_entity_code(tmp_path):
    """PreToolUse on an ordinary Read, a project without a registry: a few stats."""
    data = json.dumps({"cwd": str(tmp_path), "tool_name": "Read", "tool_input": {"file_path": str(tmp_path / "a")}})
    code = ("import sys; from tcg.agents.claude import main; rc = main(['PreToolUse']); "
            "print(sorted(m for m in sys.modules if m.startswith(('tcg.entities.', 'tcg.inbound', 'tcg.guard.channels', 'tcg.guard.approval'))),"
            " file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-I", "-c", code], input=data.encode(), cwd=tmp_path,
                          capture_output=True, timeout=60)
    assert proc.stderr.decode().strip().splitlines()[-1] == "[]", proc.stderr.decode()
