"""`tcg scan`'s start-up shortcuts hold the command's behaviour: the process collects
garbage less often and leaves without the interpreter's teardown (tcg._lean.entry), with
the same output, exit code and event as the ordinary way out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tcg.events import iter_records

from .gitutil import commit_file, fake_secrets, init_repo

SECRETS = fake_secrets(5)
# The process entry (`tcg`, `python -m tcg`) and the same main called with its arguments,
# which takes the interpreter's ordinary exit.
QUICK = [sys.executable, "-I", "-m", "tcg", "scan"]
ORDINARY = [sys.executable, "-I", "-c", "import sys; from tcg.cli import main; sys.exit(main(sys.argv[1:]))",
            "scan"]


def _env(tcg_home: Path) -> dict[str, str]:
    src = str(Path(__file__).resolve().parents[2])
    return {**os.environ, "TCG_HOME": str(tcg_home), "PYTHONPATH": src}


def _scan_events(tcg_home: Path) -> list[dict]:
    log = tcg_home / "state" / "events.jsonl"
    return [r for r in iter_records(log) if r.get("event") == "scan_completed"] if log.exists() else []


def _comparable(record: dict) -> dict:
    return {k: v for k, v in record.items() if k not in ("ts", "duration_ms", "session")}


def test_quick_exit_keeps_output_exit_code_and_event(tmp_path, tcg_home):
    repo = init_repo(tmp_path / "r")
    commit_file(repo, "a.cfg", "".join(f"K{i}={v}\n" for i, v in enumerate(SECRETS.values())), "add")
    commit_file(repo, "notes.txt", "".join(f"line {i}\n" for i in range(5000)), "notes")
    env = _env(tcg_home)
    results = {}
    for name, cmd in (("ordinary", ORDINARY), ("quick", QUICK)):
        for fmt in ("text", "jsonl"):
            before = len(_scan_events(tcg_home))
            proc = subprocess.run([*cmd, str(repo), "--format", fmt, "--all-occurrences"],
                                  capture_output=True, env=env, timeout=120)
            events = _scan_events(tcg_home)
            assert len(events) == before + 1, (name, proc.stderr)
            results[name, fmt] = (proc.returncode, proc.stdout, proc.stderr, _comparable(events[-1]))
    for fmt in ("text", "jsonl"):
        rc, out, err, event = results["quick", fmt]
        o_rc, o_out, o_err, o_event = results["ordinary", fmt]
        assert rc == o_rc == 1, err
        assert event == o_event and event["findings"] == len(SECRETS)
        if fmt == "jsonl":
            strip = [{k: v for k, v in json.loads(x).items() if k != "duration_s"} for x in out.splitlines()]
            o_strip = [{k: v for k, v in json.loads(x).items() if k != "duration_s"}
                       for x in o_out.splitlines()]
            assert strip == o_strip and strip[-1]["type"] == "summary"
        else:
            # the last line holds the duration; every other line is identical
            assert out.splitlines()[:-1] == o_out.splitlines()[:-1]
            assert out.endswith(b"\n") and b"findings" in out.splitlines()[-1]
        assert err == o_err


def test_only_the_process_entry_tunes_gc_and_skips_the_teardown(tmp_path, tcg_home):
    """main() without arguments (the console script) raises the collector's threshold and
    leaves at once (an atexit hook does not run); main(args) called in-process changes
    neither and returns to its caller."""
    repo = init_repo(tmp_path / "r")
    commit_file(repo, "f", "abc", "one")
    hook = ("import atexit, gc, sys; atexit.register(lambda: sys.stderr.write('TEARDOWN'))\n"
            "import tcg.router as r\nrun = r.run_verb\n"
            "def traced(*a):\n    sys.stderr.write(f'GEN0 {gc.get_threshold()[0]}\\n')\n    return run(*a)\n"
            "r.run_verb = traced\n")
    entry = hook + f"sys.argv = ['tcg', 'scan', {str(repo)!r}]\nfrom tcg.cli import main\nmain()"
    called = hook + f"from tcg.cli import main\nrc = main(['scan', {str(repo)!r}])\nprint('RC', rc)"
    env = _env(tcg_home)
    quick = subprocess.run([sys.executable, "-I", "-c", entry], capture_output=True, env=env, timeout=120)
    ordinary = subprocess.run([sys.executable, "-I", "-c", called], capture_output=True, env=env, timeout=120)
    assert quick.returncode == 0 and b"TEARDOWN" not in quick.stderr and b"clean" in quick.stdout
    assert ordinary.returncode == 0 and b"TEARDOWN" in ordinary.stderr and b"RC 0" in ordinary.stdout
    # the entry collects garbage less often while it runs; a call in-process changes nothing
    assert b"GEN0 10000" in quick.stderr and b"GEN0 700" in ordinary.stderr


def test_quick_exit_flushes_what_was_written_and_keeps_the_code(tmp_path):
    code = ("import sys; from tcg._lean.entry import exit_now\n"
            "sys.stdout.write('x' * 100000); sys.stderr.write('tail')\n"
            "exit_now(7); print('not reached', file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert (proc.returncode, proc.stdout, proc.stderr) == (7, b"x" * 100000, b"tail")


def test_quick_exit_returns_when_stdout_cannot_be_flushed(tmp_path):
    """A reader that went away: exit_now returns and the interpreter's own exit reports
    the broken pipe, as without the shortcut."""
    code = ("import sys; from tcg._lean.entry import exit_now\n"
            "sys.stdout.write('x' * 100)\n"
            "exit_now(0); sys.stderr.write('returned\\n'); sys.stderr.flush()")
    r, w = os.pipe()
    os.close(r)
    try:
        proc = subprocess.run([sys.executable, "-I", "-c", code], stdout=w, stderr=subprocess.PIPE, timeout=60,
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    finally:
        os.close(w)
    assert b"returned" in proc.stderr
    assert proc.returncode != 0  # the interpreter's exit could not flush stdout either


def test_blob_reader_close_kills_a_child_that_does_not_exit(monkeypatch):
    """close() waits for git, and kills it after the grace time when it does not end
    (the kill timer is a bare thread, not threading.Timer)."""
    import time

    from tcg.gitenv import PIPE, popen_git
    from tcg.scan import gitobjects

    monkeypatch.setattr(gitobjects, "KILL_GRACE_S", 0.3)
    reader = object.__new__(gitobjects.BlobReader)
    # ignores the closed pipes, like a git stuck on something else
    reader._proc = popen_git(["sh", "-c", "exec sleep 30"], stdin=PIPE, stdout=PIPE, stderr=PIPE,
                             env=dict(os.environ))
    t0 = time.monotonic()
    reader.close()
    assert reader._proc.returncode == -9 and time.monotonic() - t0 < 20
    # a child that ends on EOF is waited for, not killed
    reader._proc = popen_git(["cat"], stdin=PIPE, stdout=PIPE, stderr=PIPE, env=dict(os.environ))
    reader.close()
    assert reader._proc.returncode == 0
