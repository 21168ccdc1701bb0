"""Masked twins and strict masking of secret-store values (tcg.sandbox.twin)."""

from __future__ import annotations

import hashlib
import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from tcg.sandbox.twin import (
    StoreValueFilter,
    ValueMasker,
    make_twin,
    mask_assignment,
    store_key_is_secret,
)


def h8(value: bytes) -> str:
    return hashlib.sha256(value).hexdigest()[:8]


def ph(value: str) -> str:
    return f"<SECRET:secret-store-value:{h8(value.encode())}>"


def secret_key(key: str) -> bool:
    return store_key_is_secret(key)


def twin(text: str, name: str = ".env") -> str:
    return make_twin(text.encode(), name, secret_key, ValueMasker(h8)).decode()


class Identity:
    def feed(self, data: bytes) -> bytes:
        return data

    def flush(self) -> bytes:
        return b""

    def release_idle(self) -> bytes:
        return b""

    def idle_deadline(self):
        return None


def test_dotenv_twin_keeps_keys_quotes_and_harmless_values():
    src = ("# db settings\nDB_PASSWORD=quietmaplehorse\nexport API_TOKEN=\"abc123\"\nPORT=5432\nDEBUG=true\n"
           "EMPTY=\nHOST=db.internal # primary\n\n[section]\n")
    assert twin(src) == (f"#\nDB_PASSWORD={ph('quietmaplehorse')}\nexport API_TOKEN=\"{ph('abc123')}\"\n"
                         f"PORT=5432\nDEBUG=true\nEMPTY=\nHOST={ph('db.internal')} #\n\n[section]\n")


def test_secret_named_keys_are_masked_even_when_harmless_looking():
    assert twin("DB_PASSWORD=1234\nPIN=0000\nretries=3\n") == f"DB_PASSWORD={ph('1234')}\nPIN={ph('0000')}\nretries=3\n"


def test_aws_ini_and_npmrc():
    assert twin("[default]\naws_access_key_id = AKIA1\naws_secret_access_key = s3cr3t\nregion = eu-west-1\n",
                "credentials") == (f"[default]\naws_access_key_id = {ph('AKIA1')}\n"
                                   f"aws_secret_access_key = {ph('s3cr3t')}\nregion = {ph('eu-west-1')}\n")
    assert twin("//registry.npmjs.org/:_authToken=npm_abc\n", ".npmrc") == \
        f"//registry.npmjs.org/:_authToken={ph('npm_abc')}\n"


def test_netrc_and_pgpass_by_name():
    assert twin("machine api.example.com login deploy password hunter2\n", ".netrc") == \
        f"machine api.example.com login {ph('deploy')} password {ph('hunter2')}\n"
    assert twin("# comment\ndb:5432:app:app:quietriver\n", ".pgpass") == f"# comment\ndb:5432:app:app:{ph('quietriver')}\n"


def test_yaml_hosts_file_and_block_scalars():
    src = "github.com:\n    user: dev\n    oauth_token: gho_x\nkey: |\n  line-one\n  line-two\nnext: 1\n"
    assert twin(src, "hosts.yml") == (f"github.com:\n    user: {ph('dev')}\n    oauth_token: {ph('gho_x')}\n"
                                      f"key: |\n  {ph('line-one')}\n  {ph('line-two')}\nnext: 1\n")


def test_json_minified_and_arrays():
    src = '{"auths": {"registry.example.com": {"auth": "ZGV2OnB3"}}, "n": 2, "hosts": ["a", "b"]}'
    assert twin(src, "config.json") == ('{"auths": {"registry.example.com": {"auth": "' + ph("ZGV2OnB3") + '"}}, '
                                        '"n": 2, "hosts": ["' + ph("a") + '", "' + ph("b") + '"]}')


def test_pem_block_body_is_one_placeholder():
    src = "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\nBBBB\n-----END OPENSSH PRIVATE KEY-----\n"
    assert twin(src, "id_ed25519") == ("-----BEGIN OPENSSH PRIVATE KEY-----\n" + ph("pem")
                                       + "\n-----END OPENSSH PRIVATE KEY-----\n")


def test_bare_token_lines_lose_their_content():
    assert twin("hvs.abcdef\n", ".vault-token") == ph("hvs.abcdef") + "\n"


VALUE = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-./+", min_size=6, max_size=30).filter(
    lambda v: not v.isdigit())
KEY = st.from_regex(r"[A-Z][A-Z0-9_]{2,15}", fullmatch=True)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(KEY, VALUE, st.sampled_from(["", "export "]), st.sampled_from(["", '"', "'"])),
                min_size=1, max_size=8))
@example([("A00", "00000_", "export ", ""), ("A00", "export", "", "")])  # a value spelled like the keyword
def test_a_dotenv_twin_never_holds_a_value_and_keeps_every_key(entries):
    src = "".join(f"{exp}{k}={q}{v}{q}\n" for k, v, exp, q in entries)
    out = twin(src)
    # what the twin keeps of the syntax: placeholders and a line's `export ` keyword
    # (a value "export" is found in that keyword otherwise; in a value's place it is still seen)
    kept = re.sub(r"^export ", "", re.sub(r"<SECRET:[^>]*>", "", out), flags=re.MULTILINE)
    for k, v, _, _ in entries:
        assert f"{k}=" in out
        assert v not in kept


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["DB_PASSWORD", "API_KEY", "NAME", "SECRET_SALT"]), VALUE), min_size=1,
                max_size=6), st.data())
def test_store_value_filter_is_chunk_invariant_and_masks_secret_named_values(entries, data):
    src = "".join(f"{k}={v}\n" for k, v in entries).encode()
    cuts = sorted(data.draw(st.lists(st.integers(0, len(src)), max_size=5)))

    def run(pieces):
        f = StoreValueFilter(Identity(), secret_key, ValueMasker(h8))
        return b"".join(f.feed(p) for p in pieces) + f.flush()

    whole = run([src])
    bounds = [0, *cuts, len(src)]
    assert run([src[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]) == whole
    for k, v in entries:
        if k != "NAME":
            assert f"{k}={ph(v)}".encode() in whole


def test_mask_assignment_only_touches_assignments():
    m = ValueMasker(h8)
    assert mask_assignment(b"hello world", secret_key, m, all_values=False) is None
    assert mask_assignment(b"NAME=bob", secret_key, m, all_values=False) == b"NAME=bob"
    assert mask_assignment(b"  password: hunter2", secret_key, m, all_values=False) == \
        f"  password: {ph('hunter2')}".encode()
    assert m.count == 1
