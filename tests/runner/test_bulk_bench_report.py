"""bench/interactive_latency.py's bulk report: the ratios it prints are the ones its rounds give
(medians, per-round ratios, the machine's CPU per arm), and the machine CPU it reads counts
work that really ran. Synthetic rounds; the CPU check burns real CPU."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import interactive_latency as il  # noqa: E402
import throughput  # noqa: E402


def test_report_gives_ratio_of_medians_per_round_ratio_and_cpu_ratio() -> None:
    rounds = {
        "script -qfc": [(4.0, 8.0), (5.0, 8.0), (6.0, 10.0)],
        "tcg_shell session": [(5.0, 10.0), (5.0, 12.0), (8.0, 12.0)],
    }
    lines = il.bulk_report(rounds, 200)
    assert lines[0].strip() == "bulk output, 200 MB of text on an outer PTY, median of 3:"
    assert lines[1] == "  script -qfc             5.00 s     40.0 MB/s  machine CPU  8.00 s"
    assert "machine CPU 12.00 s" in lines[2]
    # medians 5.0 and 5.0; rounds 4/5, 5/5, 6/8 -> 0.80; CPU 10/8, 12/8, 12/10 -> 1.25
    assert lines[3] == ("  tcg_shell session = 1.00x script's throughput (per round: 0.80x), "
                        "1.25x its machine CPU")


def test_report_without_cpu_figures_leaves_them_out() -> None:
    rounds = {"script -qfc": [(4.0, None), (6.0, None)], "tcg_shell session": [(5.0, None), (6.0, None)]}
    lines = il.bulk_report(rounds, 100)
    assert all("CPU" not in line for line in lines)
    assert lines[-1] == "  tcg_shell session = 0.91x script's throughput (per round: 0.90x)"


@pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="machine CPU is read from Linux's /proc/stat")
def test_machine_cpu_counts_cpu_this_process_burns() -> None:
    before, own = throughput.machine_cpu_seconds(), time.process_time()
    while time.process_time() - own < 0.3:
        pass
    after = throughput.machine_cpu_seconds()
    assert before is not None and after is not None
    assert after - before >= 0.25  # our own 0.3 s at least, less the clock's 10 ms ticks
