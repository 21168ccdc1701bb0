"""The interpreter's builtin SHA-256 (see tcg._lean for why not hashlib's)."""

from __future__ import annotations

import sys

try:  # the module's name by version: a failed import costs a search of sys.path
    if sys.version_info >= (3, 12):
        from _sha2 import sha256
    else:
        from _sha256 import sha256
except ImportError:  # pragma: no cover - depends on how the interpreter was built
    from hashlib import sha256

__all__ = ["sha256"]
