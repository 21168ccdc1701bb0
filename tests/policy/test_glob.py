"""tcg.policy.glob.fnmatchcase is fnmatch.fnmatchcase without re (the per-command path
must not import re): same answer for every name and pattern."""

from __future__ import annotations

import fnmatch
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from tcg.policy.dumprules import _glob
from tcg.policy.glob import fnmatchcase

# few distinct characters, so that names and patterns collide often
NAME = st.text(alphabet="ab.-/\n\\?*[]!", max_size=10)
PATTERN = st.text(alphabet="ab.*?/\n\\", max_size=8)


@settings(max_examples=3000, deadline=None)
@given(name=NAME, pattern=PATTERN)
def test_same_as_fnmatch(name, pattern):
    assert fnmatchcase(name, pattern) is fnmatch.fnmatchcase(name, pattern)


@settings(max_examples=500, deadline=None)
@given(name=NAME, pattern=st.text(alphabet="ab.*?[]!-", max_size=8))
def test_character_classes_go_to_fnmatch(name, pattern):
    assert fnmatchcase(name, pattern) is fnmatch.fnmatchcase(name, pattern)


def test_policy_shaped_patterns():
    assert fnmatchcase(".env.local", ".env.*")
    assert not fnmatchcase(".envrc", ".env.*")
    assert fnmatchcase("GITHUB_TOKEN", "*_TOKEN")
    assert fnmatchcase("id_rsa.pub", "id_rsa*")
    assert fnmatchcase("a/b/c", "a*c")  # * crosses "/", as in fnmatch
    assert fnmatchcase("abc", "a?c") and not fnmatchcase("ac", "a?c")
    assert fnmatchcase("aXbXc", "*b*c") and not fnmatchcase("aXcXb", "*b*c")
    assert fnmatchcase("secret.pem", "[s]ecret.pem")


def _glob_with_re(value: str, pattern: str) -> bool:
    """engine._glob as it was written with re: the first {…} group with no brace inside."""
    m = re.search(r"\{([^{}]*)\}", pattern)
    if m is None:
        return fnmatch.fnmatchcase(value, pattern)
    return any(fnmatch.fnmatchcase(value, pattern[: m.start()] + alt + pattern[m.end():])
               for alt in m.group(1).split(","))


@settings(max_examples=2000, deadline=None)
@given(value=st.text(alphabet="ab,.", max_size=6), pattern=st.text(alphabet="ab{},*.", max_size=9))
def test_brace_alternatives_same_as_the_regex_version(value, pattern):
    assert _glob(value, pattern) is _glob_with_re(value, pattern)
