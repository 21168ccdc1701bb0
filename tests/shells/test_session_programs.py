"""Full-screen and interactive programs inside a session behave as in a plain
shell: vim, less, top, a Python REPL, `read -p`, getpass, a window resize with
vim open, and colours byte for byte (no secret on screen: nothing masked)."""

from __future__ import annotations

import shlex
import sys
import time

import pytest

from .tmux import both

pytestmark = pytest.mark.shell
PY = shlex.quote(sys.executable)


def test_vim_less_top_and_repl(panes, shell_name):
    plain, sess = both(panes, shell_name)
    for p in (plain, sess):
        (p.workdir / "doc.txt").write_text("".join(f"doc line {i}\n" for i in range(200)))
        p.line("vim -u NONE -N doc.txt", wait=False)
        p.wait_screen("doc line 5")
        p.text(":s/doc/DOC/")
        p.keys("Enter")
        p.text(":wq")
        p.keys("Enter")
        p.wait_prompt()
        assert (p.workdir / "doc.txt").read_text().startswith("DOC line 0\n")
        p.line("less doc.txt", wait=False)
        p.wait_screen("doc line 30")
        p.text("G")
        p.wait_screen("doc line 199")
        p.text("q")
        p.wait_prompt()
        p.line("top -d 1", wait=False)
        p.wait_screen("PID")
        p.text("q")
        p.wait_prompt()
        p.line(f"{PY} -q", wait=False)
        p.wait_screen(">>> ")
        p.line("print(6 * 7)", wait=False)
        p.wait_screen("42")
        p.line("raise SystemExit(3)", wait=False)
        p.wait_prompt()
        p.line("echo $? > repl.txt")
        assert p.file("repl.txt") == "3\n"


def test_read_prompt_and_getpass(panes, shell_name):
    plain, sess = both(panes, shell_name)
    # The prompts are split in the command text, so seeing them on screen means
    # the program printed them (not that the typed command was echoed).
    read = "read -r -p 'na''me? ' who" if shell_name == "bash" else "read -r 'who?na''me? '"
    getpass = f"{PY} -c 'import getpass; print(\"got\", len(getpass.getpass(\"p\" \"w: \")))' > gp.txt"
    for p in (plain, sess):
        p.line(read, wait=False)
        p.wait_screen("name? ")
        p.line("Ada", wait=False)
        p.wait_prompt()
        p.line("echo hi-$who > who.txt")
        assert p.file("who.txt") == "hi-Ada\n"
        p.line(getpass, wait=False)
        p.wait_screen("pw: ")
        p.line("hunter2-typed", wait=False)
        screen = p.wait_prompt()
        assert "hunter2-typed" not in screen  # no echo of a password, with or without tcg
        assert p.file("gp.txt") == "got 13\n"


def test_resize_with_vim_open_then_tput_cols(panes, shell_name):
    plain, sess = both(panes, shell_name)
    for p in (plain, sess):
        p.line("vim -u NONE -N", wait=False)
        p.wait_screen("~")
        p.resize(101, 33)
        time.sleep(0.5)
        p.text(":q!")
        p.keys("Enter")
        p.wait_prompt()
        p.line("tput cols > cols.txt; tput lines >> cols.txt; stty size >> cols.txt")
        assert p.file("cols.txt") == "101\n33\n33 101\n"


def test_colours_are_byte_identical_to_a_plain_shell(panes, shell_name):
    plain, sess = both(panes, shell_name)
    lines = []
    cmd = ("printf '\\033[31mred\\033[0m \\033[1;38;2;10;200;30mtrue colour\\033[0m "
           "\\033]8;;http://example.com\\033\\\\link\\033]8;;\\033\\\\ done\\n'")
    for p in (plain, sess):
        p.line(cmd)
        screen = p.screen(escapes=True)
        lines.append(next(ln for ln in screen.splitlines() if "red" in ln and "printf" not in ln))
    assert lines[0] == lines[1]
    assert "\x1b[31m" in lines[1]
