"""Fault matrix: concurrent writers. 8 processes append 10,000 events each to
one log while it rotates under them; every line of every file is one whole
JSON record, none is lost and each writer's records stay in order."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from tcg import jsonl
from tcg.paths import get_paths

WRITERS, EACH = 8, 10_000

WRITER = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from tcg.events import EventLog, build_record, set_rotation
    n, go = int(sys.argv[1]), Path(sys.argv[2])
    set_rotation(1 << 20, 100)  # rotate every MiB: rotations race with the other writers
    deadline = time.monotonic() + 60
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.001)
    log = EventLog()
    base = build_record("command_decision", surface="shell", writer=n, seq=0, pad="")
    for i in range(int(sys.argv[3])):
        base["seq"] = i
        # every 25th record beyond PIPE_BUF, so interleaving would show (~40 MB in all,
        # under the 100 MiB the rotation keeps)
        base["pad"] = "x" * ((i * 97) % 6000) if i % 25 == 0 else ""
        log.append(base)
    """
)


def test_eight_writers_ten_thousand_events_each_with_rotation(tmp_path, tcg_home):
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(n), str(go), str(EACH)]) for n in range(WRITERS)]
    go.touch()
    for p in procs:
        assert p.wait(timeout=600) == 0
    files = jsonl.rotated_paths(get_paths().events_path)
    assert len(files) > 10  # the rotation really happened, many times, under contention
    seqs: dict[int, list[int]] = {n: [] for n in range(WRITERS)}
    for f in files:
        data = open(f, "rb").read()
        assert data.endswith(b"\n")
        for raw in data.splitlines():
            rec = json.loads(raw)  # every line is one whole record
            seqs[rec["writer"]].append(rec["seq"])
    for n in range(WRITERS):
        assert seqs[n] == list(range(EACH)), f"writer {n} lost or reordered records"
