"""The parser-based run/state/skip decision (issue 5 item 3): never the first word."""

from __future__ import annotations

import pytest

from tcg.shells.classify import RUN, SKIP, STATE, classify

CASES = [
    ("", SKIP), ("   ", SKIP), ("# just a comment", SKIP), ("  # indented\n# two", SKIP),
    ("make test", RUN), ("ls -la | grep x", RUN), ("echo hi # cd later", RUN),
    ("A=1 cmd", RUN),  # env prefix: only the child sees A
    ("(cd sub && make)", RUN), ("echo $(cd /; pwd)", RUN), ("cat <(cd x; ls)", RUN),
    ("cat <<EOF\nx\nEOF\n", RUN), ("command -v cd", RUN), ("cd y | cat", RUN),
    ("cd /tmp", STATE), ("cd /tmp && rm -rf x", STATE), ("make && cd out", STATE),
    ("pushd x", STATE), ("popd", STATE), ("export A=1", STATE), ("unset A", STATE),
    ("declare -x B=2", STATE), ("typeset C", STATE), ("readonly D=1", STATE),
    ("A=1", STATE), ("A=1 B=2", STATE), ("alias x=y", STATE), ("unalias x", STATE),
    ("source ./env.sh", STATE), (". ./env.sh", STATE), ("set -o vi", STATE),
    ("shopt -s extglob", STATE), ("setopt extendedglob", STATE), ("ulimit -n 100", STATE),
    ("umask 077", STATE), ("history 5", STATE), ("fc -l", STATE), ("jobs", STATE),
    ("fg %1", STATE), ("bg", STATE), ("wait", STATE), ("disown -a", STATE),
    ("exec zsh", STATE), ("exit", STATE), ("trap 'echo x' INT", STATE), ("read -r v", STATE),
    ("f() { echo x; }", STATE), ("function g { :; }", STATE), ("eval \"$(ssh-agent)\"", STATE),
    ("\\cd /tmp", STATE), ("'cd' /tmp", STATE), ("builtin cd /tmp", STATE),
    ("command cd /tmp", STATE), ("for d in a b; do cd $d; done", STATE),
    ("if true; then export Z=1; fi", STATE), ("kill %1", STATE), ("printf -v x %s 1", STATE),
    ("echo x | read y", STATE),  # zsh runs the last pipeline element in this shell
    ("for i (1 2) cd $i", STATE),  # zsh syntax: the bash grammar errors; word scan decides
    ("ls *(.)", RUN),
]


@pytest.mark.parametrize(("line", "expected"), CASES)
def test_classify(line, expected):
    assert classify(line) == expected


def test_classify_main_prints_one_word(capsys):
    from tcg.shells.classify import classify_main

    assert classify_main(["cd /tmp && make"]) == 0
    assert capsys.readouterr().out == "state\n"
    assert classify_main([]) == 2
