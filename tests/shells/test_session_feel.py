"""A hooked shell feels like a plain one: every defect measured with the old
per-line hooks, as a test with a plain-shell control in the same test.

Each test drives the same keystrokes into a plain bash/zsh and into the same
shell in a tcg session (hook sourced from the rc file; the hook execs
`tcg_shell session`, which starts the shell again on a terminal tcg owns) and
compares what the user gets.
"""

from __future__ import annotations

import re
import time

import pytest

from .tmux import both

pytestmark = pytest.mark.shell


def in_session(pane) -> None:
    """The pane's shell really runs under a station (not a plain shell that
    happened to pass): its parent is `tcg_shell session`."""
    pane.line("ps -o args= -p $PPID > parent.txt; echo ${TCG_SESSION:+yes} >> parent.txt")
    text = pane.file("parent.txt")
    assert "tcg.shell_entry session" in text and text.rstrip().endswith("yes"), text


def last_prompt_line(screen: str, mark: str) -> str:
    return next(ln for ln in reversed(screen.splitlines()) if ln.startswith(mark))


def test_screen_shows_the_line_exactly_as_typed(panes, shell_name):
    plain, sess = both(panes, shell_name)
    in_session(sess)
    typed = """echo "a'b" $((2*3)) 'x  y' > out.txt"""
    for p in (plain, sess):
        mark = p.prompt_mark()
        screen = p.line(typed)
        assert last_prompt_line(screen, mark) == mark + typed
        assert "_tcg" not in screen
        assert p.file("out.txt") == "a'b 6 x  y\n"


def test_typeahead_during_a_command_runs(panes, shell_name):
    plain, sess = both(panes, shell_name)
    for p in (plain, sess):
        p.line("sleep 1", wait=False)
        p.text("echo typed-ahead > ahead.txt")
        p.keys("Enter")
        p.wait_prompt(timeout=60)
        p.wait_prompt(timeout=60)
        assert p.file("ahead.txt") == "typed-ahead\n"


def test_paste_without_bracketed_paste_runs_every_line(panes, shell_name):
    plain, sess = both(panes, shell_name)
    lines = [f"echo line{i} >> pasted.txt" for i in range(1, 6)]
    for p in (plain, sess):
        p.paste("\n".join(lines) + "\n")
        for _ in lines:
            p.wait_prompt(timeout=60)
        assert p.file("pasted.txt") == "".join(f"line{i}\n" for i in range(1, 6))


def test_background_job_is_the_shells_own_and_finishes(panes, shell_name):
    plain, sess = both(panes, shell_name)
    for p in (plain, sess):
        screen = p.line("(sleep 1; touch bg-done) &")
        assert re.search(r"\[1\] \d+", screen), screen
        p.line("jobs > jobs.txt")
        assert "sleep 1" in p.file("jobs.txt") or "touch bg-done" in p.file("jobs.txt")
        deadline = time.monotonic() + 30
        while not (p.workdir / "bg-done").exists():
            assert time.monotonic() < deadline, "the background job never finished"
            time.sleep(0.1)


def test_job_control_ctrl_z_fg_ctrl_c_and_status_as_plain(panes, shell_name):
    plain, sess = both(panes, shell_name)
    results = []
    for p in (plain, sess):
        p.line("sleep 30", wait=False)
        time.sleep(0.5)
        p.keys("C-z")
        p.wait_prompt(timeout=30)
        p.line("echo $? > st-z.txt; jobs > jobs.txt")
        jobs = p.file("jobs.txt")
        assert "sleep 30" in jobs, jobs
        p.line("fg", wait=False)
        time.sleep(0.5)
        p.keys("C-c")
        p.wait_prompt(timeout=30)
        p.line("echo $? > st-c.txt")
        results.append((p.file("st-z.txt"), p.file("st-c.txt")))
    assert results[0] == results[1] == ("148\n", "130\n")


def test_history_alias_and_type_answer_about_the_users_shell(panes, shell_name):
    plain, sess = both(panes, shell_name)
    outputs = []
    for p in (plain, sess):
        p.line("echo zzmarker-one")
        p.line("history | grep -c zzmarker-one > hist.txt")
        p.line("alias | grep -c LL-ALIAS > alias.txt")
        p.line("type ll > type.txt")
        p.line("touch a; ll > mid.txt")
        outputs.append(tuple(p.file(n) for n in ("hist.txt", "alias.txt", "type.txt", "mid.txt")))
    assert outputs[0] == outputs[1]
    hist, alias, typ, mid = outputs[1]
    assert int(hist) >= 1 and alias == "1\n" and "alias" in typ and mid == "LL-ALIAS\n"


def test_pipestatus_keeps_every_element(panes, shell_name):
    plain, sess = both(panes, shell_name)
    var = "${PIPESTATUS[@]}" if shell_name == "bash" else "${pipestatus[@]}"
    for p in (plain, sess):
        p.line(f"false | true | (exit 3); echo {var} > ps.txt")
        assert p.file("ps.txt") == "1 0 3\n"


def test_last_argument_and_status_carry_over_to_the_next_line(panes, shell_name):
    """``$_`` and ``$?`` of a line are the next line's, as in a plain shell: the
    hook's work between the two (the trap's fast path at the prompt, the prompt
    function) leaves both alone."""
    plain, sess = both(panes, shell_name)
    for p in (plain, sess):
        p.line("echo one last-word > /dev/null")
        p.line('echo "$_" > last.txt')
        p.line("(exit 7)")
        p.line('echo "$?" > status.txt')
        assert (p.file("last.txt"), p.file("status.txt")) == ("last-word\n", "7\n")


def test_multi_line_constructs_for_while_heredoc(panes, shell_name):
    plain, sess = both(panes, shell_name)
    for p in (plain, sess):
        p.line("for i in 1 2 3", wait=False)
        p.line("do echo $i >> for.txt", wait=False)
        p.line("done")
        p.line("n=0; while [ $n -lt 2 ]", wait=False)
        p.line("do n=$((n+1)); echo w$n >> while.txt", wait=False)
        p.line("done")
        p.line("cat > here.txt <<EOF", wait=False)
        p.line("body $((1+1))", wait=False)
        p.line("EOF")
        assert p.file("for.txt") == "1\n2\n3\n"
        assert p.file("while.txt") == "w1\nw2\n"
        assert p.file("here.txt") == "body 2\n"


def test_while_true_first_line_waits_for_the_rest(panes, shell_name):
    """zsh with the old hook ran `while true` at once (zsh -n accepts it)."""
    plain, sess = both(panes, shell_name)
    for p in (plain, sess):
        p.line("while true", wait=False)
        time.sleep(0.5)
        assert "P2> " not in p.screen()  # still reading the construct
        p.line("do echo w > w.txt; break", wait=False)
        p.line("done")
        p.file("w.txt")


def test_ctrl_c_right_after_enter_is_clean(panes, shell_name):
    plain, sess = both(panes, shell_name)
    for p in (plain, sess):
        mark = p.prompt_mark()
        p.text("sleep 5")
        # Typed keys the shell has not read yet are discarded by the terminal's
        # Ctrl-C (ISIG flush), plain or not: Enter comes once the line is on screen.
        p.wait_screen(mark + "sleep 5")
        p.keys("Enter", "C-c")
        screen = p.wait_prompt(timeout=60)
        p.line("echo $? > cc.txt")
        assert p.file("cc.txt") == "130\n"
        assert "Traceback" not in screen and "tcg" not in screen
