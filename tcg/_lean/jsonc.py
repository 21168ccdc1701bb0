"""CPython's JSON accelerator: the scanner ``json.loads`` runs and the string
quoting ``json.dumps`` runs, without json's pure-Python layer (see tcg._lean).
Each is None where the accelerator is missing: callers then use ``json``."""

from __future__ import annotations

try:
    from _json import encode_basestring_ascii, make_scanner
except ImportError:  # pragma: no cover - CPython always has the accelerator
    encode_basestring_ascii = make_scanner = None  # type: ignore[assignment,misc]

__all__ = ["encode_basestring_ascii", "make_scanner"]
