"""tcg.digest computes exactly what hashlib and hmac compute: its SHA-256 and
BLAKE2b are the interpreter's builtin ones (no OpenSSL load for a file name, a
fingerprint or a signed file's MAC), its HMAC the standard library's."""

from __future__ import annotations

import hashlib
import hmac

from hypothesis import given, settings
from hypothesis import strategies as st

from tcg._lean.blake import blake2b
from tcg.digest import blake2b_256, compare_digest, hmac_sha256, keyed_blake2b, sha256, sha256_hex


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


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=5000))
def test_blake2b_256_matches_hashlib(data):
    h = blake2b_256(data)
    h.update(b"tail")
    assert h.hexdigest() == hashlib.blake2b(data + b"tail", digest_size=32).hexdigest()


@settings(max_examples=300, deadline=None)
@given(key=st.binary(min_size=1, max_size=64), message=st.binary(max_size=3000),
       person=st.binary(max_size=16))
def test_keyed_blake2b_matches_hashlib(key, message, person):
    want = hashlib.blake2b(message, digest_size=32, key=key, person=person).hexdigest()
    assert keyed_blake2b(key, message, person) == want


def test_keyed_blake2b_separates_keys_and_domains():
    one = keyed_blake2b(b"k" * 32, b"message", b"tcg signed file")
    assert one != keyed_blake2b(b"K" * 32, b"message", b"tcg signed file")
    assert one != keyed_blake2b(b"k" * 32, b"message", b"tcg session id")
    assert one != hashlib.blake2b(b"message", digest_size=32).hexdigest()  # the key is used


def test_blake2b_known_answers():
    # RFC 7693, Appendix A: BLAKE2b-512("abc").
    assert blake2b(b"abc").hexdigest() == (
        "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1"
        "7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923")
    # The keyed known-answer tests of the BLAKE2 reference (blake2b-kat.txt): key 00..3f,
    # input empty and 00..fe.
    key = bytes(range(64))
    assert blake2b(b"", key=key).hexdigest() == (
        "10ebb67700b1868efb4417987acf4690ae9d972fb7a590c2f02871799aaa4786"
        "b5e996e8f0f4eb981fc214b005f42d2ff4233499391653df7aefcbc13fc51568")
    assert blake2b(bytes(range(255)), key=key).hexdigest() == (
        "142709d62e28fcccd0af97fad0f8465b971e82201dc51070faa0372aa43e9248"
        "4be1c1e73ba10906d5d1853db6a4106e0a7bf9800d373d6dee2d46d62ef2a461")
