"""bench/detect_quality.py's conflict classes: a flagged negative whose value a positive of the
same source holds is "same", and the listing says when that positive is another of the source's
rules (the source's scanner as a whole reports the value). Synthetic samples, fake values."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import detect_quality as dq  # noqa: E402

VALUE = "Qm7Xo2LrTbW9vKc4Nz1sPd8Hj3Fy6Ua0"  # generated-looking, not a real credential


def _samples() -> list[dq.Sample]:
    return [
        dq.Sample(0, "trufflehog", 1, "acme", 1, f'API_TOKEN = "{VALUE}"'),
        dq.Sample(1, "trufflehog", 2, "acmeadmin", 0, f'# not an admin token\nAPI_TOKEN = "{VALUE}"'),
        dq.Sample(2, "trufflehog", 3, "acme", 0, f'API_TOKEN = "{VALUE}" # same rule, other context'),
    ]


def test_same_value_conflicts_name_the_positive() -> None:
    samples = _samples()
    hits = {1: ["generic-secret-assignment"], 2: ["generic-secret-assignment"]}
    got = dq.label_conflicts(samples, hits, lambda s: True)
    assert got == {1: ("same", "trufflehog:1"), 2: ("same", "trufflehog:1")}


def test_listing_marks_a_positive_of_another_rule(capsys) -> None:
    samples = _samples()
    hits = {0: ["generic-secret-assignment"], 1: ["generic-secret-assignment"],
            2: ["generic-secret-assignment"]}
    dq.print_list(samples, hits, "fp", False, lambda s: True)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("same trufflehog:1 (a positive of the source's acme rule)")
    assert lines[1].endswith("same trufflehog:1")
    assert VALUE not in "\n".join(lines)  # values are printed only with --show
