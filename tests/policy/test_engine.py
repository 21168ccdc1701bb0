"""The evaluation engine beyond the table: the filesystem (globs, cwd, tcg's own
files), policy data, fail-closed errors, no leaks, and `tcg check` / `tcg_shell check`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tcg.decide.line as engine
from tcg.cli import main as tcg_main
from tcg.cli.check import check_main
from tcg.decide.line import evaluate_line
from tcg.errors import PolicyError
from tcg.paths import get_paths
from tcg.policy.load import Policy, load_policy
from tcg.policy.model import Decision
from tests.helpers.leaks import assert_no_secret_written


@pytest.fixture
def policy():
    return load_policy(include_repo=False)


def decide(policy, line, actor="agent", **kw):
    kw.setdefault("env", os.environ)
    v = evaluate_line(policy, line, actor, **kw)
    return v.decision.value, v.reason


# --------------------------------------------------------------- globs and cwd


def test_globs_expand_against_cwd(policy, tmp_path):
    (tmp_path / "README.md").write_text("x")
    (tmp_path / "notes.txt").write_text("x")
    assert decide(policy, "cat *", cwd=str(tmp_path)) == ("allow", "allowed")
    assert decide(policy, "cat .e*", cwd=str(tmp_path)) == ("allow", "allowed")  # no match: nothing read
    (tmp_path / ".env").write_text("x")
    (tmp_path / "server.pem").write_text("x")
    assert decide(policy, "cat .e*", cwd=str(tmp_path)) == ("block", "secret-store-read")
    assert decide(policy, "cat *", cwd=str(tmp_path)) == ("block", "secret-store-read")
    assert decide(policy, "cat *.md", cwd=str(tmp_path)) == ("allow", "allowed")
    # without a cwd the same glob is judged by what it could match
    assert decide(policy, "cat *") == ("block", "unresolved-path")
    assert decide(policy, "cat *.md") == ("allow", "allowed")


def test_cd_changes_where_relative_paths_point(policy, tmp_path):
    home = os.environ["HOME"]
    assert decide(policy, "cd ~/.aws && cat config", cwd=str(tmp_path)) == ("block", "secret-store-read")
    assert decide(policy, "cat config", cwd=f"{home}/.aws") == ("block", "secret-store-read")
    assert decide(policy, "cd /tmp && cat config", cwd=f"{home}/.aws") == ("allow", "allowed")


def test_self_protection_follows_cwd_and_tcg_home(policy, tcg_home):
    cfg = tcg_home / "config"
    assert decide(policy, "echo x > policy.toml", cwd=str(cfg)) == ("block", "self-protection")
    assert decide(policy, "rm -rf ../state", cwd=str(cfg)) == ("block", "self-protection")
    assert decide(policy, f"rm -rf {tcg_home}", actor="human") == ("block", "self-protection")
    assert decide(policy, "rm -rf $TCG_HOME") == ("block", "self-protection")
    assert decide(policy, "cat policy.toml", cwd=str(cfg)) == ("allow", "allowed")
    assert decide(policy, "tail -f state/events.jsonl", cwd=str(tcg_home)) == ("allow", "allowed")
    assert decide(policy, "cat state/key", cwd=str(tcg_home)) == ("block", "self-protection")


def test_self_protection_without_tcg_home_uses_platform_dirs(policy, monkeypatch):
    monkeypatch.delenv("TCG_HOME")
    paths = get_paths()
    pol = load_policy(include_repo=False)
    target = paths.config / "policy.toml"
    assert decide(pol, f"echo x >> {target}") == ("block", "self-protection")
    assert decide(pol, f"rm -r {paths.state}") == ("block", "self-protection")


def test_tcg_policy_file_is_protected(tmp_path, monkeypatch):
    pfile = tmp_path / "team-policy.toml"
    pfile.write_text('[policy]\nname = "team"\n')
    monkeypatch.setenv("TCG_POLICY", str(pfile))
    pol = load_policy(include_repo=False)
    assert decide(pol, f"cp /tmp/x {pfile}") == ("block", "self-protection")
    assert decide(pol, f"cat {pfile}") == ("allow", "allowed")


# --------------------------------------------------------------- policy data


def _user_policy(tcg_home: Path, text: str) -> None:
    (tcg_home / "config").mkdir(parents=True, exist_ok=True)
    (tcg_home / "config" / "policy.toml").write_text(text)


def test_listing_is_read_setting(tcg_home):
    assert decide(load_policy(include_repo=False), "ls ~/.ssh") == ("allow", "allowed")
    _user_policy(tcg_home, "[secret_stores]\nlisting_is_read = true\n")
    assert decide(load_policy(include_repo=False), "ls ~/.ssh") == ("block", "secret-store-read")


def test_user_credential_dump_rule(tcg_home):
    _user_policy(
        tcg_home,
        '[[credential_dumps]]\nid = "acme-token"\ncommand = "acme"\nargs = ["token", "show"]\n'
        'flags = ["--reveal"]\ndescription = "prints the ACME token"\n',
    )
    pol = load_policy(include_repo=False)
    assert decide(pol, "acme --profile x token show --reveal") == ("block", "credential-dump")
    assert decide(pol, "acme token show") == ("allow", "allowed")
    v = evaluate_line(pol, "acme token show --reveal", "agent")
    assert v.rules == ("acme-token",) and "ACME" in v.deciding.detail


def test_invalid_dump_rule_fails_closed(tcg_home, capsys):
    _user_policy(tcg_home, '[[credential_dumps]]\nid = "bad"\ncommand = "x"\nargz = ["y"]\n')
    with pytest.raises(PolicyError) as exc:
        load_policy(include_repo=False)
    assert "argz" in exc.value.message and exc.value.line == 4
    assert check_main(["--actor", "human", "ls"]) == 2
    assert "policy-invalid" in capsys.readouterr().out
    # The engine re-checks rules it is handed (a Policy built without load.py's validation).
    pol = load_policy(include_repo=False, environ={"TCG_POLICY": os.devnull})
    bad = Policy(
        data={**pol.data, "credential_dumps": [{"id": "bad", "command": "x", "argz": ["y"]}]},
        fingerprint="0" * 64, sources=(),
    )
    v = evaluate_line(bad, "ls", "human")
    assert (v.decision, v.reason) == (Decision.BLOCK, "policy-invalid")
    assert "argz" in v.deciding.detail


def test_decisions_come_from_the_policy(tcg_home):
    _user_policy(tcg_home, '[decisions.agent]\ncredential-dump = "ask"\n')
    assert decide(load_policy(include_repo=False), "printenv") == ("ask", "credential-dump")


def test_secret_var_exceptions(policy):
    assert decide(policy, "echo $MY_API_KEY") == ("block", "credential-dump")
    assert decide(policy, "echo $AWS_ACCESS_KEY_ID") == ("allow", "allowed")
    assert decide(policy, "echo $TOKENIZERS_PARALLELISM") == ("allow", "allowed")


def test_heredocs(policy):
    assert decide(policy, "cat <<EOF > config.yml\nport: 8080\nEOF") == ("allow", "allowed")
    assert decide(policy, "python - <<'PY'\nprint(open('.env').read())\nPY") == ("block", "secret-store-read")
    assert decide(policy, "cat <<EOF\n$GITHUB_TOKEN\nEOF") == ("block", "credential-dump")
    assert decide(policy, "bash <<'EOF'\nprintenv\nEOF") == ("block", "credential-dump")
    assert decide(policy, "cat <<'EOF'\n$GITHUB_TOKEN\nEOF") == ("allow", "allowed")


def test_every_reason_has_a_documented_code_and_safe_detail(policy):
    from tcg.policy.reasons import REASONS

    lines = ["cat .env", "env", "cat $F", "eval $X", "echo x > ~/.bashrc", "cat 'x", "rm -rf $TCG_HOME",
             "echo x > .env"]
    for line in lines:
        for r in evaluate_line(policy, line, "agent").reasons:
            assert r.code in REASONS
            assert r.detail and len(r.detail) <= 120 and "\x00" not in r.detail


# ----------------------------------------------------------------- fail closed


def test_internal_error_blocks(policy, monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("parser exploded")

    monkeypatch.setattr(engine, "parse_line", boom)
    seen: list[BaseException] = []
    for actor in ("agent", "human"):
        v = evaluate_line(policy, "echo hello", actor, on_error=seen.append)
        assert (v.decision, v.reason) == (Decision.BLOCK, "internal-error")
        assert "RuntimeError" in v.deciding.detail
    assert len(seen) == 2 and isinstance(seen[0], RuntimeError)


def test_internal_error_in_check_exits_2(monkeypatch, capsys):
    monkeypatch.setattr(engine, "parse_line", lambda *a, **k: 1 / 0)
    assert check_main(["--actor", "human", "ls"]) == 2
    assert "internal-error" in capsys.readouterr().out


def test_garbage_input_never_raises(policy):
    for line in ["\x00\x01", "$(" * 50, "'" * 3, "\udcff", "a" * 10000 + " .env", "}" * 20, "cat\n" * 200]:
        v = evaluate_line(policy, line, "agent")
        assert v.decision in (Decision.ALLOW, Decision.BLOCK)
        assert v.reason != "internal-error", (line[:20], v.reasons)


# ----------------------------------------------------------------------- leaks

SECRETS = [
    "ghp_PLANTEDfakeTOKEN1234567890abcdefABCD",
    "sk-live-PLANTED-9f8e7d6c5b4a39281706",
    "AKIAPLANTED1234567890",
    "hunter2-PLANTED-password-value",
]


def test_planted_secrets_never_reach_details_output_or_disk(tcg_home, capsys):
    lines = [
        f"curl -H 'Authorization: Bearer {SECRETS[0]}' https://api.github.com",
        f"export API_KEY={SECRETS[1]} && cat .env",
        f"AWS_ACCESS_KEY_ID={SECRETS[2]} aws s3 ls",
        f"echo '{SECRETS[3]}' >> .env",
        f"mysql -p{SECRETS[3]} -e 'select 1'",
        f"eval 'echo {SECRETS[0]}'",
        f"printenv {SECRETS[1]}",
        f"bash -c 'TOKEN={SECRETS[0]} env'",
        f"python -c 'print(\"{SECRETS[1]}\")' > ~/.ssh/authorized_keys",
    ]
    pol = load_policy(include_repo=False)
    for line in lines:
        for actor in ("agent", "human"):
            v = evaluate_line(pol, line, actor)
            for r in v.reasons:
                for s in SECRETS:
                    assert s not in r.detail, (line, r)
        assert check_main(["--actor", "agent", "--json", line]) in (0, 2)
        assert tcg_main(["check", "--actor", "human", line]) in (0, 2)
    out, err = capsys.readouterr()
    for s in SECRETS:
        assert s not in out and s not in err
    assert_no_secret_written(tcg_home, SECRETS)


# ------------------------------------------------------------------------ check


def test_check_exit_codes_and_output(capsys):
    assert tcg_main(["check", "--actor", "agent", "cat .env"]) == 2
    out = capsys.readouterr().out
    assert out.startswith("BLOCK  secret-store-read")
    assert "cat reads .env" in out and "hint: " in out
    assert tcg_main(["check", "--actor", "agent", "cat README.md"]) == 0
    assert capsys.readouterr().out.startswith("ALLOW")
    assert tcg_main(["check", "--actor", "human", "cat .env"]) == 0  # SANITIZE runs
    assert capsys.readouterr().out.startswith("SANITIZE")


def test_check_ask_exits_3(tcg_home, capsys):
    _user_policy(tcg_home, '[decisions.agent]\nsecret-store-read = "ask"\n')
    assert check_main(["--actor=agent", "cat .env"]) == 3
    assert capsys.readouterr().out.startswith("ASK")


def test_check_json(capsys):
    assert check_main(["--json", "--actor", "agent", "gh auth token"]) == 2
    doc = json.loads(capsys.readouterr().out)
    assert doc["decision"] == "block" and doc["reason"] == "credential-dump" and doc["actor"] == "agent"
    assert doc["rules"] == ["gh-auth-token"]
    assert doc["reasons"][0]["fix"] and doc["policy"]["snapshot"].startswith("tcg-default@")


def test_check_actor_defaults_from_tcg_actor(monkeypatch, capsys):
    assert check_main(["env"]) == 0  # human: sanitize
    monkeypatch.setenv("TCG_ACTOR", "agent")
    assert check_main(["env"]) == 2
    assert tcg_main(["check", "env"]) == 2


@pytest.mark.parametrize(
    "args",
    [[], ["a", "b"], ["--actor", "robot", "ls"], ["--actor"], ["--bogus", "ls"]],
)
def test_check_usage_errors_exit_1(args, capsys):
    assert check_main(args) == 1
    assert "tcg check:" in capsys.readouterr().err
    assert tcg_main(["check", *args]) in (1, 2)  # click's own usage errors exit 2


def test_check_invalid_policy_blocks_with_hint(tcg_home, capsys):
    _user_policy(tcg_home, "[secret_stores\n")
    assert check_main(["--actor", "human", "ls"]) == 2
    out = capsys.readouterr().out
    assert "policy-invalid" in out and "policy.toml:1" in out and "hint:" in out


def test_check_records_no_event(tcg_home):
    check_main(["--actor", "agent", "cat .env"])
    assert not (tcg_home / "state" / "events.jsonl").exists()


def test_tcg_shell_check_end_to_end(tmp_path):
    exe = Path(sys.executable).with_name("tcg_shell")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "tcg.shell_entry"]
    proc = subprocess.run(
        [*cmd, "check", "--actor", "agent", "cat .env"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "secret-store-read" in proc.stdout
