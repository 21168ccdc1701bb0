"""Keep freed large buffers in the heap (glibc), for `tcg mask`'s big slices.

glibc serves every allocation above its mmap threshold (128 KiB at first,
raised only as such blocks are freed) with a fresh mmap, and each fresh page
faults on first touch. The masker's working copies of a 512 KiB slice (input,
window, class map, output) would pay that on every slice: measured, 512 KiB
slices ran at ~111 MB/s that way and ~156 MB/s with the threshold at 32 MiB,
against ~142 MB/s for 256 KiB slices either way (bench/mask_throughput.py's
data, `tcg mask` from a file). Peak RSS on a 1 GB stream stayed ~29 MB.
Elsewhere (musl, macOS, Windows) nothing changes and the caller keeps 256 KiB.
"""

from __future__ import annotations

import sys

M_TRIM_THRESHOLD = -1  # glibc mallopt() parameters (malloc.h)
M_MMAP_THRESHOLD = -3


def keep_large_buffers(limit: int = 32 << 20) -> bool:
    """Raise glibc's mmap threshold to ``limit`` (and the trim threshold to twice
    that) for this process; True when applied."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, limit) == 1 and mallopt(M_TRIM_THRESHOLD, 2 * limit) == 1)
