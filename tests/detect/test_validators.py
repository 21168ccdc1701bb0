"""Validators: known-valid numbers (public test numbers or computed with the
published algorithms) pass; one-digit mutations and structural misses fail."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import random

import pytest

from tcg.detect import validators as v
from tcg.detect.entropy import shannon_entropy


def _mutate_last(value: bytes) -> bytes:
    last = value[-1:]
    return value[:-1] + (b"0" if last != b"0" else b"1")


def _luhn_complete(prefix: str, length: int, rnd: random.Random) -> str:
    body = prefix + "".join(rnd.choice("0123456789") for _ in range(length - len(prefix) - 1))
    return next(body + d for d in "0123456789" if v.luhn_ok(body + d))


CARDS = [b"4111111111111111", b"5555555555554444", b"378282246310005", b"6011111111111117",
         b"3530111333300000", b"4111 1111 1111 1111", b"2223-0000-4841-0010"]


@pytest.mark.parametrize("card", CARDS)
def test_public_test_cards_pass_luhn_and_iin(card):
    assert v.luhn(card) and v.iin(card)
    assert not v.luhn(_mutate_last(card)) and not v.iin(_mutate_last(card))


@pytest.mark.parametrize(
    "prefix, length",
    [("4", 16), ("51", 16), ("55", 16), ("2221", 16), ("2720", 16), ("34", 15), ("37", 15),
     ("6011", 16), ("65", 16), ("644", 16), ("649", 16), ("3528", 16), ("3589", 16), ("62", 16),
     ("2200", 16), ("2204", 16), ("6304", 16), ("36", 14), ("4", 19)],
)
def test_issuer_ranges_accepted(prefix, length):
    card = _luhn_complete(prefix, length, random.Random(prefix))
    assert v.iin(card.encode()), card


@pytest.mark.parametrize(
    "prefix, length",
    [("1", 16), ("2721", 16), ("2100", 16), ("56", 20), ("34", 16), ("37", 16), ("9", 16),
     ("7", 16), ("2205", 16), ("51", 15), ("4", 15)],
)
def test_non_issuer_ranges_rejected(prefix, length):
    card = _luhn_complete(prefix, length, random.Random(prefix + "x"))
    assert v.luhn(card.encode()) or length > 19
    assert not v.iin(card.encode()), card


def test_luhn_rejects_uniform_and_non_digits():
    assert not v.luhn(b"0000000000000000")
    assert not v.luhn(b"4111-1111-1111-111a")
    assert not v.luhn(b"79927398713")  # valid Luhn but too short for a card


def _jwt(header, payload) -> bytes:
    enc = [base64.urlsafe_b64encode(json.dumps(x).encode()).rstrip(b"=") for x in (header, payload)]
    return b".".join(enc + [b"c2lnbmF0dXJlLWJ5dGVz"])


def test_jwt():
    assert v.jwt(_jwt({"alg": "HS256", "typ": "JWT"}, {"sub": "42"}))
    assert v.jwt(_jwt({"alg": "none"}, {"sub": "42"}))
    assert not v.jwt(_jwt({"typ": "JWT"}, {"sub": "42"}))  # no alg
    assert not v.jwt(_jwt(["alg"], {"sub": "42"}))  # header not an object
    assert not v.jwt(b"eyJhbGciOiJIUzI1NiJ9.bm90IGpzb24.sig")  # payload not JSON
    assert not v.jwt(b"eyJhbGciOiJIUzI1NiJ9")  # one segment
    assert not v.jwt(b"eyJ!!!.eyJ.x")


def _signed(header: dict, payload: dict, key: bytes) -> bytes:
    digest = {"HS256": hashlib.sha256, "HS384": hashlib.sha384, "HS512": hashlib.sha512}[header["alg"]]
    enc = b".".join(base64.urlsafe_b64encode(json.dumps(x).encode()).rstrip(b"=") for x in (header, payload))
    return enc + b"." + base64.urlsafe_b64encode(hmac.new(key, enc, digest).digest()).rstrip(b"=")


@pytest.mark.parametrize("alg", ["HS256", "HS384", "HS512"])
def test_jwt_signed_with_a_published_key_is_a_docs_sample(alg):
    """A token whose HMAC key the docs publish can be minted by any reader: not a secret.
    The same claims under any other key stay a JWT, and so does a token with another
    algorithm or no signature."""
    claims = {"sub": "u_58213", "scope": "deploy", "iat": 1767225600}
    for key in v.PUBLISHED_JWT_KEYS:
        assert not v.jwt(_signed({"alg": alg, "typ": "JWT"}, claims, key))
    private = random.Random(7).randbytes(32)
    assert v.jwt(_signed({"alg": alg, "typ": "JWT"}, claims, private))
    published = _signed({"alg": alg}, claims, v.PUBLISHED_JWT_KEYS[0])
    assert v.jwt(published[: published.rindex(b".")])  # unsigned form: no signature to check
    assert v.jwt(_signed({"alg": alg}, {**claims, "sub": "u_58214"}, private))
    # the signature of another algorithm's token is never taken for an HMAC
    hs = _signed({"alg": alg}, claims, v.PUBLISHED_JWT_KEYS[0])
    rs_head = base64.urlsafe_b64encode(json.dumps({"alg": "RS256"}).encode()).rstrip(b"=")
    assert v.jwt(rs_head + hs[hs.index(b"."):])


def test_base64_json():
    blob = base64.b64encode(json.dumps({"type": "service_account", "private_key_id": "ab"}).encode())
    assert v.base64_json(blob)
    assert v.base64_json(blob.rstrip(b"=").replace(b"+", b"-").replace(b"/", b"_"))
    assert not v.base64_json(base64.b64encode(b"[1, 2]"))
    assert not v.base64_json(b"not base64 at all!")


def _inn10(prefix9: str) -> str:
    w = (2, 4, 10, 3, 5, 9, 4, 6, 8)
    return prefix9 + str(sum(int(d) * k for d, k in zip(prefix9, w, strict=True)) % 11 % 10)


def _inn12(prefix10: str) -> str:
    w11 = (7, 2, 4, 10, 3, 5, 9, 4, 6, 8)
    c11 = str(sum(int(d) * k for d, k in zip(prefix10, w11, strict=True)) % 11 % 10)
    w12 = (3, 7, 2, 4, 10, 3, 5, 9, 4, 6, 8)
    s11 = prefix10 + c11
    return s11 + str(sum(int(d) * k for d, k in zip(s11, w12, strict=True)) % 11 % 10)


@pytest.mark.parametrize("value", [b"7707083893", b"500100732259", _inn10("772834501").encode(),
                                   _inn12("3664069397").encode()])
def test_inn_valid(value):
    assert v.inn(value)
    assert not v.inn(_mutate_last(value))


def test_inn_structure():
    assert not v.inn(b"0000000000")
    assert not v.inn(b"77070838931")  # 11 digits
    assert not v.inn(b"770708389")


@pytest.mark.parametrize("value", [b"1027700132195", b"1037739010891"])
def test_ogrn_valid(value):
    assert v.ogrn(value) and not v.ogrnip(value)
    assert not v.ogrn(_mutate_last(value))


def test_ogrnip():
    value = b"304500116000157"
    assert v.ogrn(value) and v.ogrnip(value)
    assert not v.ogrnip(_mutate_last(value))
    assert not v.ogrn(b"0027700132195")  # record kind 0 does not exist


def _snils(nine: str) -> str:
    total = sum(int(c) * w for c, w in zip(nine, range(9, 0, -1), strict=True))
    check = total if total < 100 else 0 if total in (100, 101) else total % 101 % 100
    return f"{nine[:3]}-{nine[3:6]}-{nine[6:]} {check:02d}"


@pytest.mark.parametrize("value", [b"112-233-445 95", _snils("087654302").encode(),
                                   _snils("156842973").encode(), b"11223344595"])
def test_snils_valid(value):
    assert v.snils(value)
    assert not v.snils(_mutate_last(value))


def test_snils_small_and_repeated_numbers_rejected():
    assert not v.snils(_snils("001001998").encode())  # issued without a checksum: rejected
    assert v.snils(_snils("001002003").encode())
    assert not v.snils(_snils("111234567").encode())  # digit three times in a row


def test_ru_passport_structure():
    assert v.ru_passport(b"4509 123456")  # Moscow (45), printed 2009
    assert v.ru_passport(b"4598 654321")  # 1998
    assert not v.ru_passport(b"0209 123456")  # 02 is not an OKATO region code
    assert not v.ru_passport(b"4550 123456")  # year 50 is not a passport print year
    assert not v.ru_passport(b"4509 000000")
    assert not v.ru_passport(b"4509 12345")


def test_aws_key_id():
    assert v.aws_key_id(b"AKIAIOSFODNN7EXAMPLE")
    for prefix in (b"ASIA", b"AROA", b"AIDA", b"ACCA", b"ABIA"):
        assert v.aws_key_id(prefix + b"UJZDEGXDNCF32EPF")
    assert not v.aws_key_id(b"AKIAUJZDEGXDNCF32EP1")  # 1 is outside base32
    assert not v.aws_key_id(b"AXYZUJZDEGXDNCF32EPF")
    assert not v.aws_key_id(b"AKIAUJZDEGXDNCF32EP")


def test_e164():
    assert v.e164(b"+7 912 345-67-89")
    assert v.e164(b"8 (495) 123-45-67")
    assert v.e164(b"+1 415 555 2671")
    assert v.e164(b"+44 20 7946 0958")
    assert not v.e164(b"+7 112 345-67-89")  # no Russian code starts with 1
    assert not v.e164(b"+1 115 555 2671")  # NANP area codes start 2-9
    assert not v.e164(b"+0 123 456 789")
    assert not v.e164(b"1234567")
    assert not v.e164(b"+1111111111111")
    assert not v.e164(b"2024-11-29 12:00")


def test_iban():
    assert v.iban(b"GB82 WEST 1234 5698 7654 32")
    assert v.iban(b"DE89370400440532013000")
    assert not v.iban(b"GB82 WEST 1234 5698 7654 33")


def test_entropy():
    assert shannon_entropy("") == 0.0
    assert shannon_entropy("aaaa") == 0.0
    assert shannon_entropy("abcd") == pytest.approx(2.0)
    assert shannon_entropy(b"ghp_gLKOmxgJTeKdNnFRIBXuDL7DxtpYlSXpfKtH") > 4.0


def test_registry_names_are_kebab_case():
    for name, fn in v.VALIDATORS.items():
        assert name == name.lower() and "_" not in name
        assert fn(b"") is False


PLACEHOLDERS = [
    b"abcd1234abcd1234abcd1234",  # a unit repeated
    b"a1B2c3D4e5F6g7H8i9J0k1L2m3N4",  # two interleaved sequences
    b"zyxwvutsrqponmlkji9876543210abcd",  # descending
    b"1234567890abcdef1234567890abcdef",
    b"12345678-1234-1234-1234-123456789abc",
    b"OOzkR1+hF+1ABCsIFDJMEUtqmtnZ1234567890",  # a run of ten
    b"AP6xxxxxxxxxx",  # padded with one character
    b"sk-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
    # sequences broken up by separators are typed all the same
    b"k1-a1b2-c3d4-e5f6-g7h8-i9j0-k1l2",
    b"ab_cd_ef_gh_ij_kl_mn_op",
    b"9876.5432.1098.7654",
]
GENERATED = [
    b"zoaw0c0m50m0hz2h1fm21y4tqfyl7ifi",
    b"2afddb813193eb9d3b5bd99bf5d834cd",
    b"f59dffd2-83ea-47c7-ba8f-95e053a6d0ae",
    b"qYaZm3m8+Z2aYAiSDzzvStkTUgZXl29U76lDJ0qiob7bbV4g7kjtwO+FI2QoptGdZgEdtsAYzG8T0hl5TeftWA==",
]


@pytest.mark.parametrize("value", PLACEHOLDERS)
def test_typed_placeholders_are_rejected(value: bytes) -> None:
    assert not v.not_placeholder(value)
    assert not v.token_like(value)


@pytest.mark.parametrize("value", GENERATED)
def test_generated_tokens_pass(value: bytes) -> None:
    assert v.not_placeholder(value) and v.token_like(value)


EDITED_HEX = [
    b"5be0d3q1a6c4f2e8b7d9a0c3e5f7a9b1",  # one letter a hex encoder never writes
    b"Z7e3b9d1c5a2f8e4d6b0",  # a hand-typed first letter
    b"E4c1a9f3b7d2e8c6a0f5b3d9e1c7a4F2",  # upper-case ends on a lower-case hex key
    b"7E3B9D1C5A2F8E4D6B0C3A5Fk",
]


@pytest.mark.parametrize("value", EDITED_HEX)
def test_hand_edited_hex_keys_are_not_tokens(value: bytes) -> None:
    assert v.not_placeholder(value)  # the typed-sequence tests do not see it ...
    assert not v.token_like(value)  # ... the stray letters do


def test_hex_of_one_case_and_mixed_tokens_stay_tokens() -> None:
    """Three or more non-hex letters make a base36/base62 token, not an edited hex key."""
    for value in (b"5be0d3f1a6c4f2e8b7d9a0c3e5f7a9b1", b"7E3B9D1C5A2F8E4D6B0C3A5F",
                  b"Aqz5be0d3f1a6c4f2e8b7d9a0c3", b"5be0d3f1a6c4f2e8-b7d9"):
        assert v.token_like(value), value


def test_short_values() -> None:
    assert v.not_placeholder(b"admin123")  # a weak password is still a password
    assert not v.token_like(b"x7Qp2a")  # too short to be a generated token
    assert not v.not_placeholder(b"")


@pytest.mark.parametrize(("alphabet", "length"), [
    ("0123456789abcdef", 12), ("0123456789abcdef", 32),
    ("abcdefghijklmnopqrstuvwxyz0123456789", 16), ("abcdefghijklmnopqrstuvwxyz0123456789", 20),
    ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", 16),
    ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", 40),
])
def test_random_tokens_are_almost_never_rejected(alphabet: str, length: int) -> None:
    """The placeholder tests sit 5 standard deviations out: on random tokens drawn from the
    value's own alphabet fewer than 0.5 % are rejected (hex has the most sequence steps)."""
    rng = random.Random(f"{alphabet}{length}")
    n = 4000
    rejected = sum(not v.token_like("".join(rng.choice(alphabet) for _ in range(length)).encode())
                   for _ in range(n))
    assert rejected < n * 0.005


def test_random_separated_tokens_are_almost_never_rejected() -> None:
    """Dropping separators before the sequence test must not reject generated values that
    carry them (UUIDs, dotted or dashed keys): fewer than 0.5 % of random ones."""
    rng = random.Random("separated")
    hexd = "0123456789abcdef"
    b62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    n = 4000
    values = ["-".join("".join(rng.choice(hexd) for _ in range(k)) for k in (8, 4, 4, 4, 12))
              for _ in range(n)]
    values += [rng.choice("-_.").join("".join(rng.choice(b62) for _ in range(6)) for _ in range(4))
               for _ in range(n)]
    rejected = sum(not v.token_like(x.encode()) for x in values)
    assert rejected < len(values) * 0.005


def test_discord_token_first_segment_is_a_numeric_id():
    first = base64.b64encode(b"198622483471925248").decode().rstrip("=")
    assert v.discord_token(f"{first}.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs".encode())
    assert not v.discord_token(b"MZ1yGvKTjE0rY0cV8i47CjAa.uRHQPq.Xb1Mk2nEhe-4iUcrGOuegj57zMC")
    assert not v.discord_token(base64.b64encode(b"12345").rstrip(b"=") + b".abcdef.x")
