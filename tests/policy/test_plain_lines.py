"""Plain lines (words of letters, digits and ``_./,:@%+-=`` separated by blanks) are
read without tree-sitter (tcg.policy.plainline.plain_words); the result must be the
one the tree-sitter walk gives, for every such line, wrappers and nesting included."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcg.policy import plainline, tsbinding
from tcg.policy.cmdline import parse_line

# words a plain line may hold, weighted towards the ones with meaning for bash,
# tree-sitter or the walker (reserved words, declarations, wrappers, shells, find)
SPECIAL = [
    "if", "then", "fi", "do", "done", "for", "in", "while", "case", "esac", "time", "coproc",
    "function", "select", "until", "elif", "else", "declare", "export", "local", "readonly",
    "typeset", "unset", "unsetenv", "let", "test", "eval", "exec", "command", "builtin", "source",
    "sudo", "env", "nice", "nohup", "timeout", "xargs", "bash", "sh", "zsh", "-c", "-u", "-S",
    "--", "-", "find", "-name", "-exec", "cat", ".env", "/proc/1/environ", "A=b", "=x", "a=",
    "10", "2", "-1", "+x", "a,b", "==", "a+:", "~", "a.b/c", "true", "git", "status",
]
PLAIN_CHARS = "ABCxyz0189_./,:+-="
WORD = st.one_of(st.sampled_from(SPECIAL), st.text(alphabet=PLAIN_CHARS, min_size=1, max_size=6))
BLANKS = st.sampled_from([" ", "  ", "\t", " \t "])


@st.composite
def plain_lines(draw):
    words = draw(st.lists(WORD, min_size=1, max_size=6))
    seps = draw(st.lists(BLANKS, min_size=len(words) + 1, max_size=len(words) + 1))
    lead = seps[0] if draw(st.booleans()) else ""
    trail = seps[-1] if draw(st.booleans()) else ""
    return lead + "".join(w + s for w, s in zip(words, seps[1:-1] + [""], strict=True)) + trail


def _via_tree_sitter(line, monkeypatch, **kw):
    with monkeypatch.context() as m:
        m.setattr(plainline, "plain_words", lambda text: None)
        return parse_line(line, **kw)


@settings(max_examples=2000, deadline=None)
@given(line=plain_lines())
def test_plain_line_parses_as_tree_sitter_does(line):
    with pytest.MonkeyPatch.context() as mp:
        slow = _via_tree_sitter(line, mp, home="/home/u")
    fast = parse_line(line, home="/home/u")
    assert fast == slow


@pytest.mark.parametrize("line", [
    "true", "ls -la", "git status", "  make  test ", "cat .env", "sudo -u root cat .env",
    "env A=b cat /proc/1/environ", "bash -c true", "sh -c ls", "timeout 5 cat id_rsa",
    "find . -name id_rsa", "xargs cat", "eval cat .env", "nice -n 5 make",
])
def test_examples_agree_and_skip_the_parser(line, monkeypatch):
    calls = []
    real = tsbinding._parser
    monkeypatch.setattr(tsbinding, "_parser", lambda: calls.append(1) or real())
    fast = parse_line(line, home="/home/u")
    assert calls == [], "a plain line must not need the parser"
    assert fast == _via_tree_sitter(line, monkeypatch, home="/home/u")
    assert fast.commands and not fast.unparsable


@pytest.mark.parametrize("line", [
    "", "   ", "echo $HOME", "cat ~/.env", "ls *.txt", "a=b", "export A=b", "if true",
    "echo 'x'", "cat .env > out", "ls; ls", "ls | wc", "echo a#b", "ls {a,b}", "echo é",
    "time ls", "X=1 env", "echo\\ x", "ls\nls", "a+: b", "- A=b", "test 1 == 1", "mail a@b", "kill %1",
])
def test_other_lines_go_to_the_parser(line):
    assert plainline.plain_words(line) is None
