"""The server → client fast path (raw screen + Latin-1 parse + scan without re-encoding)
must decide exactly as the ordinary path: same bytes out for every line, and no
escape, encoding or read boundary that smuggles a secret past it."""

from __future__ import annotations

import base64
import json
import random
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcg.detect.engine import load_detector
from tcg.jsonrpc import INVALID, LineSplitter, parse_line
from tcg.keyhash import KeyedHasher
from tcg.mcp.check_request import RequestChecker
from tcg.mcp.fast_parse import RawScreen, from_latin1, parse_latin1
from tcg.mcp.mask_response import ResponseMasker
from tcg.mcp.proxy import McpSession
from tcg.mcp.relay import CLIENT
from tests.mcp.helpers import assert_no_leak, planted_secrets

SCREEN = RawScreen()
pytestmark = pytest.mark.skipif(not SCREEN.available, reason="no hyperscan: the fast path is off")


@pytest.fixture(scope="module")
def masker():
    return ResponseMasker(load_detector(), KeyedHasher.for_install())


@pytest.fixture
def sessions(masker, tmp_path):
    """(fast, ordinary): the same masker, the fast path on and off."""
    fast = McpSession(RequestChecker(cwd=tmp_path), masker)
    slow = McpSession(RequestChecker(cwd=tmp_path), masker, fast_path=False)
    assert fast._screen is not None and slow._screen is None
    return fast, slow


@pytest.fixture
def secrets():
    return planted_secrets()


def _frame(text: str, *, mid: object = 1, extra: str = "") -> bytes:
    """A response line whose text field is the raw JSON string body ``text`` (escapes as written)."""
    return (f'{{"jsonrpc":"2.0","id":{json.dumps(mid, ensure_ascii=False)},'
            f'"result":{{"content":[{{"type":"text","text":"{text}"}}]{extra}}}}}').encode()


def _same_and_clean(sessions, line: bytes, secrets: list[str]) -> bytes:
    fast, slow = sessions
    out_fast, out_slow = fast.from_server(line), slow.from_server(line)
    assert out_fast == out_slow
    sent = b"".join(data for dest, data in out_fast if dest == CLIENT)
    assert_no_leak(sent, secrets)
    for data in sent.splitlines():
        assert parse_line(data).kind != INVALID  # never a broken frame
    return sent


# ------------------------------------------------------------ the screen


UTF8_CASES = [b"plain", "é漢𝄞\u2028\u0085".encode(), b"\xc3", b"\xc3(", b"\x80", b"\xc0\xaf", b"\xe0\x80\xaf",
              b"\xed\xa0\x80", b"\xed\x9f\xbf", b"\xf4\x8f\xbf\xbf", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80",
              b"\xef\xbf\xbd", b"a\xe6\xbc", b"\xff\xfe", b"\x00\x7f"]


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@pytest.mark.parametrize("data", UTF8_CASES)
def test_screen_utf8_equals_pythons_strict_decoder(data):
    for d in (data, b"x" * 3 + data, data + b"tail"):
        assert SCREEN.scan(d).utf8 == _is_utf8(d)


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=40) | st.text(max_size=20).map(lambda s: s.encode("utf-8", "surrogatepass")))
def test_screen_utf8_property(data):
    if data:
        assert SCREEN.scan(data).utf8 == _is_utf8(data)


def test_screen_escape_and_run_facts():
    assert SCREEN.scan(b'"a\\u0041"').u_escape
    assert SCREEN.scan(b'"a\\\\u"').u_escape  # conservative: an escaped backslash before u
    assert not SCREEN.scan(b'"a\\n\\t\\"\\\\b"').u_escape
    assert SCREEN.scan(b'"' + b"A" * 24 + b'"').run
    assert not SCREEN.scan(b'"' + b"A" * 23 + b" " + b"A" * 23 + b'"').run
    # \/ decodes into the alphabet: two short raw runs can be one long decoded run
    assert SCREEN.scan(b'"' + b"A" * 20 + b"\\/" + b"A" * 20 + b'"').run
    assert SCREEN.scan(b'"x==="').triple_eq and not SCREEN.scan(b'"x=="').triple_eq


# ------------------------------------------------------------ the Latin-1 parse

VALID_LINES = [
    b'{"jsonrpc":"2.0","id":1,"result":{}}',
    '{"jsonrpc":"2.0","id":"é-漢","result":{"ключ":"значение 𝄞","a":[1,2.5e3,true,null]}}'.encode(),
    b'{"jsonrpc":"2.0","method":"notifications/message","params":{"t":"q\\"b\\\\s\\/n\\nt\\tb\\bf\\fr\\r"}}',
    '{"jsonrpc":"2.0","id":2,"method":"roots/list","params":{"x":"\u2028\u0085"}}'.encode(),
    b' {"jsonrpc" : "2.0" , "id" : -7 , "error" : {"code":-1,"message":"m","data":[{}]}} ',
]
INVALID_LINES = [
    '{"jsonrpc":"2.0","id":1,"result":{"é":1,"é":2}}'.encode(),   # duplicate non-ASCII keys
    b'{"jsonrpc":"2.0","id":1,"result":{"n":NaN}}',
    b'{"jsonrpc":"2.0","id":1,"result":{"t":"raw\tcontrol"}}',
    b'{"jsonrpc":"2.0","id":1,"result":{"t":"bad \\q escape"}}',
    '{"jsonrpc":"2.0","id":1,"result":{"n":١}}'.encode(),           # an Arabic-Indic digit
    b'[{"jsonrpc":"2.0","id":1,"result":{}}]',
    b'{"jsonrpc":"2.0","id":1,"result":"not an object"}',
    b'{"jsonrpc":"2.0","id":1,"result":{}',
]


@pytest.mark.parametrize("line", VALID_LINES)
def test_latin1_parse_equals_the_utf8_parse(line):
    fast, real = parse_latin1(line), parse_line(line)
    assert fast is not None and fast.kind == real.kind
    assert from_latin1(fast.obj) == real.obj
    for s in _strings(fast.obj):  # the Latin-1 view of a string is its UTF-8 bytes
        assert s.encode("latin-1") == from_latin1(s).encode("utf-8")


@pytest.mark.parametrize("line", INVALID_LINES)
def test_latin1_parse_refuses_what_the_utf8_parse_refuses(line, sessions):
    assert parse_latin1(line) is None and parse_line(line).kind in (INVALID, "batch")
    _same_and_clean(sessions, line, [])


def _strings(node):
    from tcg.leanjson import strings_in

    return strings_in(node)


# ------------------------------------------------------------ smuggling attempts


def test_verbatim_and_key_and_multibyte_neighbours(sessions, secrets):
    a, b = secrets["TEST_SECRET_A"], secrets["TEST_SECRET_B"]
    line = _frame(f"漢{a}𝄞 and \\n{b}\\n", mid="é-1", extra=f',"structuredContent":{{"{a}":"é"}}')
    sent = _same_and_clean(sessions, line, [a, b])
    assert json.loads(sent)["id"] == "é-1"


def test_secret_written_with_u_escapes(sessions, secrets):
    a = secrets["TEST_SECRET_A"]
    escaped = "".join(f"\\u{ord(c):04x}" for c in a)
    for text in (escaped, escaped.upper().replace("\\U", "\\u"), f"x {a[:6]}{escaped[6 * 6:]} y"):
        assert b"<SECRET:" in _same_and_clean(sessions, _frame(text), [a])


def test_secret_split_by_escaped_characters(sessions, secrets):
    rng = random.SystemRandom()
    hook = ("https://hooks.slack.com/services/T" + "".join(rng.choices(string.ascii_uppercase, k=9))
            + "/B" + "".join(rng.choices(string.ascii_uppercase, k=9)) + "/"
            + "".join(rng.choices(string.ascii_letters + string.digits, k=24)))
    aws = "".join(rng.choices(string.ascii_letters + string.digits, k=18)) + "/" + \
        "".join(rng.choices(string.ascii_letters + string.digits, k=21))
    for text, secret in ((hook.replace("/", "\\/"), hook),                       # PHP-style escaped slashes
                         ('aws_secret_access_key=\\"' + aws.replace("/", "\\/") + '\\"', aws),
                         (f"PAT:\\t{secrets['TEST_SECRET_A']}\\r\\n", secrets["TEST_SECRET_A"])):
        sent = _same_and_clean(sessions, _frame(text), [secret])
        assert b"<SECRET:" in sent, text


def test_private_key_block_with_escaped_newlines(sessions):
    body = base64.b64encode(bytes(range(256)) * 4).decode()
    pem = "-----BEGIN RSA PRIVATE KEY-----\\n" + "\\n".join(
        body[i:i + 64] for i in range(0, len(body), 64)) + "\\n-----END RSA PRIVATE KEY-----\\n"
    sent = _same_and_clean(sessions, _frame("key:\\n" + pem), [])
    assert body[:64].encode() not in sent and b"PRIVATE KEY-----\\n" not in sent


@pytest.mark.parametrize("form", ["run", "whole", "mime", "url", "padded", "slashes"])
def test_base64_encoded_secret(sessions, secrets, form):
    a = secrets["TEST_SECRET_D"]
    b64 = base64.b64encode(f"NPM_TOKEN={a}\n".encode()).decode()
    text = {
        "run": f"config: {b64} end",
        "whole": b64,
        "mime": "\\n".join(b64[i:i + 12] for i in range(0, len(b64), 12)),  # lines under a run's length
        "url": base64.urlsafe_b64encode(f"x {a} y".encode()).decode(),
        "padded": f"blob {b64.rstrip('=')}=== tail",
        "slashes": f"data {b64} end".replace("/", "\\/"),
    }[form]
    line = _frame(text)
    assert _same_and_clean(sessions, line, [a]) != line + b"\n"  # masked (a whole blob: base64 of it)


def test_binary_blob_with_a_secret_inside(sessions, secrets):
    a = secrets["TEST_SECRET_A"]
    blob = base64.b64encode(b"\x89PNG\r\n\x1a\n\x00\x01" * 50 + f"TOKEN={a}".encode()).decode()
    line = _frame("img", extra=',"image":{"data":"' + blob.replace("/", "\\/") + '"}')
    assert _same_and_clean(sessions, line, [a]) != line + b"\n"


def test_invalid_utf8_and_lone_surrogates_never_pass(sessions, secrets):
    a = secrets["TEST_SECRET_A"]
    for bad in (b"\xed\xa0\x80", b"\xc0\xaf", b"\xff", b"\xe6\xbc"):
        line = _frame(a).replace(b'"text":"', b'"text":"' + bad)
        fast, slow = sessions
        assert fast.from_server(line) == slow.from_server(line)
        assert a.encode() not in b"".join(d for _, d in fast.from_server(line))
    line = _frame(f"\\ud800{a}")  # a lone surrogate escape: the ordinary path
    assert b"<SECRET:" in _same_and_clean(sessions, line, [a])


def test_multibyte_utf8_cut_by_every_read_boundary(sessions, secrets):
    """The relay joins whole lines; whatever the chunking, the fast path sees the same line."""
    a = secrets["TEST_SECRET_C"]
    line = _frame(f"漢字✓—é\u2028\u0085𝄞 {a} 𝄞")
    splitter = LineSplitter()
    got = []
    for i in range(0, len(line) + 1, 1):
        got += splitter.feed((line + b"\n")[i:i + 1])
    assert got == [line]
    assert b"<SECRET:" in _same_and_clean(sessions, got[0], [a])


def test_roots_request_with_a_non_ascii_id_is_remembered_by_its_real_id(sessions, tmp_path):
    fast, _ = sessions
    root = tmp_path / "r"
    root.mkdir()
    (tmp_path / ".env").write_text("x")
    (root / "cfg").symlink_to(tmp_path / ".env")
    req = '{"jsonrpc":"2.0","id":"rö-1","method":"roots/list"}'.encode()
    assert fast.from_server(req) == [(CLIENT, req + b"\n")]
    fast.from_client(json.dumps({"jsonrpc": "2.0", "id": "rö-1",
                                 "result": {"roots": [{"uri": root.as_uri()}]}}).encode())
    out = fast.from_client(b'{"jsonrpc":"2.0","id":6,"method":"m","params":{"path":"cfg"}}')
    assert json.loads(out[0][1])["error"]["data"]["rule"] == "mcp-dotenv"


def test_clean_frames_keep_their_bytes_and_counts(sessions):
    fast, slow = sessions
    for line in VALID_LINES:
        assert fast.from_server(line) == slow.from_server(line) == [(CLIENT, line + b"\n")]
    assert fast.counts == slow.counts


# ------------------------------------------------------------ generated frames

_SECRET = planted_secrets()
_PIECES = st.sampled_from([
    "plain words ", "é", "漢字", "𝄞", "\u2028", "\u0085", "\n", "\t", "\r", "\b", "\f", '"', "\\", "/", "=",
    "==", "\x1b[31m", "\x00", "\ud800", "AAAA", "Zm9v", _SECRET["TEST_SECRET_A"], _SECRET["TEST_SECRET_B"],
    base64.b64encode(f"TOKEN={_SECRET['TEST_SECRET_D']}".encode()).decode(),
    _SECRET["TEST_SECRET_C"][:9], _SECRET["TEST_SECRET_C"][9:],
])
_STRINGS = st.lists(_PIECES, max_size=6).map(" ".join)  # a token glued to letters is no secret
_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | _STRINGS,
                       lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_STRINGS, inner, max_size=3),
                       max_leaves=8)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(result=st.dictionaries(_STRINGS, _VALUES, max_size=4), ascii_only=st.booleans(),
       escape_slash=st.booleans(), mid=st.integers() | st.text(min_size=1, max_size=5))
def test_generated_frames_fast_equals_ordinary(sessions, result, ascii_only, escape_slash, mid):
    """Ids are the envelope (never masked), so only they hold no planted secret."""
    obj = {"jsonrpc": "2.0", "id": mid, "result": result}
    text = json.dumps(obj, ensure_ascii=ascii_only, separators=(",", ":"))
    if escape_slash:
        text = text.replace("/", "\\/")
    line = text.encode("utf-8", "surrogatepass")
    fast, slow = sessions
    out = fast.from_server(line)
    assert out == slow.from_server(line)
    sent = b"".join(d for dest, d in out if dest == CLIENT)
    assert_no_leak(sent, list(_SECRET.values()))
