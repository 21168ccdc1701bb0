"""bench/rule_real_text.py, the check a boundary change gets against real text (docs/rules.md,
"Word boundaries"): it names the rule whose findings differ and where, and never the value."""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import rule_real_text  # noqa: E402

from tcg.detect.rule import builtin_rule_files  # noqa: E402

IAM = "AIDA" + "QX7RZ2M4KD3PLW5T"  # an IAM unique-id shape, glued into a word below
KEPT = "ACCA)[A-Z2-7]{16})\\b'''"


def _rules(tmp_path: Path, drop_iam_boundary: bool) -> Path:
    """The packaged rule files in a directory of their own, the IAM rule's boundary dropped or not."""
    rules = tmp_path / "rules"
    rules.mkdir()
    for name, text in builtin_rule_files():
        if drop_iam_boundary:
            text = text.replace(KEPT, "ACCA)[A-Z2-7]{16})'''")
        (rules / name).write_text(text, encoding="utf-8")
    return rules


def test_a_dropped_boundary_shows_as_findings_of_that_rule_only(tmp_path, capsys):
    rules = _rules(tmp_path, drop_iam_boundary=True)
    assert KEPT not in "".join(p.read_text() for p in rules.glob("*.toml"))
    root = tmp_path / "text"
    root.mkdir()
    (root / "names.txt").write_text(f"ARABIC{IAM}ALIF\n", encoding="ascii")
    (root / "link").symlink_to(root / "names.txt")  # scanned once, not through the link
    shutil.copy(root / "names.txt", root / "copy.txt")
    os.link(root / "names.txt", root / "hard.txt")  # one file, two names: scanned once
    assert rule_real_text.main(["--rules", str(rules), "--root", str(root), "--show", "5"]) == 0
    out = capsys.readouterr().out
    assert "only with the packaged rules: 0" in out
    assert f"only with {rules}: 2" in out
    assert "aws-iam-unique-id" in out and out.count("aws-iam-unique-id ") == 1
    assert f"{root / 'names.txt'}:6" in out and f"{root / 'copy.txt'}:6" in out
    assert IAM not in out and IAM[4:] not in out


def test_the_same_rules_differ_nowhere(tmp_path, capsys):
    rules = _rules(tmp_path, drop_iam_boundary=False)
    root = tmp_path / "text"
    root.mkdir()
    (root / "a.env").write_text("GITHUB_TOKEN=ghp_" + "R7kQm2Xz9LpW4vNc8TyB3hJd6Fs1Ga5Ue0Yi\n")
    assert rule_real_text.main(["--rules", str(rules), "--root", str(root)]) == 0
    out = capsys.readouterr().out
    assert "findings: packaged rules 1," in out and out.endswith(": 0\n")
    assert "ghp_" not in out


def test_a_token_in_a_file_name_is_not_printed(tmp_path, capsys):
    """Real text names files after what they hold (``backup_ghp_….tar``): places are printed
    with the packaged rules' findings masked, the path's too."""
    rules = _rules(tmp_path, drop_iam_boundary=True)
    root = tmp_path / "text"
    root.mkdir()
    ghp = "ghp_" + "R7kQm2Xz9LpW4vNc8TyB3hJd6Fs1Ga5Ue0Yi"
    (root / f"backup_{ghp}.txt").write_text(f"ARABIC{IAM}ALIF\n", encoding="ascii")
    assert rule_real_text.main(["--rules", str(rules), "--root", str(root), "--show", "5"]) == 0
    out = capsys.readouterr().out
    assert f"only with {rules}: 1" in out
    assert re.search(r"backup_<SECRET:[^>]+>\.txt:6\n", out)
    assert ghp[4:12] not in out and IAM not in out


def test_a_broken_rule_file_ends_the_run_with_its_message(tmp_path, capsys):
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "bad.toml").write_text('[[rule]]\nid = "x"\nregex = "("\n', encoding="utf-8")
    with pytest.raises(SystemExit) as exc:
        rule_real_text.main(["--rules", str(rules), "--root", str(tmp_path)])
    assert exc.value.code == 2
    assert "bad.toml" in capsys.readouterr().err
