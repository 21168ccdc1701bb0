"""The plain-line shortcut: a line bash has nothing to interpret in is read with str.split.

A line of plain words (letters, digits and the marks below, separated by blanks)
has nothing for bash to interpret: no quote, escape, expansion, glob, operator,
redirection or comment. Unless its first word is a reserved word, a declaration
builtin or an assignment, it is one simple command whose words are the blank-
separated fields, and the tree-sitter walk yields exactly what str.split gives
(tests/policy/test_plain_lines.py compares both with hypothesis). Such lines
(`ls -la`, `git status`, `make test`) skip loading the parser, whose extension
imports re and enum: ~7 ms of every mediated command.
"""

from __future__ import annotations

BLANKS = " \t"
_PLAIN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./,:+-=" + BLANKS)
# the command word: no assignment (=), and none of the marks tree-sitter-bash misreads
# there (`a+:` is an error to it, `- A=b` loses its `-`)
_PLAIN_FIRST = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./-")
_SPECIAL_FIRST = frozenset({
    # reserved words
    "if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until", "for",
    "in", "select", "function", "time", "coproc",
    # words tree-sitter-bash gives their own node types
    "declare", "typeset", "export", "readonly", "local", "unset", "unsetenv",
})


def plain_words(text: str) -> list[str] | None:
    """The words of a plain line (see above), or None when the parser must decide."""
    if not _PLAIN.issuperset(text):
        return None
    words = text.split()
    if (not words or words[0] in _SPECIAL_FIRST or words[0][0] == "-"
            or not _PLAIN_FIRST.issuperset(words[0])):
        return None
    if any(w[0] == "=" for w in words):  # tree-sitter-bash reads `==` as an error
        return None
    return words

