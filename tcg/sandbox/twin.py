"""Masked twins of secret stores, and strict masking of a secret store's values.

A twin keeps a store's shape — keys, sections, comments markers, quoting — and
replaces values with placeholders, so a tool that parses the file (a dotenv loader,
the AWS SDK reading ``credentials``, docker reading ``config.json``) still finds the
keys it expects. Inside a secret store the masker's usual evidence (entropy,
known token shapes) is not needed: the file's job is to hold secrets, so

- every value of a secret-named key is masked, whatever it looks like
  (``DB_PASSWORD=quietmaplehorse``);
- in a twin, every other value is masked too, except those that cannot carry a
  secret when their key is not secret-named: empty, ``true``/``false``/``null``
  and friends, and short numbers (``PORT=5432``);
- lines that are not key/value pairs (a bare token, a PEM body, netrc tokens)
  lose their content.

The placeholder is the masker's: ``<SECRET:secret-store-value:h8>`` with the keyed
hash of the value, so the same value reads the same in a twin and in masked output.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

RULE_ID = "secret-store-value"
# Keys whose values are secrets in any store, beyond the policy's secret variable
# names (which are globs over upper-cased names such as *PASSWORD*, *TOKEN*).
STORE_KEY_WORDS = (
    "pass", "pwd", "passwd", "password", "secret", "token", "key", "auth", "credential", "cred",
    "private", "signature", "salt", "cookie", "session", "bearer", "dsn", "pin", "otp",
)
SAFE_VALUES = frozenset({"", "true", "false", "yes", "no", "on", "off", "null", "none", "~", "{}", "[]"})
_KEY_WORD_RX = re.compile(
    r"(?:^|[^a-z])(?:" + "|".join(sorted(STORE_KEY_WORDS, key=len, reverse=True)) + r")", re.I
)
# KEY=VALUE (dotenv, ini, npmrc: the key may hold ':' and '/'), optional `export `
_EQ_LINE = re.compile(
    rb"^(?P<pre>[ \t]*(?:export[ \t]+)?)(?P<key>[^\s=#;\[][^=]*?)(?P<sep>[ \t]*=[ \t]*)(?P<val>.*?)(?P<post>[ \t]*\r?)$"
)
# key: value (YAML), optional list dash and quotes around the key
_COLON_LINE = re.compile(
    rb"^(?P<pre>[ \t]*(?:-[ \t]+)?)(?P<key>\"[^\"]*\"|'[^']*'|[^\s:#\"'\[{][^:#]*?)"
    rb"(?P<sep>[ \t]*:(?:[ \t]+|$))(?P<val>.*?)(?P<post>[ \t]*,?[ \t]*\r?)$"
)
# "key": value pairs anywhere in a JSON line
_JSON_PAIR = re.compile(
    rb"(?P<key>\"(?:[^\"\\]|\\.)*\")(?P<sep>\s*:\s*)(?P<val>\"(?:[^\"\\]|\\.)*\"|-?\d+(?:\.\d+)?|true|false|null)"
)
_PEM_BEGIN = re.compile(rb"-----BEGIN [A-Z0-9 ]*(?:PRIVATE KEY|CERTIFICATE|KEY BLOCK)[A-Z0-9 ]*-----")
_PEM_END = re.compile(rb"-----END [A-Z0-9 ]+-----")
_NUMBER = re.compile(rb"[+-]?\d{1,6}(?:\.\d+)?")
_NETRC_SECRET_TOKENS = frozenset({b"login", b"password", b"account", b"passwd"})


def store_key_is_secret(key: str, secret_var: Callable[[str], bool] | None = None) -> bool:
    """A key whose value is a secret in a store: a policy secret-variable name, or a
    name containing a credential word (``password``, ``token``, ``api-key``, ``auth`` …)."""
    name = key.strip().strip("\"'")
    if secret_var is not None and secret_var(name.replace("-", "_").replace(".", "_")):
        return True
    return bool(_KEY_WORD_RX.search(name))


class ValueMasker:
    """Turns a value into the masker's placeholder (keyed hash of the value)."""

    def __init__(self, h8: Callable[[bytes], str]):
        self.h8 = h8
        self.count = 0

    def __call__(self, value: bytes) -> bytes:
        self.count += 1
        return b"<SECRET:" + RULE_ID.encode() + b":" + self.h8(value).encode() + b">"

    def quoted(self, value: bytes) -> bytes:
        """Mask keeping the quotes around the value (``"…"`` stays a string)."""
        if len(value) >= 2 and value[:1] in (b'"', b"'") and value[-1:] == value[:1]:
            return value[:1] + self(value[1:-1]) + value[:1]
        return self(value)


def _harmless(value: bytes) -> bool:
    v = value.strip().strip(b"\"'").lower()
    return v.decode("latin-1") in SAFE_VALUES or bool(_NUMBER.fullmatch(v))


def _structural(value: bytes) -> bool:
    """A YAML value that opens a block or a nested structure (``|``, ``>``, ``{``, ``[``)."""
    v = value.strip()
    return v in (b"", b"|", b">", b"|-", b">-", b"|+", b">+", b"{", b"[") or v.startswith((b"&", b"!"))


def mask_assignment(line: bytes, secret_key: Callable[[str], bool], mask: ValueMasker, *,
                    all_values: bool) -> bytes | None:
    """``line`` with its value masked when it is a key/value line, else None.

    ``all_values``: a twin masks every value not proven harmless; masked output of a
    store (``cat .env`` by a human) masks only values of secret-named keys and leaves
    the rest to the masker.
    """
    for rx in (_EQ_LINE, _COLON_LINE):
        if rx is _EQ_LINE and b"=" not in line:
            continue
        m = rx.match(line)
        if m is None:
            continue
        key, val = m.group("key"), m.group("val")
        if rx is _COLON_LINE and _structural(val):
            return line
        secret = secret_key(key.decode("utf-8", "replace"))
        if not val or (not secret and (not all_values or _harmless(val))):
            return line
        comment = b""
        if val[:1] not in (b'"', b"'") and b" #" in val:
            val, hash_, rest = val.partition(b" #")
            comment = b" #" + (rest if not all_values else b"")
        return m.group("pre") + key + m.group("sep") + mask.quoted(val.rstrip()) + comment + m.group("post")
    return None


def make_twin(data: bytes, name: str, secret_key: Callable[[str], bool], mask: ValueMasker) -> bytes:
    """The masked twin of a store's bytes (``name`` is its basename, for formats that
    only the name tells: netrc, pgpass)."""
    lower = name.lower()
    if lower in (".netrc", "_netrc"):
        return _netrc_twin(data, mask)
    if lower == ".pgpass":
        return b"".join(_pgpass_line(line, mask) for line in data.splitlines(keepends=True))
    if re.match(rb"\s*(?:\{|\[\s*[\"{\[\d-])", data):  # JSON; `[default]` is an INI section
        return _json_twin(data, secret_key, mask)
    out: list[bytes] = []
    in_pem = False
    block_indent: int | None = None
    for raw in data.splitlines(keepends=True):
        line = raw.rstrip(b"\r\n")
        end = raw[len(line):]
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if in_pem:
            if _PEM_END.search(line):
                in_pem = False
                out.append(raw)
            continue
        if _PEM_BEGIN.search(line):
            in_pem = True
            out.append(raw + mask(b"pem") + b"\n")
            continue
        if block_indent is not None:
            if stripped and indent > block_indent:
                out.append(line[:indent] + mask(stripped) + end)
                continue
            block_indent = None
        if not stripped or (stripped.startswith(b"[") and stripped.endswith(b"]")) or stripped in (b"---", b"..."):
            out.append(raw)
            continue
        if stripped.startswith((b"#", b";")):
            out.append(line[:indent] + stripped[:1] + end)
            continue
        masked = mask_assignment(line, secret_key, mask, all_values=True)
        if masked is not None:
            if masked == line and _COLON_LINE.match(line) and line.rstrip().endswith((b"|", b">", b"|-", b">-")):
                block_indent = indent
            out.append(masked + end)
            continue
        if stripped.startswith(b"- "):
            out.append(line[: indent + 2] + mask(stripped[2:]) + end)
            continue
        out.append(line[:indent] + mask(stripped) + end)
    return b"".join(out)


def _json_twin(data: bytes, secret_key: Callable[[str], bool], mask: ValueMasker) -> bytes:
    def repl(m: re.Match[bytes]) -> bytes:
        val = m.group("val")
        if _harmless(val) and not secret_key(m.group("key").decode("utf-8", "replace")):
            return m.group(0)
        return m.group("key") + m.group("sep") + (mask.quoted(val) if val[:1] == b'"' else b'"' + mask(val) + b'"')

    masked = _JSON_PAIR.sub(repl, data)
    # strings left in arrays ("hosts": ["a", "b"]) are values too
    return re.sub(rb'(?<=[\[,])(\s*)("(?:[^"\\]|\\.)*")(?=\s*[,\]])', lambda m: m.group(1) + mask.quoted(m.group(2)),
                  masked)


def _netrc_twin(data: bytes, mask: ValueMasker) -> bytes:
    out: list[bytes] = []
    for token in re.split(rb"(\s+)", data):
        if out and not token.isspace() and token:
            prev = next((t for t in reversed(out) if t and not t.isspace()), b"")
            if prev.lower() in _NETRC_SECRET_TOKENS:
                out.append(mask(token))
                continue
        out.append(token)
    return b"".join(out)


def _pgpass_line(raw: bytes, mask: ValueMasker) -> bytes:
    line = raw.rstrip(b"\r\n")
    if not line.strip() or line.lstrip().startswith(b"#"):
        return raw
    fields = re.split(rb"(?<!\\):", line, maxsplit=4)
    if len(fields) < 5:
        return mask(line) + raw[len(line):]
    return b":".join(fields[:4] + [mask(fields[4])]) + raw[len(line):]


class StoreValueFilter:
    """An OutputFilter in front of the masker for a command that reads a secret store
    (a human's SANITIZE ``cat .env``): complete lines that assign a secret-named key
    lose their value before the masker sees them, whatever the value looks like.

    Lines are held until their newline (or the end of the stream); a held tail is
    released on the masker's idle release only when it cannot become an assignment.
    """

    def __init__(self, inner, secret_key: Callable[[str], bool], mask: ValueMasker,  # type: ignore[no-untyped-def]
                 hold: float | None = None):
        self.inner = inner
        self.secret_key = secret_key
        self.mask = mask
        self.hold = hold  # seconds a partial line may wait (terminal mode); None: until its newline
        self.tail = b""
        self._deadline: float | None = None

    def _lines(self, data: bytes) -> bytes:
        out = []
        for raw in data.splitlines(keepends=True):
            line = raw.rstrip(b"\r\n")
            masked = mask_assignment(line, self.secret_key, self.mask, all_values=False)
            out.append(raw if masked is None else masked + raw[len(line):])
        return b"".join(out)

    def feed(self, data: bytes) -> bytes:
        buf = self.tail + data
        cut = max(buf.rfind(b"\n"), buf.rfind(b"\r")) + 1
        self.tail = buf[cut:]
        if self.tail and self.hold is not None and self._deadline is None:
            import time

            self._deadline = time.monotonic() + self.hold
        elif not self.tail:
            self._deadline = None
        return self.inner.feed(self._lines(buf[:cut])) if cut else self.inner.feed(b"")

    def flush(self) -> bytes:
        tail, self.tail = self.tail, b""
        return self.inner.feed(self._lines(tail)) + self.inner.flush()

    def release_idle(self) -> bytes:
        """Terminal mode: after the idle time a held partial line is shown, its value
        masked if it already reads as an assignment to a secret-named key."""
        if not self.tail:
            return self.inner.release_idle()
        tail, self.tail = self.tail, b""
        self._deadline = None
        masked = mask_assignment(tail, self.secret_key, self.mask, all_values=False)
        return self.inner.feed(tail if masked is None else masked) + self.inner.release_idle()

    def idle_deadline(self) -> float | None:
        inner = self.inner.idle_deadline()
        if self._deadline is None:
            return inner
        return self._deadline if inner is None else min(inner, self._deadline)

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self.inner, name)  # built / error of the wrapped LazyFilter
