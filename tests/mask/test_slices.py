"""`tcg mask` works through 512 KiB slices where glibc keeps freed buffers
(tcg.mask.alloc); strict output must not depend on the slice size."""

from __future__ import annotations

import random

from tcg.mask.alloc import keep_large_buffers
from tests.mask.helpers import detector, leaks, needles_of, plants


def test_strict_output_does_not_depend_on_the_slice_size():
    from tcg.keyhash import KeyedHasher
    from tcg.mask import Masker

    r = random.Random(3)
    chosen = list(plants())
    secrets = [p.text for p in chosen]
    parts = []
    for _ in range(40_000):
        parts.append(b"log line %d ok\n" % r.randrange(10**6))
        if r.random() < 0.01:
            parts.append(r.choice(secrets) + b"\n")
    data = b"".join(parts)
    det = detector()
    hasher = KeyedHasher(b"\x02" * 32)
    outs = []
    for slice_size, chunk in ((1 << 18, 1 << 18), (1 << 19, 1 << 19), (1 << 19, 1 << 20), (1 << 18, 77_777)):
        m = Masker(det, hasher, "strict")
        m.slice_size = slice_size
        outs.append(b"".join(m.feed(data[i:i + chunk]) for i in range(0, len(data), chunk)) + m.flush())
    assert all(o == outs[0] for o in outs)
    assert outs[0].count(b"<SECRET:") + outs[0].count(b"<PII:") >= 100
    assert leaks(outs[0], needles_of(chosen)) == []


def test_keep_large_buffers_reports_whether_it_applied():
    assert keep_large_buffers() in (True, False)  # True on glibc Linux, False elsewhere
