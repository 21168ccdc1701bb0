"""Named structural validators that confirm a regex candidate.

A validator takes the candidate value (the ``value`` group, else the whole match)
as bytes and returns True when the value is structurally plausible. Validators
run only on candidates, never on whole texts. Rules name them (``validator =
"luhn"``); an unknown name is a load error. Separators (spaces, dashes, dots,
parentheses) inside numbers are ignored by the numeric validators.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache

Validator = Callable[[bytes], bool]


@cache
def _pattern(source: bytes) -> re.Pattern[bytes]:
    """``source`` compiled on first use: the detector imports this module on every scan,
    most validators never run there, and compiling their patterns up front was most of
    the module's import."""
    return re.compile(source)


_SEPARATORS = rb"[\s\-.()/]"


def _digits(value: bytes) -> str | None:
    """The digits of ``value`` with separators removed, or None if anything else remains."""
    raw = _pattern(_SEPARATORS).sub(b"", value)
    if not raw.isdigit():
        return None
    return raw.decode("ascii")


def luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def luhn(value: bytes) -> bool:
    """Luhn checksum over 12-19 digits (payment cards, IMEI-like numbers)."""
    d = _digits(value)
    return d is not None and 12 <= len(d) <= 19 and len(set(d)) > 1 and luhn_ok(d)


# (prefix range low, prefix range high, allowed lengths). Prefix ranges compare
# the first len(low) digits. Sources: the networks' published IIN tables.
_IIN_RANGES: tuple[tuple[str, str, tuple[int, ...]], ...] = (
    ("4", "4", (13, 16, 19)),  # Visa
    ("51", "55", (16,)),  # Mastercard
    ("2221", "2720", (16,)),  # Mastercard 2-series
    ("34", "34", (15,)),  # American Express
    ("37", "37", (15,)),
    ("6011", "6011", (16, 17, 18, 19)),  # Discover
    ("644", "649", (16, 17, 18, 19)),
    ("65", "65", (16, 17, 18, 19)),
    ("3528", "3589", (16, 17, 18, 19)),  # JCB
    ("62", "62", (16, 17, 18, 19)),  # UnionPay (incl. Discover co-brand 622126-622925)
    ("2200", "2204", (16, 17, 18, 19)),  # Mir
    ("300", "305", (14, 15, 16, 17, 18, 19)),  # Diners Club
    ("36", "36", (14, 15, 16, 17, 18, 19)),
    ("38", "39", (16, 17, 18, 19)),
    ("3095", "3095", (14, 15, 16, 17, 18, 19)),
    ("50", "50", (12, 13, 14, 15, 16, 17, 18, 19)),  # Maestro
    ("56", "58", (12, 13, 14, 15, 16, 17, 18, 19)),
    ("6304", "6304", (12, 13, 14, 15, 16, 17, 18, 19)),
    ("6759", "6759", (12, 13, 14, 15, 16, 17, 18, 19)),
    ("6761", "6763", (12, 13, 14, 15, 16, 17, 18, 19)),
    ("676770", "676770", (12, 13, 14, 15, 16, 17, 18, 19)),
    ("676774", "676774", (12, 13, 14, 15, 16, 17, 18, 19)),
)


def card_network_ok(digits: str) -> bool:
    """True when ``digits`` start with a real issuer range and have a length that network issues."""
    for low, high, lengths in _IIN_RANGES:
        head = digits[: len(low)]
        if low <= head <= high and len(digits) in lengths:
            return True
    return False


def iin(value: bytes) -> bool:
    """Payment card: a real issuer (IIN) range and length AND the Luhn checksum."""
    d = _digits(value)
    return d is not None and card_network_ok(d) and luhn(value)


def _b64url_json(segment: bytes) -> object:
    import base64  # base64 and json load only when a candidate needs decoding
    import json

    padded = segment + b"=" * (-len(segment) % 4)
    raw = base64.urlsafe_b64decode(padded)
    return json.loads(raw.decode("utf-8"))


# HMAC keys that JWT documentation publishes with its sample tokens (jwt.io's debugger
# defaults, old and current). A token signed with one of them can be minted by anyone who
# has read the docs: it is an example, not a credential. Data, not code: add a published
# key here, never a key seen only in one file.
PUBLISHED_JWT_KEYS: tuple[bytes, ...] = (
    b"your-256-bit-secret",
    b"your-384-bit-secret",
    b"your-512-bit-secret",
    b"a-string-secret-at-least-256-bits-long",
)
_HMAC_ALGS = {"HS256": "sha256", "HS384": "sha384", "HS512": "sha512"}


def _signed_with_published_key(parts: list[bytes], alg: object) -> bool:
    """The third segment is the HMAC of the first two under a :data:`PUBLISHED_JWT_KEYS` key."""
    digest = _HMAC_ALGS.get(alg) if isinstance(alg, str) else None
    if digest is None or len(parts) != 3 or not parts[2]:
        return False
    import base64  # loaded only for an HMAC-signed candidate
    import hmac

    signed = parts[0] + b"." + parts[1]
    for key in PUBLISHED_JWT_KEYS:
        mac = base64.urlsafe_b64encode(hmac.new(key, signed, digest).digest()).rstrip(b"=")
        if hmac.compare_digest(mac, parts[2]):
            return True
    return False


def jwt(value: bytes) -> bool:
    """JWT: header base64url-decodes to a JSON object with "alg"; payload decodes to JSON;
    not an HMAC token signed with a key that documentation publishes (a docs sample)."""
    parts = value.split(b".")
    if len(parts) < 2 or not parts[0] or not parts[1]:
        return False
    try:
        header = _b64url_json(parts[0])
        payload = _b64url_json(parts[1])
    except (ValueError, UnicodeDecodeError):
        return False
    if not (isinstance(header, dict) and "alg" in header and isinstance(payload, (dict, list))):
        return False
    return not _signed_with_published_key(parts, header["alg"])


def base64_json(value: bytes) -> bool:
    """Value (standard or url-safe base64) decodes to a JSON object (e.g. GCP service-account keys)."""
    import base64
    import json

    raw = value.strip().rstrip(b"=")
    try:
        decoded = base64.b64decode(raw.replace(b"-", b"+").replace(b"_", b"/") + b"=" * (-len(raw) % 4))
        obj = json.loads(decoded.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return False
    return isinstance(obj, dict)


def _weighted(digits: str, weights: tuple[int, ...]) -> int:
    return sum(int(d) * w for d, w in zip(digits, weights, strict=False)) % 11 % 10


def inn(value: bytes) -> bool:
    """Russian taxpayer number: 10 digits (organisation) or 12 (person) with check digits."""
    d = _digits(value)
    if d is None or set(d) == {"0"}:
        return False
    if len(d) == 10:
        return _weighted(d, (2, 4, 10, 3, 5, 9, 4, 6, 8)) == int(d[9])
    if len(d) == 12:
        c11 = _weighted(d, (7, 2, 4, 10, 3, 5, 9, 4, 6, 8))
        c12 = _weighted(d, (3, 7, 2, 4, 10, 3, 5, 9, 4, 6, 8))
        return c11 == int(d[10]) and c12 == int(d[11])
    return False


def ogrn(value: bytes) -> bool:
    """OGRN (13 digits, mod 11) or OGRNIP (15 digits, mod 13); first digit is a record kind 1-9."""
    d = _digits(value)
    if d is None or d[0] == "0":
        return False
    if len(d) == 13:
        return int(d[:12]) % 11 % 10 == int(d[12])
    if len(d) == 15:
        return int(d[:14]) % 13 % 10 == int(d[14])
    return False


def ogrnip(value: bytes) -> bool:
    """OGRNIP only (15 digits)."""
    d = _digits(value)
    return d is not None and len(d) == 15 and ogrn(value)


def snils(value: bytes) -> bool:
    """SNILS: 11 digits, check number over the first nine.

    Numbers up to 001-001-998 were issued without a checksum; they are rejected
    here (they look like counters, not identities) so the rule stays precise.
    The same digit may not appear three times in a row in the first nine.
    """
    d = _digits(value)
    if d is None or len(d) != 11:
        return False
    body = d[:9]
    if int(body) <= 1001998 or re.search(r"(\d)\1\1", body):
        return False
    total = sum(int(c) * w for c, w in zip(body, range(9, 0, -1), strict=True))
    if total < 100:
        check = total
    elif total in (100, 101):
        check = 0
    else:
        check = total % 101
        if check == 100:
            check = 0
    return check == int(d[9:])


# First two digits of a passport series are the OKATO code of the issuing region.
_OKATO = frozenset(
    "01 03 04 05 07 08 10 11 12 14 15 17 18 19 20 22 24 25 26 27 28 29 30 32 33 34 35 36 37 38 "
    "40 41 42 44 45 46 47 49 50 52 53 54 56 57 58 60 61 63 64 65 66 67 68 69 70 71 73 75 76 77 "
    "78 79 80 81 82 83 84 85 86 87 88 89 90 91 92 93 94 95 96 97 98 99".split()
)


def ru_passport(value: bytes) -> bool:
    """Russian internal passport: 4-digit series (OKATO region + 2-digit year of print,
    1997 onwards) and a 6-digit number.

    Weak by nature: there is no checksum, so about a quarter of random 10-digit
    strings pass; rules must require context (the word "passport"/"паспорт").
    """
    d = _digits(value)
    if d is None or len(d) != 10:
        return False
    year = int(d[2:4])
    return d[:2] in _OKATO and (year >= 97 or year <= 30) and d[4:] != "000000"


_AWS_PREFIXES = (
    b"AKIA", b"ASIA", b"AGPA", b"AIDA", b"AROA", b"AIPA", b"ANPA", b"ANVA", b"APKA", b"ABIA", b"ACCA",
)
_AWS_BODY = rb"[A-Z2-7]{16}"


def aws_key_id(value: bytes) -> bool:
    """AWS access key id: a known 4-letter resource prefix + 16 base32 characters."""
    return len(value) == 20 and value[:4] in _AWS_PREFIXES and _pattern(_AWS_BODY).fullmatch(value[4:]) is not None


def e164(value: bytes) -> bool:
    """Phone number plausibility (E.164): 8-15 digits, no leading 0 country code;
    Russian numbers (+7/8 + 10 digits) need a 3/4/8/9 area/operator code;
    NANP (+1) needs area and exchange codes starting 2-9."""
    raw = value.strip()
    plus = raw.startswith(b"+")
    d = _digits(raw[1:] if plus else raw)
    if d is None or not 8 <= len(d) <= 15 or len(set(d)) < 3:
        return False
    if not plus:  # national format: only Russian 8/7 + 10 digits
        return len(d) == 11 and d[0] in "78" and d[1] in "3489"
    if d[0] == "0":
        return False
    if d[0] == "7":
        return len(d) == 11 and d[1] in "3489"
    if d[0] == "1":
        return len(d) == 11 and d[1] in "23456789" and d[4] in "23456789"
    return True


def iban(value: bytes) -> bool:
    """IBAN: 2 letters, 2 check digits, mod-97 == 1."""
    raw = re.sub(rb"\s", b"", value).upper()
    if not 15 <= len(raw) <= 34 or not raw[:2].isalpha() or not raw[2:4].isdigit() or not raw.isalnum():
        return False
    moved = (raw[4:] + raw[:4]).decode("ascii")
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


def _steps(low: bytes, lag: int) -> list[int]:
    return [low[i] - low[i - lag] for i in range(lag, len(low))]


def _sequential(value: bytes) -> bool:
    """Mostly an alphabet or digit sequence, up or down, direct (``abcd``, ``9876``) or
    interleaved with another one (``a1b2c3``): keyboard-made placeholders.

    A step continues a sequence when the character is one above or below the one before
    it, or the one two before. Three tests, each far out of reach of generated tokens:
    half the steps lie in runs of 3+ such steps; a direct run of 8 (``…ABCDEFGHIJ…``);
    or the share of such steps is 5 standard deviations above what random characters
    from the value's own alphabet give (about 4/k for k distinct characters: hex values
    continue a sequence far more often than base62 ones)."""
    low = value.lower()
    steps = len(low) - 1
    if steps < 2:
        return False
    direct = _steps(low, 1)
    interleaved = [0, *_steps(low, 2)]
    hits = covered = run = best = direct_run = 0
    for d1, d2 in zip(direct, interleaved, strict=True):
        if d1 in (1, -1) or d2 in (1, -1):
            hits += 1
            run += 1
        else:
            covered += run if run >= 3 else 0
            run = 0
        direct_run = direct_run + 1 if d1 in (1, -1) else 0
        best = max(best, direct_run)
    covered += run if run >= 3 else 0
    if covered * 2 >= steps or best >= 7:
        return True
    p = min(1.0, 4 / len(set(low)))
    return hits / steps >= p + 5 * (p * (1 - p) / steps) ** 0.5


def _periodic(value: bytes) -> bool:
    """The value is one short unit repeated (``abcd1234abcd1234…``, ``xoxo…``)."""
    n = len(value)
    return any(value[: n - unit] == value[unit:] for unit in range(1, min(16, n // 2) + 1))


_TOKEN_SEPARATORS = rb"[-_.:/+ ]"
_PADDING_RUN = rb"([A-Za-z0-9])\1{5,}"
_BLOCK_RUN = rb"([A-Za-z0-9])\1{3}"


def not_placeholder(value: bytes) -> bool:
    """Not a typed stand-in: not one unit repeated, not mostly an alphabet or digit sequence
    (also once separators are dropped: ``a1b2-c3d4-e5f6`` is typed as surely as
    ``a1b2c3d4``), not padded with a run of one character (``AP6xxxxxxxxxx``), not made of
    blocks of one character (``…AAAABBBBCCCC…``). The heuristics detect-secrets and gitleaks apply to
    generic matches; vendor rules with a fixed prefix do not need them."""
    core = value.strip(b"=")
    if not core or _periodic(core) or _sequential(core):
        return False
    joined = _pattern(_TOKEN_SEPARATORS).sub(b"", core)
    if joined != core and _sequential(joined):  # the same value twice would cost a second pass
        return False
    run = _pattern(_PADDING_RUN).search(core)
    if run is not None and (run.end() - run.start()) * 3 >= len(core):
        return False
    # blocks of four like AAAABBBBCCCC: one in a generated token is rare, two never
    return len(_pattern(_BLOCK_RUN).findall(core)) < 2


_LOWER_HEX = frozenset(b"0123456789abcdef")
_UPPER_HEX = frozenset(b"0123456789ABCDEF")


def _edited_hex(value: bytes) -> bool:
    """16+ letters and digits that are hex digits of one case but for one or two other
    letters (``c09761h99f…``, ``X19c2539…``, ``B1bb6678…4F``): a hex key typed over by hand.
    A hex encoder writes one case and never ``h`` or ``X``; a random base36/base62 token of
    that length keeps to one case's hex letters with odds below one in a million."""
    if len(value) < 16 or not value.isalnum():
        return False
    stray = min(sum(1 for c in value if c not in _LOWER_HEX),
                sum(1 for c in value if c not in _UPPER_HEX))
    return 1 <= stray <= 2


def token_like(value: bytes) -> bool:
    """A generated-looking token: at least 8 characters, :func:`not_placeholder`, and not a
    hex key with a hand-typed letter in it. The cheap hex test runs first: a file of such keys
    makes every line a candidate, and the placeholder tests cost ten times as much."""
    return len(value.strip(b"=")) >= 8 and not _edited_hex(value) and not_placeholder(value)


def discord_token(value: bytes) -> bool:
    """Discord bot/user token: its first segment is the base64 of the account's numeric
    snowflake id (17–20 digits); the rest is a timestamp and an HMAC."""
    import base64

    first = value.split(b".", 1)[0]
    try:
        raw = base64.b64decode(first + b"=" * (-len(first) % 4), altchars=b"-_", validate=True)
    except ValueError:
        return False
    return raw.isdigit() and 17 <= len(raw) <= 20


VALIDATORS: dict[str, Validator] = {
    "luhn": luhn,
    "iin": iin,
    "jwt": jwt,
    "base64-json": base64_json,
    "inn": inn,
    "ogrn": ogrn,
    "ogrnip": ogrnip,
    "snils": snils,
    "ru-passport": ru_passport,
    "aws-key-id": aws_key_id,
    "e164": e164,
    "iban": iban,
    "token-like": token_like,
    "not-placeholder": not_placeholder,
    "discord-token": discord_token,
}
