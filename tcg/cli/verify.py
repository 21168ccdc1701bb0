"""`tcg verify`: canary entities through the real entry points, one PASS/FAIL each.

A throw-away project (a temporary directory with its own registry) gets two
canary entities — a person and a company whose name holds quotes — and a
canary secret. Then:
- the station (``tcg_shell run-line`` as an agent, a real shell and ``cat``)
  must print aliases and placeholders only;
- the MCP proxy (``tcg mcp-proxy`` in front of a stand-in server that answers
  with the canaries) must pass aliases only;
- Claude Code's hook entry (`tcg hook claude EVENT`, started as the generated
  settings start it) must give the glossary without values, alias a Read
  response, turn an Edit written with aliases back into the file's own bytes,
  ask about unknown or miscased aliases, refuse a secret placeholder, and escape
  a restored value for JSON, YAML and shell;
- the registry must be a protected path for an agent;
- no file tcg wrote (event log, caches) may hold a canary value.
The canary project's registry is removed afterwards. Nothing is printed but
check names and results.

It drives every surface from outside, as a user would, so it sits with the
command line above them all, not in tcg.entities.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass

import click

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
    return [sys.executable, "-I", "-c", "import sys; from tcg.shell_entry import main; sys.exit(main())"]


def _tcg() -> list[str]:
    return [sys.executable, "-I", "-m", "tcg"]


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
        checks += _station(proj, env, person.alias, company.alias)
        checks += _mcp(proj, env, person.alias)
        checks += _hooks(proj, env, person.alias, company.alias)
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


def _hook(event: str, payload: dict[str, object], proj: str, env: dict[str, str]) -> dict[str, object]:
    """Run `tcg hook claude EVENT` exactly as Claude Code runs it (the generated settings'
    exec form, the event's JSON on stdin, in the project); its reply's hookSpecificOutput
    ({} when it answered nothing)."""
    from tcg.agents.claude import hook_entry

    entry = hook_entry(sys.executable, event)
    data = {"session_id": "tcg-verify", "transcript_path": os.devnull, "cwd": proj,
            "permission_mode": "default", "hook_event_name": event, **payload}
    r = subprocess.run([str(entry["command"]), *entry["args"]],  # type: ignore[misc]
                       input=json.dumps(data).encode(), cwd=proj, env=env, capture_output=True, timeout=120)
    out = r.stdout.decode("utf-8", "replace").strip()
    reply = json.loads(out) if out else {}
    return reply.get("hookSpecificOutput") or {} if isinstance(reply, dict) else {}


def _pre(tool: str, tool_input: dict[str, object], proj: str, env: dict[str, str]) -> dict[str, object]:
    return _hook("PreToolUse", {"tool_name": tool, "tool_input": tool_input, "tool_use_id": "v"}, proj, env)


def _hooks(proj: str, env: dict[str, str], p_alias: str, c_alias: str) -> list[Check]:
    """The Claude Code hook entry (`tcg hook claude EVENT`) in the canary project."""
    checks = []
    raw = _corpus()
    path = os.path.join(proj, "canary.txt")  # written by _station, with these bytes
    start = _hook("SessionStart", {"source": "startup"}, proj, env).get("additionalContext")
    checks.append(Check("hooks: SessionStart glossary has aliases, not values",
                        isinstance(start, str) and c_alias in start and p_alias in start and not _leaks(start)))
    resp = {"type": "text", "file": {"filePath": path, "content": raw, "numLines": raw.count("\n"),
                                     "startLine": 1, "totalLines": raw.count("\n")}}
    masked = _hook("PostToolUse", {"tool_name": "Read", "tool_input": {"file_path": path}, "tool_response": resp,
                                   "tool_use_id": "v"}, proj, env).get("updatedToolOutput")
    shown = json.dumps(masked, ensure_ascii=False) if masked else ""
    checks.append(Check("hooks: Read response aliased, secret masked",
                        bool(masked) and p_alias in shown and "<SECRET:" in shown and not _leaks(shown)))
    # the model edits the second line, which it saw with aliases
    line = (masked or resp)["file"]["content"].splitlines()[1]  # type: ignore[index]
    new_line = line + f" Ответ {p_alias}у."
    got = _pre("Edit", {"file_path": path, "old_string": line, "new_string": new_line}, proj, env).get(
        "updatedInput")
    want_old = raw.splitlines()[1]
    ok = (isinstance(got, dict) and got.get("old_string") == want_old
          and got.get("new_string") == want_old + " Ответ Канареечкину Вениамину Остаповичу.")
    checks.append(Check("hooks: Edit with aliases writes the file's own bytes", ok))
    asked = [_pre("Write", {"file_path": os.path.join(proj, "a.txt"), "content": f"see {bad}"}, proj, env).get(
        "permissionDecision") == "ask" for bad in (c_alias + "B", c_alias.lower(), f"x{c_alias}y")]
    checks.append(Check("hooks: unknown, miscased and glued aliases are asked about", all(asked)))
    denied = _pre("Write", {"file_path": os.path.join(proj, "a.txt"),
                            "content": "key <SECRET:aws-access-key-id:0123abcd>"}, proj, env)
    checks.append(Check("hooks: a secret placeholder is never written back",
                        denied.get("permissionDecision") == "deny"))
    checks.append(_escaping(proj, env, c_alias))
    return checks


def _escaping(proj: str, env: dict[str, str], c_alias: str) -> Check:
    import shlex

    def restored(tool: str, tool_input: dict[str, object], field: str) -> str:
        got = _pre(tool, tool_input, proj, env).get("updatedInput")
        return str(got.get(field, "")) if isinstance(got, dict) else ""

    ok = True
    text = restored("Write", {"file_path": os.path.join(proj, "c.json"), "content": json.dumps({"name": c_alias})},
                    "content")
    ok &= bool(text) and json.loads(text) == {"name": COMPANY}
    line = restored("Bash", {"command": f"echo {c_alias} '{c_alias}' \"{c_alias}\""}, "command")
    ok &= bool(line) and shlex.split(line)[1:] == [COMPANY] * 3
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError:
        yaml = None
    if yaml is not None:
        text = restored("Write", {"file_path": os.path.join(proj, "c.yaml"),
                                  "content": f"a: {c_alias}\nb: \"{c_alias}\"\nc: '{c_alias}'\n"}, "content")
        ok &= bool(text) and yaml.safe_load(text) == dict.fromkeys("abc", COMPANY)
    return Check("hooks: restored values escaped for JSON, shell" + (", YAML" if yaml else ""), bool(ok))


def _protected(path: str, env: dict[str, str]) -> Check:
    from tcg.decide.line import evaluate_line
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


@click.command()
def verify() -> None:
    """Prove entity aliasing end to end (PASS/FAIL table; exit 1 on any FAIL)."""
    checks = run()
    click.echo(render(checks))
    if not all(c.ok for c in checks):
        raise click.exceptions.Exit(1)
