"""A rule's hyperscan expression may start after a wide gap (tcg.detect.regex._cut_at_gap):
it must still report every end offset at which ``re`` finds the rule, so the windows
``re`` confirms, and the findings, stay the same."""

from __future__ import annotations

import random

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tcg.detect import regex as rx
from tests.detect.conftest import ENGINES
from tests.helpers.hyperscan_ends import hyperscan_ends

pytestmark = pytest.mark.skipif("hyperscan" not in ENGINES, reason="hyperscan wheel not installed")

CONNECTION = (r"""(?i)\b(?:server|data source|host|uid|user|user id|username|database|initial catalog|dsn)"""
              r"""\s{0,2}=[^;\r\n]{1,100};[^\r\n]{0,200}\b(?:password|pwd)\s{0,2}=\s{0,2}"""
              r"""(?P<value>[^;'"\s]{4,128})""")


def _re_ends(pattern: str, data: bytes) -> set[int]:
    pat = rx.compile_bytes(pattern)
    return {m.end() for start in range(len(data) + 1) if (m := pat.match(data, start))}


@pytest.mark.parametrize("pattern, start", [
    (CONNECTION, rb"\bp(?:assword|wd)"),  # "pwd" is as long as "uid" and "dsn" before the gap
    (r"(?i)\bmachine\s{1,3}[^\s]{1,100}\s{1,3}login\s{1,3}[^\s]{1,100}\s{1,3}password\s{1,3}(?P<value>[^\s]{4,200})",
     rb"(?:[\s]){1,3}password"),
    # kept whole: what follows the gap is shorter than the literal before it
    (r"<(?:secret|token)>\{(?P<value>[^{}<>\r\n]{16,4000})\}</", rb"\x3c(?:"),
    (r"(?i)storage_key[ \t]{0,80}(?P<value>[A-Za-z0-9+/]{86}==)", rb"storage\x5fkey"),
    # kept whole: the class run is too narrow to be a gap
    (r"(?i)token[a-z ]{0,20}=secret[A-Za-z0-9]{32}", rb"token"),
])
def test_where_the_expression_starts(pattern, start):
    expr, _ = rx.hyperscan_pattern(pattern)
    assert expr.startswith(start), expr


def test_packaged_rules_that_are_cut_still_report_every_end(all_rules, monkeypatch):
    def expression(rule):
        try:
            return rx.hyperscan_pattern(rule.regex)
        except rx.PatternError:
            return None  # runs on keywords + re: no expression to cut

    with monkeypatch.context() as m:
        m.setattr(rx, "_cut_at_gap", lambda items: items)
        whole = {r.id: expression(r) for r in all_rules}
    cut = [r for r in all_rules if expression(r) != whole[r.id]]
    assert {"generic-connection-string-password", "generic-netrc-password"} <= {r.id for r in cut}
    rng = random.Random(3)
    for rule in cut:
        expr, flags = rx.hyperscan_pattern(rule.regex)
        for text in rule.examples_match:
            raw = text.encode()
            noisy = b"Server=db01; " + raw + b"; pwd=" + bytes(rng.choices(b"ab;= \n", k=40)) + raw
            for data in (raw, noisy):
                wanted = _re_ends(rule.regex, data)
                assert wanted, (rule.id, text)
                assert wanted <= hyperscan_ends([expr], flags, data), rule.id


_PIECES = st.sampled_from(["Server=db", "Host = x", "uid=etl", "user id=a", ";", " ", "\n", "\r",
                           "password", "PWD", "=", "  ", "'", "Vq8mZr2Tn5Wb", "eHkAlJRgz2M1MsSl",
                           "x" * 70, "machine", "login", "me", "host"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=40))
@example(["Server=db", ";", "x" * 70, "x" * 70, "x" * 70, " ", "password", "=", "Vq8mZr2Tn5Wb"])
@example(["uid=etl", ";", " ", "pwd", "  ", "=", "eHkAlJRgz2M1MsSl", ";", "PWD", "=", "Vq8mZr2Tn5Wb"])
def test_the_connection_string_suffix_reports_every_end_re_finds(pieces):
    data = "".join(pieces).encode()
    expr, flags = rx.hyperscan_pattern(CONNECTION)
    assert _re_ends(CONNECTION, data) <= hyperscan_ends([expr], flags, data)


@pytest.mark.parametrize("pattern, run", [
    (r"p(?:assword|wd)=", 4),  # every match holds "password=" or "pwd="
    (r"(?:server|uid|dsn)\s=", 3),
    (r"(?:ab|[0-9])c", 1),  # a class alternative ends the run
])
def test_literal_run_through_literal_branches(pattern, run):
    from tcg._lean.reparse import parser

    assert rx._factor(parser.parse(pattern.encode()).data, branches=True) == run
