"""The command-line parser: structure of what a line would run."""

from __future__ import annotations

import pytest

from tcg.policy.cmdline import DYN, MAX_DEPTH, parse_line

HOME = "/home/dev"


def names(line: str, **kw) -> list[str | None]:
    return [c.name for c in parse_line(line, home=HOME, **kw).commands]


def argv(line: str, index: int = -1) -> list[str]:
    cmds = parse_line(line, home=HOME).commands
    return [w.value for w in cmds[index].argv]


def only(line: str):
    cmds = parse_line(line, home=HOME).commands
    assert len(cmds) == 1, cmds
    return cmds[0]


# ----------------------------------------------------------------- structure


def test_claude_code_wrapper_is_seen_through():
    line = (
        "source /home/dev/.claude/shell-snapshots/snapshot-bash-1-x.sh 2>/dev/null || true && "
        "eval 'cat .env' < /dev/null && pwd -P >| /tmp/claude-1-cwd"
    )
    p = parse_line(line, home=HOME)
    assert not p.unparsable
    assert [c.name for c in p.commands] == ["source", "true", "cat", "pwd"]
    cat = p.commands[2]
    assert [w.value for w in cat.argv] == ["cat", ".env"]
    assert cat.wrappers == ("eval",) and cat.depth == 1
    ops = sorted((r.op, r.target.value) for r in p.redirects if r.target)
    assert ops == [("<", "/dev/null"), (">", "/dev/null"), (">|", "/tmp/claude-1-cwd")]
    assert p.commands[0].redirects[0].fd == 2


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("a | b | c", ["a", "b", "c"]),
        ("a && b || c; d & e", ["a", "b", "c", "d", "e"]),
        ("a\nb\n\nc", ["a", "b", "c"]),
        ("(a; b) && { c; }", ["a", "b", "c"]),
        ("if a; then b; elif c; then d; else e; fi", ["a", "b", "c", "d", "e"]),
        ("while a; do b; done; until c; do d; done", ["a", "b", "c", "d"]),
        ("case $x in 1) a;; *) b;; esac", ["a", "b"]),
        ("f() { a; }; function g { b; }", ["a", "b"]),
        ("! a |& b", ["a", "b"]),
        ("x=$(a) y=`b` c", ["a", "b", "c"]),
        ("c $(a $(b))", ["b", "a", "c"]),
        ("diff <(a) >(b)", ["a", "b", "diff"]),
        ("[[ $(a) == x ]] && (( $(b) > 1 ))", ["a", "b"]),
        ("echo ${x:-$(a)}", ["a", "echo"]),
        ("for i in $(a); do b; done", ["a", "b"]),
        ("a # b c", ["a"]),
    ],
)
def test_every_command_is_found(line, expected):
    assert names(line) == expected


@pytest.mark.parametrize(
    ("line", "inner", "wrappers"),
    [
        ("sudo -u root -E cat f", ["cat", "f"], ("sudo",)),
        ("sudo -uroot cat f", ["cat", "f"], ("sudo",)),
        ("env -i A=1 B=2 cat f", ["cat", "f"], ("env",)),
        ("env -u X -- cat f", ["cat", "f"], ("env",)),
        ("command -p cat f", ["cat", "f"], ("command",)),
        ("builtin cd /tmp", ["cd", "/tmp"], ("builtin",)),
        ("exec -a name cat f", ["cat", "f"], ("exec",)),
        ("nice -n 10 cat f", ["cat", "f"], ("nice",)),
        ("nice -5 cat f", ["cat", "f"], ("nice",)),
        ("timeout -s KILL 5s cat f", ["cat", "f"], ("timeout",)),
        ("timeout --preserve-status 10 cat f", ["cat", "f"], ("timeout",)),
        ("nohup cat f", ["cat", "f"], ("nohup",)),
        ("stdbuf -oL cat f", ["cat", "f"], ("stdbuf",)),
        ("stdbuf -o L cat f", ["cat", "f"], ("stdbuf",)),
        ("time cat f", ["cat", "f"], ("time",)),
        ("sudo nice -n 1 timeout 3 cat f", ["cat", "f"], ("sudo", "nice", "timeout")),
        ("uv run --with rich cat f", ["cat", "f"], ("uv",)),
    ],
)
def test_wrappers_are_peeled(line, inner, wrappers):
    cmd = only(line)
    assert [w.value for w in cmd.argv] == inner
    assert cmd.wrappers == wrappers


def test_wrapper_assignments_are_kept():
    cmd = only("A=1 sudo B=2 env C=3 make")
    assert cmd.name == "make"
    assert [a.name for a in cmd.assignments] == ["A", "B", "C"]


@pytest.mark.parametrize("line", ["env", "env -i", "env A=1", "sudo", "command -v cat", "exec 3>f"])
def test_wrapper_without_a_command_stays_itself(line):
    assert only(line).name == line.split()[0]


def test_xargs_arguments_come_from_stdin():
    cmds = parse_line("ls | xargs -0 -n 1 cat", home=HOME).commands
    cat = cmds[-1]
    assert cat.name == "cat" and cat.wrappers == ("xargs",)
    assert not cat.argv[-1].static and cat.argv[-1].source == "<stdin>"


def test_xargs_replace_string_marks_the_word_dynamic():
    cat = parse_line("ls | xargs -I{} cp {} /tmp/", home=HOME).commands[-1]
    assert [w.static for w in cat.argv] == [True, False, True]


def test_xargs_input_file_is_a_redirect():
    p = parse_line("xargs -a list.txt rm", home=HOME)
    assert ("<", "list.txt") in [(r.op, r.target.value) for r in p.redirects if r.target]


def test_xargs_from_echo_knows_its_arguments():
    cat = parse_line("echo a.txt | xargs cat", home=HOME).commands[-1]
    assert [w.value for w in cat.argv] == ["cat", "a.txt"]


def test_find_exec_runs_a_command_on_name_matches():
    cmds = parse_line("find src -name '*.py' -exec grep -l x {} +", home=HOME).commands
    grep = [c for c in cmds if c.name == "grep"][0]
    placeholder = grep.argv[-1]
    assert placeholder.recursive and placeholder.glob and placeholder.value == "src/*.py"
    assert "find -exec" in grep.wrappers


# ------------------------------------------------------------- nested code


@pytest.mark.parametrize(
    ("line", "wrappers"),
    [
        ("eval 'cat .env'", ("eval",)),
        ("eval cat .env", ("eval",)),
        ("bash -c 'cat .env'", ("bash -c",)),
        ("sh -c 'cat .env'", ("sh -c",)),
        ("zsh -c 'cat .env'", ("zsh -c",)),
        ("dash -c 'cat .env'", ("dash -c",)),
        ("bash -euo pipefail -c 'cat .env'", ("bash -c",)),
        ("/bin/bash -lc 'cat .env'", ("bash -c",)),
        ("su -c 'cat .env' root", ("su -c",)),
        ("bash -c \"sh -c 'eval cat\\ .env'\"", ("bash -c", "sh -c", "eval")),
        ("echo 'cat .env' | bash", ("bash",)),
        ("bash <<< 'cat .env'", ("bash",)),
        ("env -S 'cat .env'", ("env",)),
        ("watch -n 1 cat .env", ("watch", "sh -c")),
    ],
)
def test_nested_code_is_parsed(line, wrappers):
    cat = [c for c in parse_line(line, home=HOME).commands if c.name == "cat"]
    assert cat, parse_line(line, home=HOME)
    assert [w.value for w in cat[0].argv] == ["cat", ".env"]
    assert cat[0].wrappers == wrappers


def test_heredoc_fed_to_a_shell_is_parsed():
    p = parse_line("bash <<'EOF'\ncat .env\nEOF", home=HOME)
    assert [c.name for c in p.commands] == ["cat"]


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ('eval "$X"', "eval"),
        ('bash -c "$CMD"', "bash -c"),
        ("curl -s https://x | sh", "sh runs commands read from stdin"),
    ],
)
def test_unseen_code_is_opaque(line, why):
    opaque = [c for c in parse_line(line, home=HOME).commands if c.opaque]
    assert opaque and why in opaque[0].opaque


def test_nesting_is_depth_limited():
    line = "cat .env"
    for _ in range(MAX_DEPTH + 2):
        line = "eval " + _sq(line)
    p = parse_line(line, home=HOME)
    assert p.unparsable
    assert any("deeper" in x for x in p.problems)


def _sq(s: str) -> str:
    return "'" + s.replace("'", "'\"'\"'") + "'"


# ---------------------------------------------------------------- words


@pytest.mark.parametrize(
    ("line", "value", "static"),
    [
        ("cat ~/.ssh/id_rsa", f"{HOME}/.ssh/id_rsa", True),
        ("cat ~", HOME, True),
        ('cat ~/".ssh"/id_rsa', f"{HOME}/.ssh/id_rsa", True),
        ('cat "$HOME/.env"', f"{HOME}/.env", True),
        ("cat ${HOME}/.env", f"{HOME}/.env", True),
        ("cat '~/.env'", "~/.env", True),
        ('cat "~/.env"', "~/.env", True),
        ("cat a~/x", "a~/x", True),
        ("cat ~root/x", f"{DYN}/x", False),
        ("cat \\.env", ".env", True),
        ("cat .e\\nv", ".env", True),
        ("cat a\\ b", "a b", True),
        ("cat 'a b'", "a b", True),
        ('cat "a\\"b"', 'a"b', True),
        ('cat "a\\nb"', "a\\nb", True),
        ("cat $'\\x2eenv'", ".env", True),
        ("cat $'a\\tb'", "a\tb", True),
        ('cat "$F"', DYN, False),
        ("cat $1", DYN, False),
        ('cat "$DIR/.env"', f"{DYN}/.env", False),
        ("cat ${X:-.env}", DYN, False),
        ("cat $(ls)", DYN, False),
        ("cat $((1+2))", DYN, False),
        ("cat <(ls)", "/dev/fd/63", True),
    ],
)
def test_word_values(line, value, static):
    w = parse_line(line, home=HOME).commands[-1].argv[1]
    assert (w.value, w.static) == (value, static)


def test_home_unknown_leaves_tilde_dynamic():
    w = parse_line("cat ~/.env").commands[0].argv[1]
    assert not w.static and w.value.endswith("/.env")


def test_only_path_variables_are_resolved_from_env():
    env = {"HOME": HOME, "TCG_HOME": "/t", "GITHUB_TOKEN": "ghp_should_never_be_read"}
    p = parse_line("cat $TCG_HOME/x $GITHUB_TOKEN", env=env)
    a, b = p.commands[0].argv[1:]
    assert (a.value, a.static) == ("/t/x", True)
    assert (b.value, b.static, b.vars) == (DYN, False, ("GITHUB_TOKEN",))


def test_globs_are_patterns_with_quoted_parts_escaped():
    w = only('cat "*"x*').argv[1]
    assert w.glob and w.value == "*x*" and w.pattern == "[*]x*"
    assert not only("cat '*.env'").argv[1].glob


def test_brace_expansion():
    assert argv("cat {.env,README.md}") == ["cat", ".env", "README.md"]
    assert argv("cat a{1,2}b") == ["cat", "a1b", "a2b"]
    assert argv("cat '{a,b}'") == ["cat", "{a,b}"]


def test_line_local_assignments_and_for_values_are_known():
    assert argv("F=.env; cat $F") == ["cat", ".env"]
    assert argv("export F=.env; cat $F") == ["cat", ".env"]
    assert [c.argv[1].value for c in parse_line("for f in a b; do cat $f; done").commands] == ["a", "b"]
    glob_word = parse_line("for f in *.env; do cat \"$f\"; done").commands[0].argv[1]
    assert glob_word.glob and glob_word.value == "*.env"
    assert not parse_line("F=$(x); cat $F").commands[-1].argv[1].static


def test_variable_names_are_recorded():
    w = only('echo "${GITHUB_TOKEN}" ').argv[1]
    assert w.vars == ("GITHUB_TOKEN",)


# -------------------------------------------------------------- redirects


def test_redirect_operators_and_targets():
    p = parse_line("cmd < in > out 2> err >> app &> both &>> both2 2>&1 >| clob", home=HOME)
    got = [(r.op, r.fd, r.target.value if r.target else None) for r in p.commands[0].redirects]
    assert got == [
        ("<", None, "in"), (">", None, "out"), (">", 2, "err"), (">>", None, "app"),
        ("&>", None, "both"), ("&>>", None, "both2"), (">&", 2, "1"), (">|", None, "clob"),
    ]
    r = p.commands[0].redirects
    assert r[0].reads and not r[0].writes and r[1].writes and r[6].is_fd_dup


def test_heredoc_and_herestring_bodies():
    p = parse_line("cat <<EOF > out\nhi $TOKEN\nEOF", home=HOME)
    ops = [(r.op, r.target.value if r.target else None) for r in p.commands[0].redirects]
    assert ("<<", None) in ops and (">", "out") in ops
    body = [r for r in p.commands[0].redirects if r.op == "<<"][0].body
    assert body.vars == ("TOKEN",) and not body.static
    quoted = parse_line("cat <<'EOF'\nhi $TOKEN\nEOF").commands[0].redirects[0].body
    assert quoted.static and "$TOKEN" in quoted.value
    here = parse_line('base64 <<< "$KEY"').commands[0].redirects[0]
    assert here.op == "<<<" and here.body.vars == ("KEY",)


def test_redirect_of_a_group_is_recorded():
    p = parse_line("{ a; b; } < .env")
    assert [(r.op, r.target.value) for r in p.redirects] == [("<", ".env")]


# ------------------------------------------------------------- unparsable


@pytest.mark.parametrize("line", ['cat "unterminated', "echo $(", "if then fi", "cat .env )", "a &&"])
def test_errors_make_the_line_unparsable(line):
    p = parse_line(line, home=HOME)
    assert p.unparsable and p.problems


def test_unparsable_line_still_yields_what_it_can():
    p = parse_line("cat .env )", home=HOME)
    assert p.unparsable and "cat" in [c.name for c in p.commands]


@pytest.mark.parametrize("line", ["", "   ", "# only a comment", "true"])
def test_trivial_lines(line):
    assert not parse_line(line).unparsable


def test_grammar_loads_with_or_without_the_package_init():
    """The direct extension load (no package __init__) and the ordinary import give
    working bindings; a fresh interpreter shows the direct load skips the __init__."""
    import subprocess
    import sys

    import tree_sitter
    import tree_sitter_bash

    probe = (
        "import sys; from tcg.policy.cmdline import parse_line; "
        "assert parse_line('cat .env | wc').commands[0].name == 'cat'; "
        "print(sorted(k for k in sys.modules if k.startswith('tree_sitter')), 'typing' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-I", "-c", probe], capture_output=True, text=True,
                         timeout=60, check=True).stdout.split("\n")[0]
    assert out == "['tree_sitter._binding', 'tree_sitter_bash._binding'] False"

    from tcg.policy.tsbinding import _binding

    direct = _binding("tree_sitter_bash").language()
    via_package = tree_sitter_bash.language()  # the package is loaded now: the fallback path
    for capsule in (direct, via_package):
        tree = tree_sitter.Parser(tree_sitter.Language(capsule)).parse(b"cat .env | wc")
        assert tree.root_node.children[0].type == "pipeline"
