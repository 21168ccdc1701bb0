"""Encoded secrets (base64/base64url runs) and the request normaliser."""

from __future__ import annotations

import base64
import os

import pytest

from tcg.detect.encoded import MAX_RUN, MIN_RUN, decode_run, encoded_runs
from tcg.detect.engine import Detector
from tcg.detect.normalize import normalize_for_match
from tests.detect.conftest import ENGINES
from tests.detect.rulesets import engine_rules

TOKEN = "tst_Q8wE2rT5yU7iO9pA3sD6fG"


@pytest.fixture(scope="module", params=ENGINES)
def det(request):
    return Detector.from_rules(engine_rules(), engine=request.param)


@pytest.mark.parametrize("encoder", [base64.b64encode, base64.urlsafe_b64encode,
                                     lambda b: base64.urlsafe_b64encode(b).rstrip(b"=")])
def test_encoded_secret_reports_whole_run(det, encoder):
    run = encoder(f'{{"auth": "{TOKEN}", "user": "ci"}}'.encode()).decode()
    text = f"config: {run}\nnext"
    assert det.find(text) == []  # not decoded unless asked
    (f,) = det.find(text, decode=True)
    assert text[f.start:f.end] == run
    assert (f.rule_id, f.category, f.encoding) == ("tst-token", "secret", "base64")


def test_basic_auth_header_is_decoded(det):
    creds = base64.b64encode(b"deploy:passwd=Hx9!kq2Lm#").decode()
    (f,) = det.find(f"Authorization: Basic {creds}", decode=True)
    assert f.rule_id == "tst-assign" and f.encoding == "base64"


def test_secret_preferred_over_pii_inside_a_run(det):
    run = base64.b64encode(f"ivan@corp.ru {TOKEN}".encode()).decode()
    (f,) = det.find(run, decode=True)
    assert f.rule_id == "tst-token"


def test_binary_and_oversized_runs_are_not_decoded(det):
    binary = base64.b64encode(os.urandom(48) + TOKEN.encode()).decode()
    assert decode_run(binary.encode()) is None
    huge = base64.b64encode((TOKEN + " ").encode() * 400).decode()  # > MAX_RUN characters
    assert len(huge) > MAX_RUN
    assert det.find(huge, decode=True) == []
    lockfile = "integrity sha512-" + base64.b64encode(os.urandom(64)).decode()
    assert det.find(lockfile, decode=True) == []


def test_runs_are_maximal_and_bounded():
    short = base64.b64encode(b"tiny").decode()
    assert list(encoded_runs(short.encode())) == []
    text = b"a=" + base64.b64encode(b"hello world, this is text") + b"; b"
    ((s, e, raw),) = list(encoded_runs(text))
    assert (s, raw) == (2, b"hello world, this is text")
    assert text[e:e + 1] == b";"


def test_direct_finding_inside_decoded_area_is_kept(det):
    # a plain secret next to an encoded one: both reported, no overlap
    run = base64.b64encode(f"x {TOKEN} y".encode()).decode()
    text = f"{TOKEN} {run}"
    fs = det.find(text, decode=True)
    assert [(f.rule_id, f.encoding) for f in fs] == [("tst-token", ""), ("tst-token", "base64")]


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("%2e%65nv", ".env"),
        ("%252e%252e%252fetc", "../etc"),
        ("%25252e%25252e", ".."),  # three rounds
        ("\\u002e\\u002e/\\u002essh/id_rsa", "../.ssh/id_rsa"),
        ("..%5c..%5cWindows", "../../Windows"),
        ("C:\\Users\\me\\.aws\\credentials", "C:/Users/me/.aws/credentials"),
        ("\\x2eenv", ".env"),
        ("plain/path.txt", "plain/path.txt"),
    ],
)
def test_normalize_for_match(raw, expected):
    assert normalize_for_match(raw) == expected


def test_normalize_is_not_applied_inside_find(det):
    encoded = TOKEN.replace("_", "%5F")
    assert det.find(encoded) == []
    assert det.find(normalize_for_match(encoded)) != []


def _reference_runs(data: bytes):
    """The definition in tcg/detect/encoded.py, spelled as plainly as possible."""
    import re

    out = []
    for m in re.finditer(rb"[A-Za-z0-9+/_\-]+", data):
        s, e = m.span()
        k = 0
        while e + k < len(data) and data[e + k : e + k + 1] == b"=":
            k += 1
        nxt = data[e + k : e + k + 1]
        if MIN_RUN <= e - s <= MAX_RUN and k <= 2 and not re.fullmatch(rb"[A-Za-z0-9+/_\-]", nxt):
            out.append((s, e + k))
    return out


def test_run_finder_matches_its_definition():
    import random

    rnd = random.Random(4)
    alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-"
    pieces = []
    for _ in range(400):
        kind = rnd.random()
        if kind < 0.5:
            pieces.append(base64.b64encode(b"plain text secret value %d " % rnd.randrange(10**9) * rnd.randrange(1, 4)))
        elif kind < 0.7:
            pieces.append(bytes(rnd.choice(alphabet) for _ in range(rnd.choice([10, 23, 24, 25, 60, 4097]))))
        else:
            pieces.append(rnd.choice([b" ", b"\n", b"=", b"==", b"===", b";", b"\xff", b"\"key\": \""]))
    data = b"".join(pieces)
    found = [(s, e) for s, e, _ in encoded_runs(data)]
    assert found == [(s, e) for s, e in _reference_runs(data) if decode_run(data[s:e]) is not None]
    assert len(found) > 20
