"""The interpreter's builtin BLAKE2b (see tcg._lean for why not hashlib's)."""

from __future__ import annotations

try:
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - depends on how the interpreter was built
    from hashlib import blake2b

__all__ = ["blake2b"]
