"""Masking a token glued to a word character (URL-encoded, ``\\u``-escaped, in a file name),
or to what follows it (a suffix, a word, another token), in strict and terminal mode, whole
and byte by byte. Before the rules dropped their leading ``\\b``, and most of them their
trailing boundary, every one of these passed through in clear."""

from __future__ import annotations

import pytest

from tests.mask.helpers import leaks, masker, run, slices

GHP = b"ghp_" + b"R7kQm2Xz9LpW4vNc8TyB3hJd6Fs1Ga5Ue0Yi"  # fake, valid shape
AKIA = b"AKIA" + b"QX7RZ2M4KD9PLW3T"  # fake, valid shape
PROJ = b"sk-proj-" + b"Qm4Zx8Lw2Nc7Rt5Vb9Hk3Jd6" + b"T3BlbkFJ" + b"Pa2Sd5Fg8Hj1Kl4Zx7Cv0Bn3"  # fake shape

TEXTS = [
    b"ok%3D" + GHP + b"%0A\r\n",
    b'"ok\\u003d' + GHP + b'\\n"\r\n',
    b"backup_" + GHP + b".tar  notes.txt\r\n",
    b"x" + AKIA + b".csv\r\n",
    b"GET /cb?next=%2F%3Ftoken%3D" + PROJ + b" 200\r\n",
]


@pytest.mark.parametrize("text", TEXTS, ids=range(len(TEXTS)))
@pytest.mark.parametrize("mode", ["strict", "terminal"])
def test_glued_token_is_masked(text, mode):
    needles = [n for v in (GHP, AKIA, PROJ) if v in text for n in slices(v, 8)]
    for sizes in ((), (1,) * len(text)):
        out = run(text, sizes, mode)
        assert b"<SECRET:" in out, (mode, sizes[:1])
        assert leaks(out, needles) == [], (mode, sizes[:1])


# glued at the other end: to a word, a file-name suffix, or another token run into it
STRIPE = b"sk_live_" + b"Qw8Er2Ty6Ui0Op4As8Df2Gh6"  # fake, valid shape (24)
SLACK = b"xoxb-" + b"203178505713-2682756137650-" + b"LRKxds9v9wUIvw4z38ek88zt"  # fake, valid shape
NPM = b"npm_" + b"MbHPcOmUFTxsOWLDxgUNWoxPB29I372oBz6z"  # fake, valid shape
TRAILING = [
    STRIPE + SLACK + b"\r\n",
    b"[" + GHP + b"x" * 50 + b"]\r\n",
    b"cp " + NPM + b"_backup.tar /tmp\r\n",
    SLACK + b"suffix " + STRIPE + b"-Lz3Xc7Vb1Nm5\r\n",
]


@pytest.mark.parametrize("text", TRAILING, ids=range(len(TRAILING)))
@pytest.mark.parametrize("mode", ["strict", "terminal"])
def test_token_glued_to_what_follows_is_masked(text, mode):
    needles = [n for v in (GHP, STRIPE, SLACK, NPM) if v in text for n in slices(v, 8)]
    for sizes in ((), (1,) * len(text)):
        out = run(text, sizes, mode)
        assert b"<SECRET:" in out, (mode, sizes[:1])
        assert leaks(out, needles) == [], (mode, sizes[:1])


def test_terminal_releases_a_word_ending_in_sk_dash_at_once():
    """``disk-`` is not held glued (a partial anchor needs 4 bytes there); ``sk-`` after a
    space is (openai-legacy-key keeps its boundary)."""
    m = masker("terminal")
    assert m.feed(b"$ ls /dev/disk-") == b"$ ls /dev/disk-"
    m = masker("terminal")
    assert m.feed(b"$ echo sk-") == b"$ echo "
