"""Start-up cache for data derived from a detector's rules (not the detector itself).

The masker derives its hold-back tables (tcg.mask.strict_bound), terminal
anchors (tcg.mask.anchors) and the fold-keyword precheck from the rule regexes:
parsing ~220 regexes and compiling their hyperscan databases costs ~0.25 s, a
sixth of a 200 MB `tcg mask` run. The results depend only on the rules, the
code that derives them and the library versions, so they are kept in the
detector's cache dir, one file per (kind, fingerprint), signed with the
install's key and bound to the code that wrote them and to their fingerprint (tcg.cachestore):
a file that fails the check (edited, another install's, truncated, another rule set's file
copied under this one's name) reads as absent and is rebuilt, so a forged cache can
never shrink a hold-back bound. Serialized hyperscan databases travel inside the
signed body. Best effort throughout: no key or no cache dir only costs time.

A session's masking process reads these before its first masked byte: they are
parsed with tcg.leanjson and the fingerprint is built from ``repr`` (its Python
version is part of it), so that path never imports ``json`` (~1.5 ms: its
decoder compiles regexes at import); only a rebuild writes with ``json``.
"""

from __future__ import annotations

import binascii  # not base64 (its import, with struct's, is ~1.5 ms of a masking process's start)
import os
import sys

from tcg.digest import sha256
from tcg.osutil import machine

TYPE_CHECKING = False  # typing costs ~9 ms of import before the first masked byte
if TYPE_CHECKING:
    from typing import Any

FORMAT = 2  # 2: the fingerprint and file name in the MAC tag


def fingerprint(rules: Any, kind: str, params: str) -> str:
    """Digest of what the derived data depends on besides tcg's code (which binds
    the file's MAC, tcg.cachestore): the rules' fields, the Python and hyperscan
    versions, the machine and ``params``."""
    try:
        from tcg._lean import hs as hyperscan

        hs_version = str(getattr(hyperscan, "__version__", ""))
    except ImportError:  # pragma: no cover - the re engine
        hs_version = "-"
    h = sha256(b"tcg-derived\0%d\0" % FORMAT)
    h.update(f"{kind}\0{params}\0{sys.version_info[:2]}\0{hs_version}\0{machine()}\0".encode())
    for r in rules:
        h.update(repr([r.id, r.category, r.regex, list(r.keywords), int(r.max_len),
                       bool(getattr(r, "fold", False))]).encode("utf-8", "surrogatepass") + b"\0")
    return h.hexdigest()[:32]


def _where(detector: Any) -> tuple[str, bytes] | None:
    cache_dir = getattr(detector, "cache_dir", None)
    memo = getattr(detector, "_memo", None)
    key = getattr(memo, "key", None)
    if cache_dir is None or not key:
        return None
    return os.fspath(cache_dir), key


def load(detector: Any, kind: str, fp: str | None) -> dict[str, Any] | None:
    """The cached state for (kind, fingerprint), or None."""
    where = _where(detector)
    if where is None or fp is None:
        return None
    from tcg.cachestore import read_cache

    body = read_cache(os.path.join(where[0], f"{kind}-{fp}.json"), where[1], f"{kind}:{FORMAT}:{fp}")
    if body is None:
        return None
    from tcg.leanjson import loads

    try:
        doc = loads(body.decode("utf-8"))
    except ValueError:  # JSONError, UnicodeDecodeError
        return None
    return doc if isinstance(doc, dict) else None


def store(detector: Any, kind: str, fp: str | None, state: dict[str, Any]) -> None:
    where = _where(detector)
    if where is None or fp is None:
        return
    import json

    from tcg.cachestore import write_cache

    try:
        body = json.dumps(state, separators=(",", ":")).encode("utf-8")
    except (TypeError, ValueError):  # pragma: no cover - a state that is not JSON
        return
    write_cache(os.path.join(where[0], f"{kind}-{fp}.json"), where[1], f"{kind}:{FORMAT}:{fp}", body)


def b2s(b: bytes) -> str:
    return b.decode("latin-1")


def s2b(s: str) -> bytes:
    return s.encode("latin-1")


def dump_hs(db: Any) -> str:
    from tcg._lean import hs as hyperscan

    return binascii.b2a_base64(bytes(hyperscan.dumpb(db)), newline=False).decode("ascii")


def load_hs(blob: str) -> Any:
    from tcg._lean import hs as hyperscan

    db = hyperscan.loadb(binascii.a2b_base64(blob), hyperscan.HS_MODE_BLOCK)
    db.scratch = hyperscan.Scratch(db)
    return db
