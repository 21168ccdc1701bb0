"""The interpreter's builtin SHA-256 (see tcg._lean for why not hashlib's)."""

from __future__ import annotations

try:  # CPython >= 3.12
    from _sha2 import sha256
except ImportError:  # pragma: no cover - depends on the interpreter version
    try:
        from _sha256 import sha256  # CPython <= 3.11
    except ImportError:
        from hashlib import sha256

__all__ = ["sha256"]
