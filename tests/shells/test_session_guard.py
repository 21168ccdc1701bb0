"""What the session adds to a plain shell: every output byte is masked, lines
are decided before they run (agent actor, ASK, a blocked line), and the
station's failure modes — a closed channel, a SIGKILLed station — leave a
working terminal. The plain shell in each test shows what happens without tcg."""

from __future__ import annotations

import errno
import json
import os
import shlex
import signal
import subprocess
import sys
import time

import pytest

from tests.helpers.leaks import assert_no_secret_written
from tests.helpers.waiting import wait_for

from .tmux import both

pytestmark = pytest.mark.shell

PY = shlex.quote(sys.executable)
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def events(tcg_home) -> list[dict]:
    path = tcg_home / "state" / "events.jsonl"
    if not path.exists():
        return []
    return [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]


def test_tokens_are_masked_wherever_they_are_printed(panes, shell_name, tcg_home):
    """A builtin, a background job, a `cd x && …` line and a variable filled by
    `$(cat …)`: the old per-line hooks showed the token for the last three."""
    rc = f"export DEPLOY_NOTE='{TOKEN}'\n"
    plain, sess = both(panes, shell_name, rc_extra=rc)
    for p in (plain, sess):
        (p.workdir / "sub").mkdir()
        (p.workdir / "sub" / "notes.txt").write_text(f"token: {TOKEN}\n")
        (p.workdir / "tok.txt").write_text(TOKEN + "\n")
        # Labels are split in the command text: on screen they are output only.
        p.line('echo "built""in: $DEPLOY_NOTE"')
        p.line("(sleep 0.3; echo \"back\"\"ground: $(cat tok.txt)\") &")
        p.wait_screen("background: " + ("<SECRET:" if p.session else TOKEN))
        p.line(f"cd sub && {PY} -c \"print(open('notes.txt').read())\"; cd ..")
        p.line('T=$(cat tok.txt); echo "v""ar: $T"')
    plain_screen, sess_screen = plain.screen(), sess.screen()
    for label in ("builtin: ", "background: ", "token: ", "var: "):
        assert label + TOKEN in plain_screen, label  # the control: the token is there to mask
        assert label + "<SECRET:github-pat-classic:" in sess_screen, (label, sess_screen)
    assert TOKEN not in sess_screen and TOKEN[4:20] not in sess_screen
    assert_no_secret_written(tcg_home, [TOKEN])


def _fifo_opened(path, seconds: float) -> bool:
    """True if some process opened the FIFO for reading within ``seconds``
    (a non-blocking open for writing succeeds only when a reader exists)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO:
                raise
            time.sleep(0.02)
            continue
        os.write(fd, b"API_KEY=from-the-fifo-not-real\n")
        os.close(fd)
        return True
    return False


def test_agent_reading_a_secret_store_is_refused_and_never_opened(panes, shell_name, tcg_home):
    env = {"TCG_ACTOR": "agent"}
    plain, sess = both(panes, shell_name, env=env)
    for p in (plain, sess):
        os.mkfifo(p.workdir / ".env")
    plain.line("cat .env > got.txt", wait=False)
    assert _fifo_opened(plain.workdir / ".env", 30)  # control: a plain shell opens it
    plain.wait_prompt()
    sess.line("cat .env > got.txt", wait=False)
    assert not _fifo_opened(sess.workdir / ".env", 3)
    screen = sess.wait_prompt()
    assert "tcg: blocked (secret-store-read)" in screen
    sess.line("echo $? > rc.txt")
    # zsh: 126; bash stops a refused line as ^C does (docs/shells.md: bash cannot keep 126)
    assert sess.file("rc.txt") == ("126\n" if shell_name == "zsh" else "130\n")
    assert not (sess.workdir / "got.txt").exists()
    decided = [e for e in events(tcg_home) if e.get("mode") == "session" and e["decision"] == "block"]
    assert decided and decided[-1]["actor"] == "agent" and decided[-1]["command"] == "cat .env > got.txt"


def test_agent_commands_hidden_in_a_function_or_eval_are_checked(panes, shell_name):
    p = panes(shell_name, session=True, env={"TCG_ACTOR": "agent"})
    (p.workdir / ".env").write_text("API_KEY=not-a-real-value-0123456789\n")
    # zsh decides the definition line itself (preexec sees it) and refuses it;
    # bash runs no command for a definition, so the call's `cat .env` is caught.
    p.line("f() { cat .env; }")
    screen = p.line("f")
    assert "not-a-real-value" not in screen and screen.count("tcg: blocked (secret-store-read)") == 1
    screen = p.line("eval \"$(printf 'ca%s .env' t)\"; echo after''-eval")
    assert "not-a-real-value" not in screen and "after-eval" not in screen


def test_human_blocked_line_does_not_run_and_prints_why(panes, shell_name, tcg_home):
    """The human default blocks touching tcg's install key (self-protection)."""
    plain, sess = both(panes, shell_name)
    key = tcg_home / "state" / "key"
    for p in (plain, sess):
        p.line(f"echo before > ran.txt; cp '{key}' stolen.key; echo after >> ran.txt")
    assert (plain.workdir / "stolen.key").exists()  # control
    screen = sess.screen()
    assert "tcg: blocked (self-protection)" in screen and "hint: " in screen
    assert not (sess.workdir / "stolen.key").exists() and not (sess.workdir / "ran.txt").exists()
    sess.line("echo still-here > alive.txt")
    assert sess.file("alive.txt") == "still-here\n"


def test_a_line_that_starts_in_a_subshell_is_decided_before_it_runs(panes, shell_name, tcg_home):
    """bash runs the first command of `( … )` in a child, where a DEBUG trap does
    not run unless functrace is on: the hook turns it on until the line is
    decided, so these lines are decided before they run too, and once each (one
    event, one refusal). A line that starts with an async list (`{ …; } &`,
    `a && b &`) is asked about the same way, but its child can run before the
    answer reaches it (seen in 1 of 5 runs here): docs/shells.md lists it under
    what still differs, and this test does not claim it."""
    plain, sess = both(panes, shell_name)
    key = tcg_home / "state" / "key"
    lines = [f"(cp '{key}' s1.key)", f"(echo x > s4.txt); cp '{key}' s4.key"]
    for p in (plain, sess):
        for line in lines:
            p.line(line)
    assert sorted(f.name for f in plain.workdir.iterdir()) == ["s1.key", "s4.key", "s4.txt"]  # control
    assert [f.name for f in sess.workdir.iterdir()] == []
    assert sess.screen().count("tcg: blocked (self-protection)") == len(lines)
    decided = wait_for(lambda: (d := [e for e in events(tcg_home) if e["event"] == "command_decision"
                                      and e.get("mode") == "session"]) and len(d) >= len(lines) and d,
                       60, "the lines' events")
    time.sleep(0.5)
    decided = [e for e in events(tcg_home) if e["event"] == "command_decision" and e.get("mode") == "session"]
    assert [e["decision"] for e in decided] == ["block"] * len(lines), decided


def test_a_line_that_starts_with_an_async_list_is_answered_to_both_askers(panes, tcg_home):
    """bash asks about a line that starts with an async list from the job's child and
    from the shell at once. Both once read one pipe a byte at a time and wrote their
    requests in three writes each: answers and requests were torn, both waited the
    2 s timeout, and for a person the line then ran unchecked (6 of 24 copies of the
    install key below were made). The child reads its own pipe and a writer holds
    the station's token while it writes: every line is decided, in time."""
    plain, sess = both(panes, "bash")
    forms = ['{{ cp "$TCG_HOME/state/key" s{i}.key; }} & wait',
             '(cp "$TCG_HOME/state/key" t{i}.key) & jobs',
             'echo ok{i} & cp "$TCG_HOME/state/key" u{i}.key']
    runs = 4
    plain.line(forms[0].format(i=0))
    assert (plain.workdir / "s0.key").exists()  # control: the form copies in a plain shell
    for i in range(runs):
        for form in forms:
            sess.line(form.format(i=i))
        sess.line(f"(sleep 0.1; echo x > a{i}.txt) & jobs")
        sess.line(f"{{ echo y > b{i}.txt; }} & wait")
    for i in range(runs):
        sess.file(f"a{i}.txt")
        sess.file(f"b{i}.txt")
    screen = sess.screen()
    assert "did not answer" not in screen
    assert screen.count("tcg: blocked (self-protection)") == runs * len(forms)
    assert not [f.name for f in sess.workdir.iterdir() if f.suffix == ".key"]


def test_subshells_asking_at_once_take_turns(panes, tmp_path, tcg_home):
    """Two subshells of one line ask at once (two async lists, a pipeline of
    subshells): each keeps the writers' token until it has read its answer, so
    they do not tear each other's (16 of 16 copies of the install key were made
    by the first form before), also while a person answers a question."""
    policy = tmp_path / "ask.toml"
    policy.write_text('[decisions.human]\nsecret-store-read = "ask"\n')
    p = panes("bash", session=True, env={"TCG_POLICY": str(policy)})
    (p.workdir / ".env").write_text(f"TOKEN={TOKEN}\n")
    runs = 3
    for i in range(runs):
        p.line(f'(cp "$TCG_HOME/state/key" s{i}.key) & (cp "$TCG_HOME/state/key" t{i}.key) & wait')
        p.line(f'(cp "$TCG_HOME/state/key" p{i}.key) | (cp "$TCG_HOME/state/key" q{i}.key)')
        p.line(f"(echo a > a{i}.txt) & (echo b > b{i}.txt) & wait")
        p.line(f"(cat .env > e{i}.txt) | (cat .env > f{i}.txt)", wait=False)
        wait_for(lambda i=i: p.screen().count("run it anyway? [y/N]") > i, 60, f"question {i + 1}")
        p.text("n")
        p.wait_prompt()
    for i in range(runs):
        p.file(f"a{i}.txt")
        p.file(f"b{i}.txt")
    assert not list(p.workdir.glob("*.key")) and not list(p.workdir.glob("[ef]*.txt"))
    assert "did not answer" not in p.screen()
    assert_no_secret_written(tcg_home, [TOKEN])  # the questions named .env, never its value


def test_a_hook_without_the_childrens_pipe_is_still_answered(panes):
    """A bash hook from before the children's pipe (pasted into ~/.bashrc by an older
    `tcg_shell init`) does not say it reads that pipe: its subshells are answered on
    the shell's, which they read (answered on the children's pipe, the copies below
    ran unchecked after the timeout). Simulated by hiding the pipe from the hook."""
    p = panes("bash", session=True, rc_extra="unset TCG_SESSION_CHILD_CHANNEL\n")
    for i in range(3):
        p.line(f'(cp "$TCG_HOME/state/key" s{i}.key)')
    screen = p.screen()
    assert screen.count("tcg: blocked (self-protection)") == 3 and "did not answer" not in screen
    assert not list(p.workdir.glob("*.key"))


def test_a_line_bash_keeps_out_of_its_history_is_still_decided(panes):
    """bash decides a line from `history 1`; with HISTCONTROL=ignorespace a line
    typed with a leading space is not saved there, so its commands are decided
    one by one instead (a stale history entry is never taken for it)."""
    p = panes("bash", session=True, rc_extra="HISTCONTROL=ignoreboth\nHISTIGNORE='ls*'\n")
    p.line("echo harmless")
    p.line(' cp "$TCG_HOME/state/key" stolen1.key', wait=False)
    p.wait_screen("tcg: blocked (self-protection)")
    p.wait_prompt()
    p.line('ls >/dev/null; cp "$TCG_HOME/state/key" stolen2.key', wait=False)
    p.wait_prompt()
    assert p.screen().count("tcg: blocked (self-protection)") == 2
    assert not (p.workdir / "stolen1.key").exists() and not (p.workdir / "stolen2.key").exists()


def test_ask_is_asked_by_the_station_on_its_terminal(panes, shell_name, tmp_path):
    policy = tmp_path / "ask.toml"
    policy.write_text('[decisions.human]\nsecret-store-read = "ask"\n')
    p = panes(shell_name, session=True, env={"TCG_POLICY": str(policy)})
    (p.workdir / ".env").write_text(f"TOKEN={TOKEN}\n")
    p.line("cat .env > no.txt", wait=False)
    p.wait_screen("run it anyway? [y/N]")
    p.text("n")
    screen = p.wait_prompt()
    assert "tcg: blocked (secret-store-read)" in screen
    assert not (p.workdir / "no.txt").exists()
    p.line("cat .env; echo shown > yes.txt", wait=False)
    wait_for(lambda: p.screen().count("run it anyway? [y/N]") == 2, 60, "the second question")
    p.text("y")
    screen = p.wait_prompt()
    assert p.file("yes.txt") == "shown\n"
    assert TOKEN not in screen and "TOKEN=<SECRET:" in screen
    # An agent is never asked: ASK is refused for it.
    a = panes(shell_name, session=True, env={"TCG_POLICY": str(policy), "TCG_ACTOR": "agent"})
    (a.workdir / ".env").write_text("X=1\n")
    screen = a.line("cat .env")
    assert "run it anyway" not in screen and "tcg: blocked" in screen


def _close_channel(pane) -> None:
    """Close the shell's ends of its station channel from inside the shell."""
    pane.line("echo $TCG_SESSION_CHANNEL > ch.txt")
    w, r = pane.file("ch.txt").strip().split(",")
    pane.line(f"w={w} r={r}; exec {{w}}>&- {{r}}<&-")


def test_closed_channel_warns_a_human_and_blocks_an_agent(panes, shell_name):
    """The shell loses its station (here: the channel closed from inside, as an
    agent trying to slip past would): the fail mode of the policy applies."""
    human = panes(shell_name, session=True)
    _close_channel(human)
    screen = human.line("echo ran-unchecked > h.txt")
    assert "did not answer; running the line unchecked" in screen
    assert human.file("h.txt") == "ran-unchecked\n"
    agent = panes(shell_name, session=True, env={"TCG_ACTOR": "agent"})
    _close_channel(agent)
    screen = agent.line("echo ran > a.txt")
    assert "tcg: blocked: the session station did not answer" in screen
    assert not (agent.workdir / "a.txt").exists()


def test_station_killed_with_sigkill_leaves_a_sane_working_terminal(panes, shell_name):
    """A session started by hand from a shell that opted out of the automatic
    one: SIGKILL the station; the shell that started it gets a sane terminal
    back and keeps working. Control: the same kill of a raw-mode program in a
    shell without the hook (zsh keeps the terminal raw; bash restores it)."""
    raw_kill = (f"{PY} -c 'import os,signal,tty; tty.setraw(0); "
                "os.kill(os.getpid(), signal.SIGKILL)'")
    plain = panes(shell_name, session=False)
    plain.line(raw_kill)
    flags = plain.stty()
    assert ("-isig" in flags) == (shell_name == "zsh"), flags
    outer = panes(shell_name, session=True, env={"TCG_SESSION_AUTO": "0"})
    before = outer.stty()
    outer.line(f"{PY} -I -m tcg.shell_entry session", wait=False)
    wait_for(lambda: outer.screen().count("P1> ") >= 2, 120, "the session's first prompt")
    os.kill(outer.session_station_pid(), signal.SIGKILL)
    outer.wait_prompt(timeout=60)
    after = outer.stty()
    assert before.split("\n", 1)[1] == after.split("\n", 1)[1]
    assert "-isig" not in after and "-icanon" not in after
    outer.line("echo alive > alive.txt")
    assert outer.file("alive.txt") == "alive\n"


def _tcg(*args: str, cwd) -> subprocess.CompletedProcess:
    tcg = str(__import__("pathlib").Path(sys.executable).with_name("tcg"))
    return subprocess.run([tcg, *args], cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          timeout=120)


def _tree(root) -> dict[str, str]:
    return {str(p.relative_to(root)): (p.read_text() if p.is_file() else "/")
            for p in sorted(root.rglob("*"))}


def _tx_states() -> dict[str, str]:
    from tcg.guard.trash import Trash

    trash = Trash.for_install()
    return {os.path.basename(d): trash.state(d) for d in trash.txdirs()}


def test_a_delete_goes_to_the_trash_before_the_shell_runs_it(panes, shell_name, tcg_home):
    """`rm -rf build` typed in a session: the delete guard moves the tree to the
    trash before the shell's own rm runs (it then removes a stand-in); the next
    line settles it, and `tcg restore` brings it back. Control: the plain shell
    loses the tree for good."""
    plain, sess = both(panes, shell_name)
    for p in (plain, sess):
        (p.workdir / "build" / "sub").mkdir(parents=True)
        (p.workdir / "build" / "sub" / "a.txt").write_text("keep me\n")
        (p.workdir / "build" / "b.txt").write_text("and me\n")
    original = _tree(sess.workdir)
    for p in (plain, sess):
        p.line("rm -rf build; echo $? > rc.txt")
        assert p.file("rc.txt") == "0\n"
        assert not (p.workdir / "build").exists()
    screen = sess.wait_screen("moved to the trash (tcg restore ")
    decided = wait_for(lambda: [e for e in events(tcg_home) if e["event"] == "command_decision" and e.get("txid")],
                       60, "the line's event (written just after its verdict)")
    assert decided and decided[-1]["decision"] == "relocate" and decided[-1]["mode"] == "session", decided
    txid = decided[-1]["txid"]
    assert f"tcg restore {txid}" in screen
    sess.line("true")  # the shell's next line: the station settles the last one
    assert _tx_states() == {txid: "settled"}
    restored = _tcg("restore", txid, cwd=sess.workdir)
    assert restored.returncode == 0, restored.stderr
    (sess.workdir / "rc.txt").unlink()
    assert _tree(sess.workdir) == original


def test_a_delete_the_command_did_not_do_is_given_back(panes, shell_name, tcg_home):
    """The line is saved as a whole but stops before its rm: the stand-in is
    still there at the next line, so the original goes back in place, and the
    same happens for the last line of a session that ends."""
    p = panes(shell_name, session=True)
    (p.workdir / "build").mkdir()
    (p.workdir / "build" / "a.txt").write_text("still here\n")
    p.line("false && rm -rf build")
    assert list(_tx_states().values()) == ["committed"]
    assert not (p.workdir / "build" / "a.txt").exists(), "the stand-in is in place until the line is over"
    p.line("true")
    assert _tx_states() == {}, "everything went back: nothing is left in the trash"
    assert (p.workdir / "build" / "a.txt").read_text() == "still here\n"
    p.line("false && rm -rf build", wait=False)
    p.wait_prompt()
    assert list(_tx_states().values()) == ["committed"]
    p.keys("C-d")  # the shell ends without another line: the session's end settles it
    wait_for(lambda: _tx_states() == {} and p.dead(), 60, "the session's end to settle its last line")
    assert (p.workdir / "build" / "a.txt").read_text() == "still here\n"


def test_a_delete_run_in_the_background_stays_reversible(panes, shell_name, tcg_home):
    """`(sleep 3; rm -rf build) &` (once a person said yes to it) is a job of the
    shell's own, as in a plain shell (`[1] PID`, `jobs` lists it running, the tree
    is gone once it is done). The next line
    comes while the job still runs: the transaction is not settled then (the
    stand-in would be swapped back and the late rm would delete the original for
    good) but once the job has ended, so what it deleted stays in the trash,
    `tcg restore` brings it back, and a `guard_settle` event records it."""
    plain, sess = both(panes, shell_name)
    for p in (plain, sess):
        (p.workdir / "build" / "sub").mkdir(parents=True)
        (p.workdir / "build" / "sub" / "a.txt").write_text("keep me\n")
    original = _tree(sess.workdir)
    job = "(sleep 3; rm -rf build; echo $? > job.txt) &"
    assert "[1] " in plain.line(job)
    # A delete beside a background job is ASK delete-compound (docs/guard.md): yes.
    sess.line(job, wait=False)
    sess.wait_screen("run it anyway? [y/N]")
    sess.text("y")
    assert "[1] " in sess.wait_prompt()
    for p in (plain, sess):
        p.line("jobs > jobs.txt")  # the shell's next line, while the job still runs
        assert "running" in p.file("jobs.txt").lower(), p.file("jobs.txt")
    for p in (plain, sess):
        assert p.file("job.txt") == "0\n"
        assert not (p.workdir / "build").exists()
    states = _tx_states()
    assert list(states.values()) == ["committed"], states  # not settled while the job ran
    sess.line("true")  # the job has ended: this line settles it
    txid = next(iter(states))
    assert _tx_states() == {txid: "settled"}
    settles = wait_for(lambda: [e for e in events(tcg_home) if e["event"] == "guard_settle"], 60,
                       "the guard_settle event")
    assert [(e["txid"], e["kept"], e["returned"], e["changed"]) for e in settles] == [(txid, 1, 0, 0)]
    assert settles[0]["session"]
    restored = _tcg("restore", txid, cwd=sess.workdir)
    assert restored.returncode == 0, restored.stderr
    for name in ("job.txt", "jobs.txt"):
        (sess.workdir / name).unlink()
    assert _tree(sess.workdir) == original


def test_ask_for_a_delete_guard_verdict_shows_the_masked_line(panes, shell_name, tcg_home):
    """Overwriting a file that holds a secret is ASK (tcg would otherwise copy the
    secret into its trash): the station asks on its terminal, showing the line
    masked and where it runs; "n" leaves the file alone."""
    p = panes(shell_name, session=True)
    (p.workdir / "deploy.cfg").write_text(f"token = {TOKEN}\n")
    p.line(f"echo {TOKEN} > deploy.cfg", wait=False)
    screen = p.wait_screen("run it anyway? [y/N]")
    assert "this line needs your yes" in screen and f"in {p.workdir}" in screen
    assert TOKEN not in screen and "<SECRET:" in screen
    p.text("n")
    screen = p.wait_prompt()
    assert "tcg: blocked (unsaved-secret)" in screen
    assert (p.workdir / "deploy.cfg").read_text() == f"token = {TOKEN}\n"
    assert_no_secret_written(tcg_home, [TOKEN])


def test_an_agents_ask_gets_an_approval_code_and_runs_once_approved(panes, shell_name, tmp_path):
    """An agent in a session is never asked on the terminal it drives: the line
    is refused with a `tcg approve` code; once a person approved that code, the
    same line runs once (tcg.guard.approval), the next time it is refused again."""
    import re

    from tcg.guard import approval

    policy = tmp_path / "ask.toml"
    policy.write_text('[decisions.agent]\nsecret-store-read = "ask"\n')
    a = panes(shell_name, session=True, env={"TCG_POLICY": str(policy), "TCG_ACTOR": "agent"})
    (a.workdir / ".env").write_text(f"TOKEN={TOKEN}\n")
    screen = a.line("cat .env > copy.txt")
    assert "run it anyway" not in screen and "tcg: needs a person's approval (secret-store-read)" in screen
    code = re.search(r"tcg approve (\d{4}-\d{4})", screen)
    assert code, screen
    assert not (a.workdir / "copy.txt").exists()
    approval.load(code.group(1))
    approval.grant(code.group(1))
    a.line("cat .env > copy.txt")
    assert a.file("copy.txt") == f"TOKEN={TOKEN}\n"
    (a.workdir / "copy.txt").unlink()
    screen = a.line("cat .env > copy.txt")
    assert screen.count("needs a person's approval") == 2 and not (a.workdir / "copy.txt").exists()
