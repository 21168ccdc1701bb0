"""Fuzz target: the masker's view of terminal bytes (escapes, controls,
invalid UTF-8, overstrikes) and the detector's Unicode normalisers.

The view is the same whatever the read sizes (it is built incrementally and
must be deterministic); fold() and normalize_for_match() never raise."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402,F401 - sets TCG_HOME first

with _common.instrumented():
    from tcg.detect.fold import fold
    from tcg.detect.normalize import normalize_for_match
    from tcg.mask.view import View


def _view(data: bytes, step: int) -> bytes:
    v = View()
    for i in range(0, len(data), step):
        v.append(data[i:i + step])
    v.append(b"", final=True)
    return bytes(v.view)


def test_one_input(data: bytes) -> None:
    if not data:
        return
    step = data[0] % 13 + 1
    body = data[1:]
    assert _view(body, step) == _view(body, max(len(body), 1))
    text = body.decode("utf-8", "surrogateescape")
    assert isinstance(fold(text), str)
    assert isinstance(normalize_for_match(text), str)


SEEDS = [b"\x03token ghp_Zq8Xw3Lk9Vb2Nm4Pr7Ts1Yu6Hj0Gf5Dc2Ea8 end\n",
         b"\x01gh\x1b[31mp_Zq8Xw3Lk9Vb2Nm4Pr7Ts1Yu6Hj0Gf5Dc2Ea8\x1b[m\n", b"\x02\xff\xfeAKIA\xe2\x82\n",
         b"\x04\x1b]8;;https://x/?t=ghp_Zq8Xw3Lk9Vb2Nm4Pr7Ts1Yu6Hj0Gf5Dc2Ea8\x1b\\x\x1b]8;;\x1b\\\n",
         b"\x05p\x08pa\x08as\x08ss\x08s=\x08=hunter2hunter2\n", b"\x06%2541%25\\u0041\\\\x\n", b"\x07\x1b[", b"\x08\x1b]0;"]

if __name__ == "__main__":
    _common.run(test_one_input)
