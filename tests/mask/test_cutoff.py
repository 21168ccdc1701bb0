"""Secrets cut off mid-token: a stream that ends (strict mode) or pauses byte by byte
(terminal mode) inside a secret must not release its value raw."""

from __future__ import annotations

import subprocess

from tests.mask.helpers import PLACEHOLDER, leaks, run, slices
from tests.runner.helpers import TCG_SHELL, station_env

GHP_CUT = b"ghp_" + b"R7kQm2Xz9LpW4vNc8TyB3hJd"  # 24 of a token's 36 body characters
AWS_CUT = b"AKIA" + b"QWER"


def test_strict_flush_masks_a_token_cut_off_at_end_of_stream():
    for data, value in ((GHP_CUT, GHP_CUT), (b"log: " + GHP_CUT, GHP_CUT),
                        (b"ok\nk=" + AWS_CUT, AWS_CUT)):
        out = run(data)
        assert out.endswith(b">") and b"<SECRET:partial:" in out, data[:6]
        assert leaks(out, slices(value[4:], 4)) == []
        # chunk-invariant like the rest of strict mode
        assert run(data, (1,) * len(data)) == out == run(data, (3, 5), idle=True)


def test_strict_flush_keeps_ordinary_tails_and_whole_matches():
    for data in (b"hello", b"see AKIA docs", b"ghp_", b"mysql --password\n", GHP_CUT + b"\n",
                 b"prefix ghp_ then text"):
        assert run(data) == data
    whole_key = b"k=AKIA" + b"QWERTZUIOPLK7Y3X"
    out = run(whole_key)
    assert out.startswith(b"k=<SECRET:aws-access-key-id:") and b"partial" not in out


def test_run_line_killed_mid_token_prints_no_value(tmp_path):
    """The reviewers' case: `timeout 1 sh -c 'printf <cut token>; sleep 5'` through the
    station agent (pipe mode, strict masking); and the same with kill -9."""
    value = GHP_CUT.decode()
    for line in (f"timeout 1 sh -c 'printf {value}; sleep 5'",
                 f"sh -c 'printf {value}; kill -9 $$'"):
        res = subprocess.run([TCG_SHELL, "run-line", line], capture_output=True, timeout=60,
                             env=station_env(TCG_HOME=str(tmp_path)))
        assert PLACEHOLDER.fullmatch(res.stdout), res.stdout[:20]
        assert leaks(res.stdout, slices(GHP_CUT[4:], 4)) == []
