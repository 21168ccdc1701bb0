"""``itemgetter`` and the constant-time comparison from the C module itself:
``operator`` only re-exports the first, and ``hmac`` wraps the second after
loading OpenSSL (see tcg._lean)."""

from __future__ import annotations

try:
    from _operator import _compare_digest as compare_digest
    from _operator import itemgetter
except ImportError:  # pragma: no cover - an interpreter without it
    from hmac import compare_digest  # type: ignore[no-redef]
    from operator import itemgetter

__all__ = ["compare_digest", "itemgetter"]
