"""tcg.digest computes exactly what hashlib and hmac compute: its SHA-256 is the
interpreter's builtin one (no OpenSSL load for a file name or a fingerprint), its
HMAC the standard library's."""

from __future__ import annotations

import hashlib
import hmac

from hypothesis import given, settings
from hypothesis import strategies as st

from tcg.digest import compare_digest, hmac_sha256, sha256, sha256_hex


@settings(max_examples=300, deadline=None)
@given(key=st.binary(max_size=200), message=st.binary(max_size=3000))
def test_hmac_matches_the_stdlib(key, message):
    # Keys shorter than, equal to and longer than the 64-byte block.
    assert hmac_sha256(key, message) == hmac.new(key, message, hashlib.sha256).hexdigest()


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=5000))
def test_sha256_matches_hashlib(data):
    assert sha256_hex(data) == hashlib.sha256(data).hexdigest()
    h = sha256()
    h.update(data)
    h.update(b"tail")
    assert h.hexdigest() == hashlib.sha256(data + b"tail").hexdigest()


def test_compare_digest():
    assert compare_digest(b"abc", b"abc")
    assert not compare_digest(b"abc", b"abd")
    assert not compare_digest(b"abc", b"ab")


def test_rfc4231_case_2():
    # RFC 4231 test case 2: key "Jefe".
    assert hmac_sha256(b"Jefe", b"what do ya want for nothing?") == (
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    )
