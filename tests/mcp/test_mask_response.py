"""Response masking: every string field, keys, base64 blobs, placeholders as the masker's."""

from __future__ import annotations

import base64
import json

import pytest

from tcg.detect.engine import load_detector
from tcg.keyhash import KeyedHasher
from tcg.mask import mask_text
from tcg.mcp.mask_response import MaskStats, ResponseMasker, base64_runs
from tests.mcp.helpers import assert_no_leak, planted_secrets


@pytest.fixture
def masker():
    return ResponseMasker(load_detector(), KeyedHasher.for_install())


@pytest.fixture
def secrets():
    return planted_secrets()


def test_placeholders_equal_the_maskers(masker, secrets):
    text = f"a {secrets['TEST_SECRET_A']} b {secrets['TEST_SECRET_B']} é漢"
    assert masker.mask_string(text, MaskStats()) == mask_text(text)


def test_every_field_and_key_is_masked_envelope_kept(masker, secrets):
    a, b, c, d = (secrets[k] for k in sorted(secrets))
    msg = {"jsonrpc": "2.0", "id": "x-1", "result": {
        "content": [{"type": "text", "text": f"token {a}"}],
        "structuredContent": {"cfg": {"k": b, "list": [1, True, None, c]}, d: "as key"},
        "tools": [{"name": "t", "description": f"uses {a}"}],
    }}
    out, stats = masker.mask_message(msg)
    assert out["id"] == "x-1" and out["jsonrpc"] == "2.0"
    assert stats.spans == 5 and {"github-pat-classic", "stripe-live-secret-key"} <= stats.rules
    assert_no_leak(json.dumps(out).encode(), [a, b, c, d])
    assert out["result"]["structuredContent"]["cfg"]["list"][:3] == [1, True, None]
    assert json.dumps(msg).count(a) == 2  # the input is not modified


def test_error_messages_and_notifications(masker, secrets):
    a = secrets["TEST_SECRET_A"]
    err = {"jsonrpc": "2.0", "id": 3, "error": {"code": -1, "message": f"bad {a}", "data": {"x": a}}}
    out, stats = masker.mask_message(err)
    assert stats.spans == 2 and a not in json.dumps(out)
    note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": f"log {a}"}}
    out, _ = masker.mask_message(note)
    assert out["method"] == "notifications/message" and a not in json.dumps(out)


@pytest.mark.parametrize("prefix", [b"", b"x\n" * 3000, b"\x89PNG\r\n\x1a\n\x00\x01" * 700])
def test_whole_base64_blob_becomes_base64_of_the_placeholder(masker, secrets, prefix):
    a = secrets["TEST_SECRET_A"]
    for enc in (base64.b64encode, base64.urlsafe_b64encode):
        blob = enc(prefix + f"\nTOKEN={a}\n".encode()).decode()
        stats = MaskStats()
        out = masker.mask_string(blob, stats)
        assert stats.spans == 1
        assert base64.b64decode(out, altchars=b"-_" if enc is base64.urlsafe_b64encode else None) \
            .startswith(b"<SECRET:")


def test_base64_runs_inside_text_short_and_long(masker, secrets):
    a = secrets["TEST_SECRET_A"]
    short = base64.b64encode(f"TOKEN={a}".encode()).decode()
    long_ = base64.b64encode(b"line\n" * 2000 + f"TOKEN={a}\n".encode()).decode()
    for run in (short, long_, short + "==="):
        text = f'data:text/plain;base64,{run} and more'
        out = masker.mask_string(text, MaskStats())
        assert out.startswith("data:text/plain;base64,<SECRET:") and out.endswith(" and more")
        assert_no_leak(out.encode(), [a])


def test_harmless_base64_and_text_untouched(masker):
    png = base64.b64encode(bytes(range(256)) * 50).decode()
    for s in (png, "hello world", "ghp_short", "a" * 10000):
        assert masker.mask_string(s, MaskStats()) is s


def test_ansi_split_and_private_key_blocks_use_the_streaming_masker(masker, secrets):
    a = secrets["TEST_SECRET_A"]
    colored = f"\x1b[31m{a[:10]}\x1b[0m{a[10:]}"
    assert a[12:] not in masker.mask_string(colored, MaskStats())
    body = base64.b64encode(bytes(range(256)) * 4).decode()
    pem = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(
        body[i:i + 64] for i in range(0, len(body), 64)) + "\n-----END RSA PRIVATE KEY-----\n"
    out = masker.mask_string("key:\n" + pem + "done", MaskStats())
    assert "PRIVATE KEY-----\n" not in out and body[:64] not in out and out.endswith("done")


@pytest.mark.parametrize("inside", ["\x00", "\u200b", "\u00ad", "\u2060", "\ufeff", "\x01"])
def test_an_invisible_character_inside_a_token_does_not_hide_it(masker, secrets, inside):
    """A model reads straight through NUL and zero-width characters: a string holding
    one goes through the masker's clean view, which drops them."""
    a = secrets["TEST_SECRET_A"]
    split = a[:12] + inside + a[12:]
    message = {"jsonrpc": "2.0", "id": 1,
               "result": {"content": [{"type": "text", "text": f"token {split} end"}]}}
    assert not masker.is_clean(message)
    out, _stats = masker.mask_message(message)
    text = out["result"]["content"][0]["text"]
    assert a[12:] not in text and a[:12] not in text and text.startswith("token <SECRET:")


def test_base64_runs_are_maximal():
    data = b"ab " + b"Q" * 30 + b"== x " + b"Z" * 23 + b" " + b"Y" * 24
    assert base64_runs(data) == [(3, 35), (62, 86)]


@pytest.mark.parametrize("wrap", [
    lambda b: f"config blob {b} end",          # a run inside text (the joined fast-path scan)
    lambda b: b,                               # the whole field
    lambda b: f"x\r\n{b}\r\n",                 # CR: the streaming masker's path
])
def test_message_level_base64_secret_is_never_passed_as_clean(masker, secrets, wrap):
    a = secrets["TEST_SECRET_D"]
    b64 = base64.b64encode(f"NPM_TOKEN={a}".encode()).decode()
    msg = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": wrap(b64)}],
                                                   "other": "harmless"}}
    assert not masker.is_clean(msg)
    out, stats = masker.mask_message(msg)
    assert stats.spans == 1
    assert_no_leak(json.dumps(out).encode(), [a])


def test_clean_messages_take_the_fast_path_unchanged(masker):
    msg = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "hello " * 50}],
                                                   "isError": False, "n": [1, 2.5, None]}}
    out, stats = masker.mask_message(msg)
    assert out is msg and stats.spans == 0
    # a whole-field base64-looking string (a UUID) takes the per-string path, still unchanged
    msg["result"]["uuid"] = "2f1c0a7e-4b7d-4c1e-9f0a-1b2c3d4e5f60"
    out, stats = masker.mask_message(msg)
    assert out == msg and stats.spans == 0


def test_message_level_long_base64_run_inside_text(masker, secrets):
    a = secrets["TEST_SECRET_A"]
    long_ = base64.b64encode(b"line\n" * 2000 + f"TOKEN={a}\n".encode()).decode()
    msg = {"jsonrpc": "2.0", "id": 1, "result": {"text": f"attachment: {long_} (end)"}}
    assert not masker.is_clean(msg)
    out, stats = masker.mask_message(msg)
    assert stats.spans == 1 and out["result"]["text"].endswith(" (end)")
    assert_no_leak(json.dumps(out).encode(), [a])


@pytest.mark.parametrize("text", ["words \b{s}", "words {s}\b", "{s}\x1b[0m\b", "x \x1b[2K\b{s} y"])
def test_terminal_rewrites_cannot_hide_a_secret_the_raw_string_holds(masker, secrets, text):
    """The streaming masker matches the terminal's view (a backspace erases the space
    before the token, or the token's last character); a model reads the raw string."""
    a = secrets["TEST_SECRET_A"]
    stats = MaskStats()
    out = masker.mask_string(text.format(s=a), stats)
    assert stats.spans >= 1
    assert_no_leak(out.encode(), [a])


def _random(n: int, seed: int) -> bytes:
    import random

    return random.Random(seed).randbytes(n)


@pytest.mark.parametrize(("size", "mime"), [(1_000_000, "image/png"), (3_000_000, "audio/wav"),
                                            (5_000_000, "application/octet-stream")])
def test_random_binary_blobs_come_back_byte_identical(masker, size, mime):
    data = _random(size, size)
    b64 = base64.b64encode(data).decode()
    msg = {"jsonrpc": "2.0", "id": 7, "result": {"content": [
        {"type": "image", "data": b64, "mimeType": mime},
        {"type": "resource", "resource": {"uri": "file:///x", "blob": b64, "mimeType": mime}}]}}
    out, stats = masker.mask_message(msg)
    assert out == msg and stats.spans == 0


def test_personal_data_in_binary_is_not_masked_a_secret_is(masker, secrets):
    a = secrets["TEST_SECRET_A"]
    png = b"\x89PNG\r\n\x1a\n" + _random(4000, 1) + b"\x00\x00tEXtAuthor\x00ivan.petrov@yandex.ru\x00" \
        + _random(4000, 2)
    b64 = base64.b64encode(png).decode()
    for mime in ("image/png", "application/octet-stream"):
        item = {"type": "resource", "resource": {"uri": "file:///a.png", "blob": b64, "mimeType": mime}}
        out, stats = masker.mask_message({"jsonrpc": "2.0", "id": 1, "result": {"contents": [item]}})
        assert out["result"]["contents"][0] == item and stats.spans == 0
    with_token = base64.b64encode(png + f"\x00tEXtComment\x00TOKEN={a}\x00".encode()).decode()
    out = masker.mask_string(with_token, MaskStats(), media=True)
    assert base64.b64decode(out).startswith(b"<SECRET:")


def test_media_items_keep_personal_data_text_fields_do_not(masker):
    svg = base64.b64encode(b'<svg xmlns="http://www.w3.org/2000/svg"><desc>by ivan.petrov@yandex.ru'
                           b'</desc></svg>').decode()
    image = {"type": "image", "data": svg, "mimeType": "image/svg+xml"}
    out, _ = masker.mask_message({"jsonrpc": "2.0", "id": 1, "result": {"content": [image]}})
    assert out["result"]["content"][0] == image  # a media payload: secrets only
    text = {"type": "resource", "resource": {"uri": "file:///n.txt", "blob": svg, "mimeType": "text/plain"}}
    out, stats = masker.mask_message({"jsonrpc": "2.0", "id": 1, "result": {"contents": [text]}})
    assert base64.b64decode(out["result"]["contents"][0]["resource"]["blob"]).startswith(b"<PII:email:")
    assert stats.spans == 1


def test_a_token_that_merely_looks_like_base64_is_still_masked(masker, secrets):
    token = secrets["TEST_SECRET_A"]
    out = masker.mask_string(token, MaskStats(), media=True)
    assert token not in out and "<SECRET:" in out
