"""Decide how an interactive hook must treat one command line.

``run``   — every command can run in a child shell: send the line to the
            station agent (`tcg_shell run-line`), which masks its output.
``state`` — some command changes the *current* shell (cd, export, source,
            a function definition…): policy-check only, then the user's own
            shell runs the line (issue 5 item 3).
``skip``  — nothing to run (blank line, comments only).

The decision is made on the tree-sitter-bash parse, never on the first word:
``cd /tmp && rm -rf x`` must still be policy-checked, and ``(cd x; make)`` or
``echo $(cd x)`` change nothing in the current shell. zsh lines are parsed with
the bash grammar; where the parse has errors a conservative word scan decides.
"""

from __future__ import annotations

import functools
import re
import sys

RUN = "run"
STATE = "state"
SKIP = "skip"

# Builtins whose effect is on the shell process itself (bash and zsh).
STATE_BUILTINS = frozenset(
    {
        "cd", "pushd", "popd", "dirs", "chdir",
        "export", "unset", "declare", "typeset", "local", "readonly", "integer", "float",
        "alias", "unalias", "source", ".", "eval", "exec", "exit", "logout", "return",
        "set", "shopt", "setopt", "unsetopt", "emulate", "ulimit", "umask", "limit", "unlimit",
        "history", "fc", "r", "jobs", "fg", "bg", "wait", "disown", "suspend",
        "trap", "read", "mapfile", "readarray", "vared", "let", "shift", "getopts",
        "hash", "rehash", "unhash", "enable", "disable", "bind", "bindkey", "zle",
        "complete", "compopt", "compdef", "autoload", "zmodload", "functions", "unfunction",
    }
)
# Precommand words that run their argument as a builtin/command in this shell.
_PRECOMMANDS = frozenset({"builtin", "command", "noglob", "nocorrect", "time"})
# Nodes whose commands run in a child process anyway: a state builtin there
# changes nothing in the interactive shell.
_CHILD_SCOPES = frozenset({"subshell", "command_substitution", "process_substitution"})
_DECLARATIONS = frozenset({"declaration_command", "unset_command", "function_definition"})

_FALLBACK_RE = re.compile(
    r"(?:^|[;&|(){\n]|\bthen\b|\bdo\b|\belse\b)\s*\\?(?:builtin\s+|command\s+)?"
    r"(" + "|".join(re.escape(w) for w in sorted(STATE_BUILTINS, key=len, reverse=True)) + r")"
    r"(?=\s|$|;)"
    r"|^\s*[A-Za-z_][A-Za-z0-9_]*(?:\[[^]]*\])?\+?="
    r"|\(\)\s*\{",
    re.MULTILINE,
)


@functools.lru_cache(maxsize=1)
def _parser():  # type: ignore[no-untyped-def]
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def _word(node) -> str:  # type: ignore[no-untyped-def]
    """The literal text of a command-name node, unquoted and unescaped."""
    text = node.text.decode("utf-8", "surrogateescape")
    if node.type == "raw_string" and len(text) >= 2:
        return text[1:-1]
    if node.type == "string" and len(text) >= 2:
        return text[1:-1]
    return text.replace("\\", "")


def _command_changes_state(node) -> bool:  # type: ignore[no-untyped-def]
    words: list[str] = []
    for child in node.children:
        if child.type == "command_name":
            words.append(_word(child.children[0]) if child.children else _word(child))
        elif child.type in ("word", "raw_string", "string", "number") and words:
            words.append(_word(child))
    while words and words[0] in _PRECOMMANDS:
        if words[0] == "command" and len(words) > 1 and words[1].startswith("-"):
            return False  # command -v / -V: lookups only
        words = words[1:]
    if not words:
        return False
    name, args = words[0], words[1:]
    if name in STATE_BUILTINS:
        return True
    if name == "printf" and "-v" in args:
        return True
    if name == "kill" and any(a.startswith("%") for a in args):
        return True
    if name == "print" and any(a.startswith("-") and "s" in a for a in args):
        return True  # zsh `print -s` edits history
    return False


def _walk_state(node) -> bool:  # type: ignore[no-untyped-def]
    kind = node.type
    if kind in _CHILD_SCOPES:
        return False
    if kind in _DECLARATIONS or kind == "variable_assignments":
        return True
    if kind == "variable_assignment" and node.parent is not None and node.parent.type in (
        "program", "list", "compound_statement", "do_group", "if_statement", "else_clause",
        "elif_clause", "case_item", "redirected_statement", "while_statement",
    ):
        return True
    if kind == "compound_statement" and node.children and node.children[0].type == "((":
        return True  # ((i++)) assigns in this shell
    if kind == "pipeline":
        # bash runs every element in a subshell; zsh runs the LAST one in the
        # current shell (`echo x | read y` sets y). Look at the last only.
        last = [c for c in node.children if c.is_named]
        return bool(last) and _walk_state(last[-1])
    if kind == "command":
        if _command_changes_state(node):
            return True
    return any(_walk_state(child) for child in node.children)


def _has_command(node) -> bool:  # type: ignore[no-untyped-def]
    if node.type not in ("program", "comment"):
        return True
    return any(_has_command(c) for c in node.children)


def classify(line: str) -> str:
    """Return ``run``, ``state`` or ``skip`` for one (possibly multi-line) line."""
    if not line.strip():
        return SKIP
    data = line.encode("utf-8", "surrogateescape")
    tree = _parser().parse(data)
    root = tree.root_node
    if not _has_command(root):
        return SKIP
    if root.has_error:
        # bash grammar on zsh syntax, or a broken line: scan the words; the
        # child shell reports a syntax error itself.
        return STATE if _FALLBACK_RE.search(line) else RUN
    return STATE if _walk_state(root) else RUN


def classify_main(argv: list[str]) -> int:
    """`tcg_shell classify LINE`: print run | state | skip."""
    if len(argv) != 1:
        sys.stderr.write("usage: tcg_shell classify LINE\n")
        return 2
    sys.stdout.write(classify(argv[0]) + "\n")
    return 0
