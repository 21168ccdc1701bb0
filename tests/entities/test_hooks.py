"""The transforms the Claude Code hooks adapter calls (pure functions)."""

from __future__ import annotations

import json

from tcg.entities.hooks import post_tool_use, pre_tool_use, session_start_context

FILE = ('{"client": "ПЕТРОВ", "supplier": "Рoмашка", "note": "Зорька \\"Рассвет\\""}\n'
        "Договор с ООО «Ромашка» подписал Петров А.И.\n"
        "Петровка 38\n")


def test_glossary_has_aliases_and_hints_only(ents):
    text = session_start_context(ents)
    assert "CTXG_PERSON_1 (person): hint for person" in text
    assert "CTXG_COMPANY_A (company)" in text
    for v in ("Петров", "Ромашк", "Сулейманов", "Зорька"):
        assert v not in text
    assert session_start_context(None) is None


def test_read_then_edit_twin_path(ents, tmp_path):
    """Read shows aliases; an Edit written with them changes the file's own bytes; the
    file on disk has real values; the tool responses have aliases only."""
    path = tmp_path / "data.json"
    path.write_text(FILE, encoding="utf-8")
    resp = {"type": "text", "file": {"filePath": str(path), "content": FILE, "numLines": 3}}
    shown, n = post_tool_use("Read", resp, ents)
    content = shown["file"]["content"]
    assert n == 5 and "Петров" not in content.replace("Петровка", "") and "машка" not in content
    assert content.splitlines()[0] == ('{"client": "CTXG_PERSON_1", "supplier": "CTXG_COMPANY_A", '
                                       '"note": "CTXG_COMPANY_B"}')
    # the model edits what it saw
    old = content.splitlines()[0]
    new = old.replace('"note"', '"owner": "CTXG_PERSON_2а", "note"')
    r = pre_tool_use("Edit", {"file_path": str(path), "old_string": old, "new_string": new,
                              "replace_all": False}, ents, read_file=lambda p: open(p).read())
    assert r.action == "update"
    assert set(r.tool_input) == {"file_path", "old_string", "new_string", "replace_all"}
    assert r.tool_input["old_string"] == FILE.splitlines()[0]  # the file's own bytes
    text = path.read_text(encoding="utf-8").replace(r.tool_input["old_string"], r.tool_input["new_string"], 1)
    path.write_text(text, encoding="utf-8")
    first = json.loads(text.splitlines()[0])
    assert first == {"client": "ПЕТРОВ", "supplier": "Рoмашка", "owner": "Сулейманова",
                     "note": 'Зорька "Рассвет"'}
    # what Edit/Write respond with goes back through PostToolUse
    shown, _ = post_tool_use("Edit", {"filePath": str(path), "oldString": r.tool_input["old_string"],
                                      "newString": r.tool_input["new_string"],
                                      "structuredPatch": [{"lines": [text.splitlines()[0]]}]}, ents)
    dump = json.dumps(shown, ensure_ascii=False)
    for v in ("ПЕТРОВ", "Рoмашка", "Сулейманова", "Зорька"):
        assert v not in dump


def test_write_bash_multiedit_notebook(ents, tmp_path):
    r = pre_tool_use("Write", {"file_path": "/p/x.yaml", "content": "owner: CTXG_COMPANY_B\n"}, ents)
    import yaml

    assert yaml.safe_load(r.tool_input["content"]) == {"owner": 'Зорька "Рассвет"'}
    r = pre_tool_use("Bash", {"command": "grep -rn CTXG_PERSON_1 . | wc -l", "timeout": 5}, ents)
    assert r.tool_input == {"command": "grep -rn 'Петров Алексей Иванович' . | wc -l", "timeout": 5}
    path = tmp_path / "m.txt"
    path.write_text("a Ромашка\nb Ромашка\n")
    r = pre_tool_use("MultiEdit", {"file_path": str(path), "edits": [
        {"old_string": "a CTXG_COMPANY_A", "new_string": "a CTXG_COMPANY_Aой"},
        {"old_string": "b CTXG_COMPANY_A", "new_string": "b CTXG_PERSON_3"}]}, ents,
        read_file=lambda p: open(p).read())
    assert r.tool_input["edits"] == [{"old_string": "a Ромашка", "new_string": "a Ромашкой"},
                                     {"old_string": "b Ромашка", "new_string": "b Дильноза"}]
    r = pre_tool_use("NotebookEdit", {"notebook_path": "/p/n.ipynb", "new_source": 'x = "CTXG_COMPANY_B"',
                                      "cell_type": "code"}, ents)
    assert r.tool_input["new_source"] == 'x = "Зорька \\"Рассвет\\""'
    r = pre_tool_use("Grep", {"pattern": "CTXG_COMPANY_B|foo", "path": "."}, ents)
    assert r.tool_input["pattern"] == 'Зорька\\ "Рассвет"|foo'
    r = pre_tool_use("Read", {"file_path": "/clients/CTXG_COMPANY_A/contract.md"}, ents)
    assert r.tool_input == {"file_path": "/clients/Ромашка/contract.md"}


def test_problems_ask_placeholders_deny_outbound_deny(ents):
    r = pre_tool_use("Write", {"file_path": "/p/a.txt", "content": "CTXG_COMPANY_AB"}, ents)
    assert r.action == "ask" and "CTXG_COMPANY_AB" in r.reason and r.tool_input is None
    r = pre_tool_use("Edit", {"file_path": "/p/a.txt", "old_string": "x",
                              "new_string": "key=<SECRET:aws-access-key-id:0123abcd>"}, ents)
    assert r.action == "deny"
    r = pre_tool_use("Edit", {"file_path": "/p/a.txt", "old_string": "x",
                              "new_string": "key=<SECRET:aws-access-key-id:0123abcd>"}, ents,
                     placeholders="keep")
    assert r.action == "unchanged"
    assert pre_tool_use("WebSearch", {"query": "Ромашка отзывы"}, ents).action == "deny"
    assert pre_tool_use("WebSearch", {"query": "CTXG_COMPANY_A"}, ents).action == "unchanged"
    assert pre_tool_use("mcp__db__query", {"sql": "select * where name='Петрова'"}, ents).action == "deny"
    assert pre_tool_use("Write", {"file_path": "/p/a", "content": "no aliases"}, ents).action == "unchanged"
    assert pre_tool_use("Write", {"file_path": "/p/a", "content": "CTXG_X_1"}, None).action == "ask"


def test_edit_around_a_secret(ents, tmp_path):
    """old_string copied from a masked Read finds its place; the secret stays in the file."""
    raw = "owner Петров\nkey AKIAZ7VRSQ2YRBX3GHKQ\n"

    def secrets(text):
        i = text.find("AKIA")
        return [(i, i + 20, "<SECRET:aws-access-key-id:0be303fe>")] if i >= 0 else []

    r = pre_tool_use("Edit", {"file_path": "/p/f", "old_string": "owner CTXG_PERSON_1\nkey <SECRET:aws-access-key-id:0be303fe>",
                              "new_string": "owner CTXG_PERSON_2\nkey <SECRET:aws-access-key-id:0be303fe>"},
                     ents, read_file=lambda p: raw, secret_spans=secrets)
    assert r.action == "deny"  # writing the placeholder would destroy the secret
    r = pre_tool_use("Edit", {"file_path": "/p/f", "old_string": "owner CTXG_PERSON_1",
                              "new_string": "owner CTXG_PERSON_2"},
                     ents, read_file=lambda p: raw, secret_spans=secrets)
    assert r.tool_input["old_string"] == "owner Петров" and r.tool_input["new_string"] == "owner Сулейманов"
