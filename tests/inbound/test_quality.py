"""The acceptance figures, measured on corpora nobody here wrote (bastioncorpus,
jailbreak-corpus-mini) and on tcg's own EN/RU/UZ attacks and hard negatives
(bench/inbound_quality.py prints the full table)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from tcg.inbound.inspect import inspect

pytest.importorskip("bastioncorpus", reason="bastioncorpus (PyPI) is a test dependency")
pytest.importorskip("jailbreak_corpus_mini", reason="jailbreak-corpus-mini-py (PyPI) is a test dependency")

_spec = importlib.util.spec_from_file_location(
    "inbound_quality", Path(__file__).resolve().parents[2] / "bench" / "inbound_quality.py")
quality = importlib.util.module_from_spec(_spec)
sys.modules["inbound_quality"] = quality
_spec.loader.exec_module(quality)


def _metrics(rows, engine):
    return quality.evaluate(rows, lambda t: inspect(engine, t).flagged)


def test_bastioncorpus(engines):
    rows = quality.bastion_rows()
    assert len(rows) == 181
    for name, eng in engines.items():
        m = _metrics(rows, eng)
        assert m["recall"] >= 0.80, (name, m)
        assert m["fp_rate"] <= 0.10, (name, m)


def test_own_corpus_no_false_positive_in_ru_and_uz(engine):
    rows = quality.own_rows()
    for lang in ("ru", "uz", "en"):
        m = _metrics([r for r in rows if r["lang"] == lang], engine)
        assert m["false_positives"] == 0, (lang, m)
        assert m["recall"] == 1.0, (lang, m)


def test_jailbreak_corpus_mini_pinned(engine):
    """15 short fixtures, many outside the families (tool misuse without a destructive
    tool name, rot13 text without a decode order): pinned, so a change shows."""
    m = _metrics(quality.mini_rows(), engine)
    assert m["attacks"] == 15 and m["caught"] >= 6, m
