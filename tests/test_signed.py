"""tcg.signed: a signed file's MAC is keyed BLAKE2b (in its own domain) of the tag,
a NUL and the body; any change to the MAC, the body, the tag or the key makes the
file read as absent; the HMAC-SHA256 line of earlier versions is accepted only
where a caller asks for it (records that outlive an upgrade)."""

from __future__ import annotations

import hashlib
import hmac

from hypothesis import given, settings
from hypothesis import strategies as st

from tcg import signed

KEY = b"k" * 32


def _blake_line(key: bytes, tag: str, body: bytes) -> bytes:
    h = hashlib.blake2b(tag.encode() + b"\0" + body, digest_size=32, key=key, person=b"tcg signed file")
    return b"blake2b:" + h.hexdigest().encode()


def _hmac_line(key: bytes, tag: str, body: bytes) -> bytes:
    return hmac.new(key, tag.encode() + b"\0" + body, hashlib.sha256).hexdigest().encode()


@settings(max_examples=200, deadline=None)
@given(key=st.binary(min_size=32, max_size=32), tag=st.text(max_size=40), body=st.binary(max_size=2000))
def test_the_mac_line_is_keyed_blake2b_of_tag_and_body(key, tag, body):
    data = signed.signed_bytes(key, tag, body)
    assert data == _blake_line(key, tag, body) + b"\n" + body
    assert signed.verify(key, tag, data) == body


def test_tampering_reads_as_absent(tmp_path):
    path = tmp_path / "d" / "file"
    assert signed.write_signed(path, KEY, "kind", b"line one\nline two")
    assert signed.read_signed(path, KEY, "kind") == b"line one\nline two"
    good = path.read_bytes()
    mac, _, body = good.partition(b"\n")
    flipped = mac[:-1] + (b"0" if mac[-1:] != b"0" else b"1")
    for forged in (mac + b"\nline one\nline twO",  # the body
                   flipped + b"\n" + body,  # the MAC
                   good[:-1],  # truncated
                   body,  # unsigned
                   b"",
                   _blake_line(b"x" * 32, "kind", body) + b"\n" + body,  # another install's key
                   _blake_line(KEY, "other", body) + b"\n" + body,  # another tag
                   b"blake2b:" + hashlib.blake2b(b"kind\0" + body, digest_size=32).hexdigest().encode()
                   + b"\n" + body):  # unkeyed
        path.write_bytes(forged)
        assert signed.read_signed(path, KEY, "kind") is None, forged
        assert signed.read_signed(path, KEY, "kind", legacy=True) is None, forged
    assert signed.read_signed(tmp_path / "absent", KEY, "kind") is None


def test_the_earlier_hmac_line_only_where_asked_for(tmp_path):
    path = tmp_path / "record"
    path.write_bytes(_hmac_line(KEY, "trash/manifest.json", b"{}") + b"\n{}")
    assert signed.read_signed(path, KEY, "trash/manifest.json") is None  # caches: rebuilt instead
    assert signed.read_signed(path, KEY, "trash/manifest.json", legacy=True) == b"{}"
    assert signed.read_signed_json(path, KEY, "trash/manifest.json", legacy=True) == {}
    assert signed.read_signed(path, b"x" * 32, "trash/manifest.json", legacy=True) is None
    assert signed.read_signed(path, KEY, "trash/settled.json", legacy=True) is None
    path.write_bytes(_hmac_line(KEY, "trash/manifest.json", b"{}") + b"\n{ }")
    assert signed.read_signed(path, KEY, "trash/manifest.json", legacy=True) is None


def _whole(start: bytes, size: int) -> list[int]:
    return [size]


@settings(max_examples=100, deadline=None)
@given(key=st.binary(min_size=32, max_size=32), tag=st.text(max_size=40), body=st.binary(max_size=9000),
       cuts=st.lists(st.integers(min_value=0, max_value=9000), max_size=4))
def test_the_read_in_pieces_is_the_same_check(tmp_path_factory, key, tag, body, cuts):
    """read_signed_pieces (the detector's 1.3 MB database, each part into bytes of
    its own) accepts exactly what read_signed accepts, wherever the body is cut,
    returns the body in those pieces, and the MAC line as its identity."""
    path = tmp_path_factory.mktemp("v") / "file"
    assert signed.write_signed(path, key, tag, body)
    seen = []

    def cut(start: bytes, size: int) -> list[int]:
        seen.append((start, size))
        at = sorted({min(c, size) for c in cuts} | {0, size})
        return [b - a for a, b in zip(at, at[1:], strict=False)] or [0]

    got = signed.read_signed_pieces(path, key, tag, cut)
    assert got is not None
    mac, pieces = got
    assert all(type(p) is bytes for p in pieces)
    assert b"".join(pieces) == body == signed.read_signed(path, key, tag)
    assert seen == [(body[:signed.PEEK], len(body))]
    assert mac == _blake_line(key, tag, body)
    assert signed.read_signed_pieces(path, key, tag + "x", cut) is None
    assert signed.read_signed_pieces(path, bytes(b ^ 1 for b in key), tag, cut) is None


def test_the_read_in_pieces_refuses_tampering_legacy_lines_and_wrong_cuts(tmp_path):
    path = tmp_path / "file"
    body = b"meta\n" + bytes(range(256)) * 64
    assert signed.write_signed(path, KEY, "kind", body)
    good = path.read_bytes()
    for bad in (good[:-1], good + b"x", good[:100] + bytes([good[100] ^ 1]) + good[101:],
                b"x" + good, b"no newline at all",
                _hmac_line(KEY, "kind", body) + b"\n" + body):  # legacy HMAC: caches never take it
        path.write_bytes(bad)
        assert signed.read_signed_pieces(path, KEY, "kind", _whole) is None
    path.write_bytes(good)
    assert signed.read_signed_pieces(path, KEY, "kind", _whole) == (good.partition(b"\n")[0], [body])
    for wrong in (lambda s, n: None, lambda s, n: [n - 1], lambda s, n: [n + 1], lambda s, n: [n + 1, -1],
                  lambda s, n: [1, n - 1, 1]):  # no cut, too short, too long, a negative piece
        assert signed.read_signed_pieces(path, KEY, "kind", wrong) is None
    path.unlink()
    assert signed.read_signed_pieces(path, KEY, "kind", _whole) is None
