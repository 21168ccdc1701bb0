"""docs/events.md lists exactly the fields the code records for each event type.

The code is read statically (ast): every call that names an event type as its first
argument (``EventLog().emit("scan_completed", status=…)``, the surfaces' own
``_emit("guard_gc", …)`` wrappers), the calls of the few wrappers that fix the event
type themselves (WRAPPERS), and the string keys of the dicts that are spread into a
record (SPREAD). Each event's section in docs/events.md ends with a ``**Fields:**``
paragraph;
a field recorded but not listed fails, and so does a listed field no code records.
"""

from __future__ import annotations

import ast
import functools
import re
from collections import defaultdict
from pathlib import Path

import pytest

from tcg.events import EVENT_TYPES

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "events.md"
# Every record has these (the "Common fields" table); the rest is event-specific.
COMMON = {"v", "ts", "event", "surface", "actor", "decision", "reason", "rules", "policy", "session"}

# (directory or file, callee name, event type): calls of a wrapper that fixes the type;
# their keyword arguments are that event's fields.
WRAPPERS = [
    ("tcg/runner", "record", "command_decision"),  # Station.record
    ("tcg/agents", "emit", "hook_decision"),  # HookContext.emit(actor, decision, …)
    ("tcg/launcher/launch.py", "emit", "launch_gate"),
    ("tcg/cli/entity.py", "_event", "entity_registry_changed"),
    ("tcg/agents/adapter.py", "record_policy_error", "policy_error"),
]
# (file, functions, event types): string keys of the dict literals and of
# ``fields["key"] =`` / ``guard_fields["key"] =`` in those functions go into those events (fields built as a dict, then spread).
SPREAD = [
    ("tcg/runner/station.py", ("_approved", "prepare", "mediate"), ("command_decision",)),  # guard_fields, sandbox
    ("tcg/runner/session_decide.py", ("answer",), ("command_decision",)),
    ("tcg/agents/adapter.py", ("pre_tool",), ("hook_decision",)),
    ("tcg/launcher/launch.py", ("launch",), ("launch_gate",)),
    ("tcg/launcher/gate.py", ("fields",), ("launch_gate",)),
    ("tcg/inbound/gate.py", ("event_fields",), ("inbound_flagged",)),
    ("tcg/mcp/proxy.py", ("__init__",), ("mcp_session_status",)),  # McpSession.counts
]
# Keyword arguments a wrapper adds to every event it writes: (file, wrapper, field, types).
WRAPPER_ADDS = [
    ("tcg/clipboard/watcher.py", "_emit", "backend",
     ("clipboard_masked", "clipboard_partially_inspected", "inbound_flagged")),
    ("tcg/mcp/proxy.py", "emit", "name",
     ("mcp_session_status", "mcp_request_blocked", "mcp_response_masked", "inbound_flagged")),
]


def _callee(node: ast.Call) -> str | None:
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


def _dict_keys(fn: ast.AST) -> set[str]:
    keys: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Dict):
            keys |= {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if (isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Constant)
                        and ast.unparse(t.value).split(".")[-1] in ("fields", "guard_fields")):
                    keys.add(t.slice.value)
    return keys


@functools.cache
def recorded_fields() -> dict[str, set[str]]:
    fields: dict[str, set[str]] = defaultdict(set)
    for path in sorted((ROOT / "tcg").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            kind = None
            first = node.args[0] if node.args else None
            if isinstance(first, ast.Constant) and first.value in EVENT_TYPES:
                kind = first.value
            else:
                for where, name, event in WRAPPERS:
                    if rel.startswith(where) and _callee(node) == name:
                        if name == "emit" and where == "tcg/agents" and not (
                                isinstance(first, ast.Constant) and first.value in ("agent", "human")):
                            continue
                        kind = event
            if kind is not None:
                fields[kind] |= {kw.arg for kw in node.keywords if kw.arg}
        for where, fn_names, kinds in SPREAD:
            if rel != where:
                continue
            fns = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                   and n.name in fn_names]
            assert len({fn.name for fn in fns}) == len(fn_names), f"{where}: update SPREAD"
            for fn in fns:
                for kind in kinds:
                    fields[kind] |= _dict_keys(fn)
    for where, fn_name, field, kinds in WRAPPER_ADDS:
        text = (ROOT / where).read_text(encoding="utf-8")
        assert re.search(rf"def {fn_name}\(.*?{field}=", text, re.S), f"{where}: update WRAPPER_ADDS"
        for kind in kinds:
            fields[kind].add(field)
    return {k: v - COMMON for k, v in fields.items()}


@functools.cache
def documented_fields() -> dict[str, set[str]]:
    text = DOCS.read_text(encoding="utf-8")
    out: dict[str, set[str]] = {}
    for section in re.split(r"^### ", text, flags=re.M)[1:]:
        name = section.split("\n", 1)[0].strip()
        lists = re.findall(r"^\*\*Fields:\*\* (.*?)(?:\n\n|\Z)", section, re.M | re.S)
        assert len(lists) == 1, f"docs/events.md: '### {name}' needs one '**Fields:**' paragraph"
        out[name] = set(re.findall(r"`([a-z0-9_]+)`", lists[0]))
    return out




@pytest.mark.parametrize("event", sorted(EVENT_TYPES))
def test_every_recorded_field_is_documented(event):
    missing = sorted(recorded_fields().get(event, set()) - documented_fields().get(event, set()))
    assert missing == [], f"docs/events.md '### {event}': add {missing} to its **Fields:** list"


@pytest.mark.parametrize("event", sorted(EVENT_TYPES))
def test_every_documented_field_is_recorded(event):
    stray = sorted(documented_fields().get(event, set()) - recorded_fields().get(event, set()))
    assert stray == [], f"docs/events.md '### {event}' lists fields no code records: {stray}"


def test_scan_finds_the_fields_of_a_known_call():
    # The scan itself must see through the shapes used above (a check that it can fail).
    assert {"status", "findings", "duration_ms"} <= recorded_fields()["scan_completed"]
    assert {"exit_code", "command_hash", "sandbox", "txid", "session_request"} <= recorded_fields()["command_decision"]
    assert {"tool", "detail", "agent", "hook_event"} <= recorded_fields()["hook_decision"]
