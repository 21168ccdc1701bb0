"""`tcg verify`: canary entities through the real entry points, one PASS/FAIL each.

A throw-away project (a temporary directory with its own registry) gets two
canary entities — a person and a company whose name holds quotes — and a
canary secret. Then:
- the station (``tcg_shell run-line`` as an agent, a real shell and ``cat``)
  must print aliases and placeholders only;
- the MCP proxy (``tcg mcp-proxy`` in front of a stand-in server that answers
  with the canaries) must pass aliases only;
- the hook transforms must alias a Read response, turn an Edit written with
  aliases back into the file's own bytes, refuse unknown or miscased aliases and
  a secret placeholder, and escape a restored value for JSON, YAML and shell;
- the registry must be a protected path for an agent;
- no file tcg wrote (event log, caches) may hold a canary value.
The canary project's registry is removed afterwards. Nothing is printed but
check names and results.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass

PERSON = "Канареечкин Вениамин Остапович"
PERSON_FORMS = ("Канареечкин", "Канареечкина", "Канареечкину", "Канареечкиным", "Канареечкине",
                "Вениамина Остаповича Канареечкина", "В.О. Канареечкин")
NOT_PERSON = ("Канареечкинская", "Канареечкинский", "канареечкин")
COMPANY = 'Зорька "Рассвет"'
SECRET = "AKIAZ7VRSQ2YRBXKAN4R"  # shaped like an AWS key id, never a real one


@dataclass
class Check:
    name: str
    ok: bool
    detail: str = ""


def _tcg_shell() -> list[str]:
    return [sys.executable, "-c", "import sys; from tcg.shell_entry import main; sys.exit(main())"]


def _tcg() -> list[str]:
    return [sys.executable, "-m", "tcg"]


def _values() -> list[str]:
    return [PERSON, *PERSON_FORMS, COMPANY, "Зорька", "Рассвет", SECRET]


def _leaks(text: str) -> list[str]:
    """Which canaries appear in ``text`` (names of the canaries, not the values)."""
    import re

    found = []
    for i, v in enumerate(_values()):
        if re.search(r"(?<!\w)" + re.escape(v) + r"(?!\w)", text):
            found.append(f"canary#{i}")
    return found


def run(env: dict[str, str] | None = None) -> list[Check]:
    from tcg.entities.registry import Store, add_entity

    env = dict(os.environ if env is None else env)
    env.pop("TCG_PROJECT", None)
    checks: list[Check] = []
    tmp = tempfile.mkdtemp(prefix="tcg-verify-")
    proj = os.path.join(tmp, "project")
    os.makedirs(os.path.join(proj, ".git"))
    store = Store(proj)
    try:
        with store.locked() as reg:
            person, _ = add_entity(reg, PERSON, "person", "canary person")
            company, _ = add_entity(reg, COMPANY, "company", "canary company")
        checks.append(Check("registry: canaries registered", True,
                            f"{len(person.forms)}+{len(company.forms)} forms"))
        from tcg.entities.runtime import load_store

        ents = load_store(store)
        assert ents is not None
        checks += _station(proj, env, person.alias, company.alias)
        checks += _mcp(proj, env, person.alias)
        checks += _hooks(ents, person.alias, company.alias)
        checks.append(_protected(store.path, env))
        checks.append(_no_values_written(env))
    except Exception as exc:  # noqa: BLE001 - a crash is a FAIL, reported as such
        checks.append(Check("verify ran to the end", False, type(exc).__name__))
    finally:
        shutil.rmtree(store.dir, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)
    return checks


def _corpus() -> str:
    return (f"Договор: {PERSON}; подписал {PERSON_FORMS[6]}.\n"
            f"Письмо {PERSON_FORMS[2]} от компании {COMPANY}, копия {PERSON_FORMS[1]}.\n"
            f"улица {NOT_PERSON[0]}, {NOT_PERSON[1]} проезд, {NOT_PERSON[2]} день\n"
            f"aws_access_key_id = {SECRET}\n")


def _station(proj: str, env: dict[str, str], p_alias: str, c_alias: str) -> list[Check]:
    with open(os.path.join(proj, "canary.txt"), "w", encoding="utf-8") as fh:
        fh.write(_corpus())
    run_env = {**env, "TCG_ACTOR": "agent"}
    for k in ("TCG_MEDIATED", "TCG_MEDIATED_FDS"):
        run_env.pop(k, None)
    r = subprocess.run([*_tcg_shell(), "run-line", "cat canary.txt"], cwd=proj, env=run_env,
                       capture_output=True, timeout=120)
    out = r.stdout.decode("utf-8", "replace")
    leaks = _leaks(out)
    return [
        Check("station: agent output has aliases, not values", r.returncode == 0 and not leaks
              and p_alias in out and c_alias in out,
              f"exit {r.returncode}" + (f", leaked {', '.join(leaks)}" if leaks else "")),
        Check("station: look-alike words kept (-ская, -ский, lowercase)",
              all(w in out for w in NOT_PERSON)),
        Check("station: secret masked", "<SECRET:" in out and SECRET not in out),
    ]


_SERVER = r"""
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" in msg:
        text = sys.argv[1]
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"],
                          "result": {"content": [{"type": "text", "text": text}]}}), flush=True)
"""


def _mcp(proj: str, env: dict[str, str], p_alias: str) -> list[Check]:
    req = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "read", "arguments": {}}}) + "\n"
    r = subprocess.run([*_tcg(), "mcp-proxy", "--name", "canary", "--", sys.executable, "-c",
                        _SERVER, _corpus()], cwd=proj, env=env, input=req.encode(),
                       capture_output=True, timeout=120)
    out = r.stdout.decode("utf-8", "replace")
    try:
        text = json.loads(out.splitlines()[0])["result"]["content"][0]["text"]
    except (ValueError, KeyError, IndexError, TypeError):
        text = ""
    leaks = _leaks(out)
    return [Check("mcp-proxy: response has aliases, not values",
                  bool(text) and p_alias in text and not leaks,
                  f"exit {r.returncode}" + (f", leaked {', '.join(leaks)}" if leaks else ""))]


def _hooks(ents: object, p_alias: str, c_alias: str) -> list[Check]:
    from tcg.entities.hooks import post_tool_use, pre_tool_use

    checks = []
    raw = _corpus()
    resp = {"type": "text", "file": {"filePath": "/p/canary.txt", "content": raw}}
    masked, n = post_tool_use("Read", resp, ents)  # type: ignore[arg-type]
    shown = json.dumps(masked, ensure_ascii=False) if masked else ""
    checks.append(Check("hooks: Read response aliased", bool(n) and not _leaks(shown.replace(SECRET, ""))))
    # the model edits the second line, which it saw with aliases
    line = (masked or resp)["file"]["content"].splitlines()[1]  # type: ignore[index]
    new_line = line + f" Ответ {p_alias}у."
    r = pre_tool_use("Edit", {"file_path": "/p/canary.txt", "old_string": line, "new_string": new_line},
                     ents, read_file=lambda _p: raw)  # type: ignore[arg-type]
    want_old = raw.splitlines()[1]
    ok = (r.action == "update" and r.tool_input is not None
          and r.tool_input["old_string"] == want_old
          and r.tool_input["new_string"] == want_old + " Ответ Канареечкину Вениамину Остаповичу.")
    checks.append(Check("hooks: Edit with aliases writes the file's own bytes", ok))
    probs = []
    for bad in (c_alias + "B", c_alias.lower(), f"x{c_alias}y"):
        r = pre_tool_use("Write", {"file_path": "/p/a.txt", "content": f"see {bad}"}, ents)  # type: ignore[arg-type]
        probs.append(r.action == "ask")
    checks.append(Check("hooks: unknown, miscased and glued aliases are asked about", all(probs)))
    r = pre_tool_use("Write", {"file_path": "/p/a.txt", "content": "key <SECRET:aws-access-key-id:0123abcd>"},
                     ents)  # type: ignore[arg-type]
    checks.append(Check("hooks: a secret placeholder is never written back", r.action == "deny"))
    checks.append(_escaping(ents, c_alias))
    return checks


def _escaping(ents: object, c_alias: str) -> Check:
    import shlex

    from tcg.entities.hooks import pre_tool_use

    ok = True
    r = pre_tool_use("Write", {"file_path": "/p/c.json", "content": json.dumps({"name": c_alias})},
                     ents)  # type: ignore[arg-type]
    ok &= r.tool_input is not None and json.loads(str(r.tool_input["content"])) == {"name": COMPANY}
    r = pre_tool_use("Bash", {"command": f"echo {c_alias} '{c_alias}' \"{c_alias}\""}, ents)  # type: ignore[arg-type]
    ok &= r.tool_input is not None and shlex.split(str(r.tool_input["command"]))[1:] == [COMPANY] * 3
    try:
        import yaml
    except ImportError:
        yaml = None
    if yaml is not None:
        r = pre_tool_use("Write", {"file_path": "/p/c.yaml",
                                   "content": f"a: {c_alias}\nb: \"{c_alias}\"\nc: '{c_alias}'\n"},
                         ents)  # type: ignore[arg-type]
        ok &= r.tool_input is not None and yaml.safe_load(str(r.tool_input["content"])) == dict.fromkeys(
            "abc", COMPANY)
    return Check("hooks: restored values escaped for JSON, shell" + (", YAML" if yaml else ""), bool(ok))


def _protected(path: str, env: dict[str, str]) -> Check:
    from tcg.policy.engine import evaluate_line
    from tcg.policy.load import load_policy

    pol = load_policy()
    v = evaluate_line(pol, f"cat {path}", "agent", cwd=os.getcwd(), env=env)
    return Check("policy: an agent cannot read the registry", v.decision.value == "block",
                 v.reason)


def _no_values_written(env: dict[str, str]) -> Check:
    from tcg.entities.locate import STORE_DIR
    from tcg.paths import get_paths

    p = get_paths(env)
    bad = 0
    for root in (str(p.state), str(p.cache), str(p.config)):
        for dirpath, _dirnames, files in os.walk(root):
            if STORE_DIR in dirpath.split(os.sep):
                continue  # the registries: the one place values live
            for f in files:
                try:
                    with open(os.path.join(dirpath, f), "rb") as fh:
                        data = fh.read()
                except OSError:
                    continue
                if any(v.encode() in data for v in _values()):
                    bad += 1
    return Check("no canary value in any file tcg wrote", bad == 0, f"{bad} file(s)" if bad else "")


def render(checks: list[Check]) -> str:
    width = max(len(c.name) for c in checks)
    lines = [f"{'PASS' if c.ok else 'FAIL'}  {c.name:<{width}}  {c.detail}".rstrip() for c in checks]
    passed = sum(c.ok for c in checks)
    lines.append(f"{passed} passed, {len(checks) - passed} failed")
    return "\n".join(lines)
