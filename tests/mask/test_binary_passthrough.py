"""`tcg mask` passes random binary through byte for byte: base64 is decoded only when the
decoded bytes are text, and personal data is looked for only in text (an e-mail-shaped run
of random bytes is not an e-mail). A token inside binary is still masked."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest


def _mask(data: bytes) -> bytes:
    proc = subprocess.run([sys.executable, "-m", "tcg", "mask"], input=data, capture_output=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return proc.stdout


@pytest.mark.parametrize("size", [1_000_000, 3_000_000, 5_000_000])
def test_random_binary_is_byte_identical(size):
    data = random.Random(f"binary-{size}").randbytes(size)
    assert _mask(data) == data


def test_a_token_inside_binary_is_masked():
    rng = random.Random(3)
    token = "ghp_" + "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
                             for _ in range(36))
    data = rng.randbytes(100_000) + f"\x00GITHUB_TOKEN={token}\n".encode() + rng.randbytes(100_000)
    out = _mask(data)
    assert token.encode() not in out and b"<SECRET:github-pat-classic:" in out
    assert out.startswith(data[:100_000])
