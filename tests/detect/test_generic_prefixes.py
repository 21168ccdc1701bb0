"""Secret assignments are found wherever a tool or a file format puts them on a line: after
grep's ``path:line:``, a diff's ``+``/``-``, a mail/markdown quote ``> ``, ``export``/``set``,
YAML indentation and list dashes, and as quoted JSON/YAML keys. A prose prefix (a log line's
``Using key=…``) is not an assignment and stays out: the trade documented in docs/rules.md."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcg.detect.engine import load_detector

ASSIGNMENTS = [
    ("DB_PASSWORD=pQ7vNw2sLx9k", "generic-password-env"),
    ("DB_PASSWORD=quietmaplehorse", "generic-password-env"),
    ("API_TOKEN=tTIRDpSLIsn1infL60t0Lw3EOSQ17b9x", "generic-secret-env"),
    ("STORAGE_KEY=23fec326ee2be117d060efe8eb1426085b31187b", "generic-key-env"),
]
PREFIXES = ["", "./.env:6:", "config/.env.prod:12:", ".env:", "+", "-", " ", "> ", ">> ",
            "export ", "+export ", "  - ", "\t", "set ", "./a/b.env-3-"]


@pytest.fixture(scope="module")
def det():
    return load_detector()


def _secret_ids(det, text: str) -> set[str]:
    return {f.rule_id for f in det.find(text) if f.category == "secret"}


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize(("line", "rule"), ASSIGNMENTS)
def test_assignment_found_after_structural_prefix(det, prefix: str, line: str, rule: str) -> None:
    text = f"first line\n{prefix}{line}\nlast line\n"
    found = [f for f in det.find(text) if f.category == "secret"]
    value = line.split("=", 1)[1]
    assert any(text[f.start:f.end] == value for f in found), (prefix, line, found)
    assert rule in {f.rule_id for f in found}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(PREFIXES), min_size=1, max_size=3),
       st.sampled_from(ASSIGNMENTS))
def test_stacked_prefixes(det, prefixes: list[str], assignment: tuple[str, str]) -> None:
    line, _rule = assignment
    text = "".join(prefixes) + line + "\n"
    value = line.split("=", 1)[1]
    assert any(text[f.start:f.end] == value for f in det.find(text) if f.category == "secret")


@pytest.mark.parametrize("text", [
    '  "DB_PASSWORD": "pQ7vNw2sLx9k",',
    "db:\n  password: pQ7vNw2sLx9k\n",
    "+  api_token: tTIRDpSLIsn1infL60t0Lw3EOSQ17b9x\n",
    "{ \"AccountKey\", \"C0cJcTZTiFscO8VLxq7K8OBEaNTxm2lEibRjgoPI\" }",
])
def test_yaml_and_json_keys(det, text: str) -> None:
    assert _secret_ids(det, text)


@pytest.mark.parametrize("text", [
    "[DEBUG] Using key=m33mn9of4iik4CXX7kSMnJv7k337YIlFzQDWoKnW3ZiW",  # prose, not an assignment
    "DB_PASSWORD=abcd1234abcd1234",  # a typed placeholder
    "API_TOKEN=${API_TOKEN}",
    "secret: my-app-tls-secret",
])
def test_not_assignments_of_secrets(det, text: str) -> None:
    assert not _secret_ids(det, text)


def test_decorated_lines_do_not_backtrack_without_end():
    """The structural prefix is written so that no line makes ``re`` try its splits one by
    one: runs of spaces, dashes, quote marks and colons of any length finish (an earlier
    form took seconds on one 90 KB blob and would never end on a longer line). Run in a
    child process with a generous timeout; a backtracking blow-up never finishes."""
    import subprocess
    import sys

    code = (
        "from tcg.detect.engine import load_detector\n"
        "d = load_detector()\n"
        "lines = [' ' * 5000 + 'x', '-' * 5000 + 'x', '> ' * 3000 + 'x', 'a:' * 3000 + 'x',\n"
        "         ' - ' * 2000 + 'PASSWORD x', 'k-1-' * 2000 + 'TOKEN', '+-*> \\t' * 1500 + 'key=',\n"
        "         ('x' * 150 + ':') * 40 + 'secret=v']\n"
        "for line in lines:\n"
        "    d.find((line + '\\n') * 20)\n"
        "print('ok')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.stdout.strip() == "ok", proc.stderr
