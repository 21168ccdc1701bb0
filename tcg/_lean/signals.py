"""The ``_signal`` C module as ``signal`` (see tcg._lean): same functions and
constants, plain ints instead of the IntEnums the stdlib wrapper builds."""

from __future__ import annotations

try:
    import _signal as signal
except ImportError:  # pragma: no cover - an interpreter without it
    import signal  # type: ignore[no-redef]

__all__ = ["signal"]
