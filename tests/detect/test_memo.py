"""The start-up memo (tcg/detect/regex.py AnalysisMemo): a second process loads
the detector from it without re-parsing TOML or re-analysing regexes, finds the
same things, and ignores a memo that was tampered with."""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
from pathlib import Path

PROBE = r"""
import json, sys
from tcg.detect.engine import load_detector
from tcg.detect import rule as rulemod
calls = {"n": 0}
orig = rulemod.parse_rules_text
def counting(*a, **k):
    calls["n"] += 1
    return orig(*a, **k)
rulemod.parse_rules_text = counting
det = load_detector()
text = sys.stdin.read()
found = [(f.start, f.end, f.rule_id) for f in det.find(text)]
print(json.dumps({"parsed_files": calls["n"], "found": found, "max": det.max_match_len}))
"""

SAMPLE = "token ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8" + " and mail bob@corp-mail.io\n"


def _probe() -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE], input=SAMPLE, capture_output=True,
                         text=True, check=True, env=os.environ.copy(), timeout=300)
    return json.loads(out.stdout)


def _memo_file() -> Path:
    return Path(os.environ["TCG_HOME"]) / "cache" / "detect" / "analysis.memo"


def test_second_load_uses_memo_and_finds_the_same():
    first = _probe()
    assert first["found"], "sample must produce findings"
    assert _memo_file().exists()
    second = _probe()
    assert second["parsed_files"] == 0, "rules were re-parsed although the memo was valid"
    assert second["found"] == first["found"]
    assert second["max"] == first["max"]


def test_tampered_memo_is_ignored_and_rebuilt():
    first = _probe()
    path = _memo_file()
    mac, _, body = path.read_bytes().partition(b"\n")
    doc = marshal.loads(body)
    # shrink every remembered width: a forged memo must not be believed
    for key in doc["analysis"]:
        doc["analysis"][key][1] = 1
    path.write_bytes(mac + b"\n" + marshal.dumps(doc))
    again = _probe()
    assert again["parsed_files"] > 0, "a memo failing its MAC must not be used"
    assert again["max"] == first["max"]
    assert again["found"] == first["found"]


def test_a_changed_rule_file_is_never_read_from_a_stale_memo(tmp_path):
    """A memo that verifies is used without reading the rule files (the memo is bound to
    the code that wrote it, rule files included); editing a rule file makes it stale."""
    import shutil

    src = Path(__file__).resolve().parents[2] / "tcg"
    pkg = tmp_path / "src" / "tcg"
    shutil.copytree(src, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "PYTHONPATH": str(pkg.parent), "TCG_HOME": str(tmp_path / "home")}
    probe = PROBE.replace("det = load_detector()", "reads = {'n': 0}\n"
                          "orig_files = rulemod.builtin_rule_files\n"
                          "def counting_files():\n    reads['n'] += 1\n    return orig_files()\n"
                          "rulemod.builtin_rule_files = counting_files\n"
                          "det = load_detector()\ncalls['n'] += 1000 * reads['n']")

    def run() -> dict:
        out = subprocess.run([sys.executable, "-c", probe], input="token ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8\n",
                             capture_output=True, text=True, check=True, env=env, timeout=300,
                             cwd=tmp_path)  # not the checkout: its tcg would come first
        return json.loads(out.stdout)

    first = run()
    assert first["parsed_files"] > 1000 and first["found"]  # read and parsed
    assert run()["parsed_files"] == 0  # neither read nor parsed
    rules = sorted((pkg / "detect" / "rules").glob("*.toml"))
    target = next(p for p in rules if "github-pat-classic" in p.read_text())
    text = target.read_text()
    start = text.index('id = "github-pat-classic"')
    target.write_text(text[:start] + text[start:].replace("ghp_", "ghx_", 1).replace("ghp_", "ghx_"))
    edited = run()
    assert edited["parsed_files"] > 1000, "an edited rule file must not be read from the memo"
    assert edited["found"] == [], "the edited rule no longer matches the old prefix"
