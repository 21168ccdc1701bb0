"""Property: wrapping a command line never changes its decision.

A wrapper (`env`, `nice -n 5`, `timeout 5`, `sudo` …), a nested shell (`bash -c`,
`sh -c`, `eval`), a subshell, a group or a harmless `true &&` in front only move the
same command around; an agent must not get a secret read through by dressing it up,
and a person must not get an ordinary line refused for it. The parser peels each of
these (docs/parser.md); this checks the decision, for random compositions of them.
"""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcg.decide.line import evaluate_line
from tcg.policy.load import load_policy

BASE_LINES = [
    "cat .env",
    "less .env.local",
    "head -n 3 ~/.ssh/id_rsa",
    "cat ~/.aws/credentials",
    "printenv",
    "cat README.md",
    "ls -la",
    "git status",
    "echo hi",
    "wc -l notes.txt",
]

PREFIX_WRAPPERS = ["env", "env A=1", "nice -n 5", "timeout 5", "nohup", "stdbuf -oL", "time", "command", "sudo"]

# (shape, whether the result is a simple command an exec-style wrapper can start)
SHAPES = [
    (lambda line: f"bash -c {shlex.quote(line)}", True),
    (lambda line: f"sh -c {shlex.quote(line)}", True),
    (lambda line: f"eval {shlex.quote(line)}", False),
    (lambda line: f"( {line} )", False),
    (lambda line: f"{{ {line}; }}", False),
    (lambda line: f"true && {line}", False),
]
@pytest.fixture(scope="module")
def policy():
    return load_policy(include_repo=False)


def decision(policy, line: str, actor: str) -> str:
    return evaluate_line(policy, line, actor).decision.value


@st.composite
def wrapped(draw):
    """A base line inside 0-3 layers; an exec-style wrapper (`env`, `sudo` …) only
    goes in front of a simple command, as it would in a real line."""
    base = draw(st.sampled_from(BASE_LINES))
    line, simple = base, True
    for _ in range(draw(st.integers(0, 3))):
        if simple and draw(st.booleans()):
            line = f"{draw(st.sampled_from(PREFIX_WRAPPERS))} {line}"
        else:
            shape, simple = draw(st.sampled_from(SHAPES))
            line = shape(line)
    return base, line


@pytest.mark.parametrize("actor", ["agent", "human"])
@settings(max_examples=150, deadline=None)
@given(case=wrapped())
def test_wrapping_keeps_the_decision(policy, actor, case):
    base, line = case
    assert decision(policy, line, actor) == decision(policy, base, actor), line


@pytest.mark.parametrize("actor", ["agent", "human"])
def test_the_base_lines_are_not_all_alike(policy, actor):
    """The property is only worth something when the base lines decide differently."""
    assert len({decision(policy, line, actor) for line in BASE_LINES}) >= 2
