"""The registry: file modes, locking, aliases never reused, values never printed, protected."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading

import pytest

from tcg.entities.registry import RegistryError, Store, add_entity, letters, remove_entity


def run(*args, input=None, env=None):
    """The real `tcg` command (its error handler, exit codes, stdout and stderr)."""
    r = subprocess.run([sys.executable, "-m", "tcg", *args], input=(input or "").encode(),
                       capture_output=True, env={**os.environ, **(env or {})}, timeout=120)
    return r.returncode, (r.stdout + r.stderr).decode()


def test_add_list_remove_never_prints_values(project):
    code, out = run("entity", "add", "company", "--hint", "supplier", input="Газпромнефть\n")
    assert code == 0 and out.startswith("CTXG_COMPANY_C ")
    code, out = run("entity", "list")
    assert code == 0 and "CTXG_COMPANY_C" in out and "supplier" in out
    code, js = run("entity", "list", "--json")
    rows = [json.loads(line) for line in js.splitlines()]
    assert {r["alias"] for r in rows} >= {"CTXG_PERSON_1", "CTXG_COMPANY_C"}
    assert all(len(r["hash"]) == 8 for r in rows)
    for value in ("Газпромнефть", "Петров", "Ромашка", "Сулейманов"):
        assert value not in out and value not in js
    code, out = run("entity", "remove", "CTXG_COMPANY_C")
    assert code == 0 and "Газпромнефть" not in out
    # never reused: the next company gets a new letter
    code, out = run("entity", "add", "company", input="Газпромнефть\n")
    assert out.startswith("CTXG_COMPANY_D ")


def test_errors_are_one_line_with_a_hint(project):
    for args, value in ((("entity", "add", "company"), "Ромашка\n"),
                        (("entity", "add", "company"), "CTXG_COMPANY_A\n"),
                        (("entity", "remove", "CTXG_COMPANY_Z"), None)):
        code, out = run(*args, input=value)
        assert code == 1
        lines = out.strip().splitlines()
        assert len(lines) == 2 and lines[0].startswith("tcg: ") and lines[1].startswith("hint: ")
        assert "Ромашка" not in out


def test_agent_may_not_remove(project):
    code, _ = run("entity", "remove", "CTXG_COMPANY_A", env={"TCG_ACTOR": "agent"})
    assert code == 1
    assert Store(str(project)).load().by_alias("CTXG_COMPANY_A") is not None


def test_modes_and_atomic_files(project):
    store = Store(str(project))
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(store.dir).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(os.path.dirname(store.dir)).st_mode) == 0o700
    assert not [n for n in os.listdir(store.dir) if n.endswith(".tmp")]


def test_concurrent_adds_lose_nothing(project):
    names = [f"Компания{letters(i)}ов" for i in range(1, 9)]

    def add(v):
        with Store(str(project)).locked() as reg:
            add_entity(reg, v, "company", "", decline=False)

    threads = [threading.Thread(target=add, args=(v,)) for v in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    reg = Store(str(project)).load()
    aliases = [e.alias for e in reg.entities]
    assert len(aliases) == len(set(aliases)) == 6 + len(names)


def test_damaged_registry_is_an_error_not_empty(project):
    store = Store(str(project))
    with open(store.path, "w") as fh:
        fh.write("{not json")
    with pytest.raises(RegistryError):
        store.load()
    from tcg.entities.runtime import load

    with pytest.raises(RegistryError):
        load(str(project))


def test_alias_letters():
    assert [letters(n) for n in (1, 26, 27, 28, 52, 53)] == ["A", "Z", "AA", "AB", "AZ", "BA"]


def test_remove_unknown_and_retired(reg):
    import copy

    r = copy.deepcopy(reg)
    remove_entity(r, "CTXG_PERSON_2")
    with pytest.raises(RegistryError) as exc:
        remove_entity(r, "CTXG_PERSON_2")
    assert "removed before" in (exc.value.hint or "")
    assert r.next_alias("person") == "CTXG_PERSON_5"


def test_an_agent_cannot_read_the_registry(project):
    from tcg.decide.line import evaluate_line
    from tcg.policy.load import load_policy

    store = Store(str(project))
    pol = load_policy()
    for line in (f"cat {store.path}", f"grep -r Ромашка {os.path.dirname(store.dir)}",
                 f"cp {store.path} /tmp/x", f"less {store.dir}/entities.json"):
        v = evaluate_line(pol, line, "agent", cwd=str(project), env=dict(os.environ))
        assert v.decision.value == "block", line
    v = evaluate_line(pol, f"echo x > {store.path}", "agent", cwd=str(project), env=dict(os.environ))
    assert v.decision.value == "block"
