"""Every end offset at which hyperscan reports a match of some of ``exprs`` in
``data``: what tests compare with ``re``'s ends or with another expression set's."""

from __future__ import annotations


def hyperscan_ends(exprs: list[bytes], flags: int, data: bytes) -> set[int]:
    """``flags`` apply to every expression."""
    from tcg._lean import hs as hyperscan

    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    db.compile(expressions=exprs, ids=list(range(len(exprs))), flags=[flags] * len(exprs))
    got: set[int] = set()
    db.scan(data, match_event_handler=lambda _i, _f, to, _fl, _c: got.add(to))
    return got
