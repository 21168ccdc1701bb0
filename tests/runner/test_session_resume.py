"""The withholding after a masking process restart (tcg.runner.session_resume)."""

from __future__ import annotations

from tcg.runner.session_resume import WITHHOLD_MAX, Withhold
from tests.mask.helpers import masker


def test_the_bound_covers_the_maskers_hold_window():
    """A secret that began before the restart ends within the masker's window."""
    assert WITHHOLD_MAX >= masker("terminal").window
    assert WITHHOLD_MAX >= masker("strict").window


def test_withholds_through_the_line_end_or_the_bound():
    w = Withhold(20)
    assert w.take(b"rest") == (b"", w)
    shown, nxt = w.take(b"OFKEY\r\nnext\n")
    assert (shown, nxt) == (b"next\n", None)
    w = Withhold(10)
    assert w.take(b"0123456") == (b"", w)
    assert w.take(b"789ABC\n") == (b"ABC\n", None)  # the bound passed before the line ended
