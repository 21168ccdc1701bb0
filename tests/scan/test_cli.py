"""`tcg scan` end to end: formats, exit codes, baseline, event, and no value anywhere."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from tcg.cli import main
from tcg.events import iter_records
from tcg.paths import get_paths
from tests.helpers.leaks import assert_no_secret_written

from .gitutil import commit_file, fake_secrets, init_repo, remove_file

SECRETS = fake_secrets(11)
VALUES = list(SECRETS.values())
SCHEMA = json.loads((Path(__file__).parent / "sarif-2.1.0-subset.schema.json").read_text())


@pytest.fixture
def leaky(tmp_path: Path) -> Path:
    r = init_repo(tmp_path / "leaky repo")
    commit_file(r, "README.md", "# hi\n", "init")
    commit_file(r, "conf/app.cfg", "".join(f"K{i}={v}\n" for i, v in enumerate(VALUES)), "add")
    remove_file(r, "conf/app.cfg", "remove")
    (r / "dirty.txt").write_text(f"token {SECRETS['github-pat-classic']}\n")
    return r


def run(args: list[str], capsys) -> tuple[int, str, str]:
    rc = main(["scan", *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def assert_no_value(text: str) -> None:
    for v in VALUES:
        assert v not in text
        for i in range(0, len(v) - 12, 4):
            assert v[i : i + 12] not in text, "a slice of a planted secret was printed"


@pytest.mark.parametrize("fmt", ["text", "json", "jsonl", "sarif"])
def test_every_format_reports_findings_without_values(leaky, fmt, capsys, tcg_home):
    rc, out, err = run([str(leaky), "--format", fmt, "-j", "2"], capsys)
    assert rc == 1, err
    assert_no_value(out + err)
    if fmt == "text":
        assert err == ""  # stderr is not a terminal here: no progress line
        # the token committed in conf/app.cfg and left in dirty.txt is ONE secret, at its
        # first location (the commit that introduced it), with where else it is
        assert "conf/app.cfg:1:4: github-pat-classic (secret) in commit " in out
        assert "— 2 occurrence(s) in 2 blob(s)/file(s), 2 path(s)" in out
        assert "dirty.txt:1:7" not in out
        assert "by rule:" in out and "github-pat-classic  1 secret(s) in 2 place(s)" in out
        assert out.strip().splitlines()[-1].startswith("tcg scan: findings — 3 secret(s) in 4 place(s)")
    elif fmt == "json":
        doc = json.loads(out)
        assert doc["status"] == "findings" and doc["finding_count"] == 3 and doc["occurrences"] == 4
        assert {f["rule_id"] for f in doc["findings"]} == set(SECRETS)
        f = next(f for f in doc["findings"] if f["rule_id"] == "github-pat-classic")
        assert f["path"] == "conf/app.cfg" and f["commit"] and f["source"] == "history"
        assert len(f["hash"]) == 16 and (f["occurrences"], f["blobs"], f["paths"]) == (2, 2, 2)
        assert "locations" not in f
    elif fmt == "jsonl":
        lines = [json.loads(x) for x in out.splitlines()]
        assert [x["type"] for x in lines] == ["finding"] * 3 + ["summary"]
        assert lines[-1]["counts_by_rule"]["github-pat-classic"] == 1
        assert lines[-1]["occurrences_by_rule"]["github-pat-classic"] == 2
    else:
        doc = json.loads(out)
        jsonschema.Draft7Validator(SCHEMA).validate(doc)
        results = doc["runs"][0]["results"]
        assert len(results) == 3  # one result per distinct secret
        rules = [r["id"] for r in doc["runs"][0]["tool"]["driver"]["rules"]]
        assert all(rules[r["ruleIndex"]] == r["ruleId"] for r in results)
        loc = results[0]["locations"][0]["physicalLocation"]
        assert loc["region"]["startLine"] >= 1 and loc["artifactLocation"]["uriBaseId"] == "TARGET0"
        gh = next(r for r in results if r["ruleId"] == "github-pat-classic")
        assert gh["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "conf/app.cfg"
        related = gh["relatedLocations"]
        assert [x["physicalLocation"]["artifactLocation"]["uri"] for x in related] == ["dirty.txt"]
        assert gh["properties"]["occurrences"] == 2
    # the event log and everything else tcg wrote
    assert_no_secret_written(tcg_home, VALUES)
    recs = [r for r in iter_records(get_paths().events_file) if r["event"] == "scan_completed"]
    assert len(recs) == 1
    assert recs[0]["status"] == "findings" and recs[0]["findings"] == 3
    assert recs[0]["occurrences"] == 4
    assert recs[0]["policy"]["fingerprint"]


def test_exit_codes_clean_error_partial(tmp_path, capsys):
    r = init_repo(tmp_path / "clean")
    for i in range(3):
        commit_file(r, f"f{i}.txt", f"nothing here {i}\n", f"c{i}")
    assert run([str(r)], capsys)[0] == 0
    rc, out, err = run([str(r), "--max-objects", "1"], capsys)
    assert rc == 3 and "PARTIAL" in out
    rc, out, err = run([str(r), "--max-objects", "1", "--format", "json"], capsys)
    assert rc == 3 and json.loads(out)["status"] == "partial" and "PARTIAL" in err
    rc, out, err = run([str(tmp_path / "missing")], capsys)
    assert rc == 2 and "no such file" in out
    assert run([str(r), "--format", "xml"], capsys)[0] == 2  # usage error


def test_findings_win_over_partial(leaky, capsys):
    rc, out, _ = run([str(leaky), "--max-objects", "2"], capsys)
    assert rc == 1 and "PARTIAL" in out


def test_baseline_round_trip(leaky, tmp_path, capsys):
    base = tmp_path / "baseline.json"
    rc, _, _ = run([str(leaky), "--write-baseline", str(base)], capsys)
    assert rc == 1
    assert_no_value(base.read_text())
    rc, out, _ = run([str(leaky), "--baseline", str(base)], capsys)
    assert rc == 0 and "suppressed 0 inline + 3 baseline" in out
    # a new secret is still reported
    (leaky / "new.txt").write_text(f"{SECRETS['aws-access-key-id'][:-2]}ZZ\n")
    rc, out, _ = run([str(leaky), "--baseline", str(base)], capsys)
    assert rc == 1 and "new.txt" in out
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    assert run([str(leaky), "--baseline", str(bad)], capsys)[0] == 2


def test_progress_only_when_enabled_and_after_the_delay(capsys):
    from tcg.cli.scan import Progress

    stats = {"blobs_scanned": 3, "files_scanned": 1, "bytes_scanned": 2_000_000}
    Progress(enabled=False, delay=0)(stats)
    slow = Progress(enabled=True, delay=3600)
    slow(stats)
    slow.done()
    assert capsys.readouterr().err == ""
    quick = Progress(enabled=True, delay=0, every=0)
    quick(stats)
    quick.done()
    err = capsys.readouterr().err
    assert "3 blobs, 1 files, 2.0 MB" in err and err.endswith("\r\033[K")


def test_broken_policy_is_an_error_not_findings(tmp_path, monkeypatch, capsys):
    bad = tmp_path / "policy.toml"
    bad.write_text("[scan\n")
    monkeypatch.setenv("TCG_POLICY", str(bad))
    rc, _, err = run([str(tmp_path)], capsys)
    assert rc == 2 and "policy.toml" in err


def test_all_occurrences_lists_every_place(leaky, capsys):
    rc, out, _ = run([str(leaky), "--all-occurrences"], capsys)
    assert rc == 1
    lines = out.splitlines()
    first = next(i for i, x in enumerate(lines) if x.startswith("conf/app.cfg:1:4: github-pat-classic"))
    assert lines[first + 1] == "    also dirty.txt:1:7 in working tree"
    rc, out, _ = run([str(leaky), "--all-occurrences", "--format", "json"], capsys)
    doc = json.loads(out)
    for f in doc["findings"]:
        assert len(f["locations"]) == f["occurrences"]
        assert f["locations"][0]["path"] == f["path"] and f["locations"][0]["line"] == f["line"]
    gh = next(f for f in doc["findings"] if f["rule_id"] == "github-pat-classic")
    assert [loc["source"] for loc in gh["locations"]] == ["history", "worktree"]
    assert_no_value(out)


def test_one_grammar_whichever_entry_parses(leaky, capsys):
    """`tcg scan` parses its arguments once, in tcg.scan.command (no click); the click
    command only renders --help and hands anything else to the same function."""
    from tcg.cli.app import cli
    from tcg.errors import run_with_error_handler
    from tcg.scan.command import parse_args

    def through_click(args: list[str]) -> tuple[int, str, str]:
        rc = run_with_error_handler(lambda: cli.main(args=["scan", *args], prog_name="tcg", standalone_mode=False))
        out = capsys.readouterr()
        return rc, out.out, out.err

    assert parse_args([str(leaky), "-j1"])["jobs"] == 1  # click's combined short form
    assert parse_args(["--no-history", "--", "-odd"]) == {**parse_args([]), "history": False, "paths": ["-odd"]}
    for bad in (["a", "b", "c", "--bogus"], ["--format", "xml"], ["--jobs", "0"], ["--max-bytes"]):
        rc, out, err = run(bad, capsys)
        assert (rc, out) == (2, "") and err.startswith("tcg: ") and "hint:" in err, (bad, err)
        assert through_click(bad) == (rc, out, err)
    fast = run([str(leaky), "--format", "json", "--jobs", "1"], capsys)
    slow = through_click([str(leaky), "--format", "json", "-j1"])
    strip = lambda d: {k: v for k, v in json.loads(d).items() if k != "duration_s"}  # noqa: E731
    assert fast[0] == slow[0] == 1 and strip(fast[1]) == strip(slow[1])


def test_the_event_actor_follows_the_one_actor_rule(tmp_path, monkeypatch, capsys, tcg_home):
    """An agent the launcher marked with TCG_AGENT only is an agent here too, as for
    every other surface (tcg.events.actor_from_env)."""
    r = init_repo(tmp_path / "clean")
    commit_file(r, "a.txt", "nothing\n", "c0")
    monkeypatch.delenv("TCG_ACTOR", raising=False)
    monkeypatch.setenv("TCG_AGENT", "claude")
    assert run([str(r)], capsys)[0] == 0
    recs = [x for x in iter_records(get_paths().events_file) if x["event"] == "scan_completed"]
    assert [x["actor"] for x in recs] == ["agent"]
