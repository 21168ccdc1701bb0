"""The dense database: rules without a literal run (cards, IBAN, phones, e-mail) in a
hyperscan database of their own, scanned on a helper thread beside the rest on
large buffers (tcg.detect.hsdb.HsPair, Detector.find_bytes). Findings must not
depend on it: threaded, single-threaded and the re engine agree."""

from __future__ import annotations

import os
import random

import pytest

from tcg.detect import hsdb
from tcg.detect.engine import Detector
from tcg.detect.helper import Helper
from tcg.detect.hsdb import PARALLEL_MIN
from tcg.detect.regex import literal_factor
from tests.detect.conftest import ENGINES

pytestmark = pytest.mark.skipif("hyperscan" not in ENGINES, reason="hyperscan wheel not installed")


@pytest.mark.parametrize("pattern, factor", [
    (r"\b[2-6][0-9]{3}(?:[ -]?[0-9]{4}){2}\b", 0),
    (r"\+[1-9][0-9]{6,14}", 1),
    (r"ghp_[A-Za-z0-9]{36}", 4),
    (r"(?:abc|de)x", 2),
    (r"(?:ab)+c", 2),
    (r"(?:ab)?c", 1),
    (r"(?:ab|[0-9])c", 1),
    (r"(?i)token\s*=", 5),
])
def test_literal_factor(pattern, factor):
    assert literal_factor(pattern) == factor


def test_packaged_rules_split_by_literal_factor(detectors):
    det = detectors["hyperscan"]
    pair = det._hs_db
    dense = {det._compiled[i].rule.id for i in pair.dense_ids}
    assert {"payment-card", "iban"} <= dense
    for c in det._compiled:
        if c.rule.id in det.hyperscan_rules:
            assert (c.index in pair.dense_ids) == (literal_factor(c.rule.regex) < hsdb.DENSE_FACTOR), c.rule.id


def _planted_text(all_rules, seed: int, size: int) -> bytes:
    """``size`` bytes of log-like filler with every rule's match examples planted."""
    r = random.Random(seed)
    words = ["GET", "/api/v1/items", "200", "ok", "user", "cache", "miss", "2026-01-01T12:00:00Z",
             "id=4821", "ms=17", "worker", "started", "\x1b[01;34mdir\x1b[0m", "é", "—"]
    plants = [ex for rule in all_rules for ex in rule.examples_match]
    parts: list[str] = []
    length = 0
    while length < size:
        piece = " ".join(r.choices(words, k=r.randrange(4, 12)))
        if r.random() < 0.25:
            piece += " " + r.choice(plants)
        parts.append(piece + "\n")
        length += len(piece) + 1
    return "".join(parts).encode("utf-8")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_threaded_scan_finds_what_one_thread_and_the_re_engine_find(detectors, all_rules, seed, monkeypatch):
    hs, plain = detectors["hyperscan"], detectors["re"]
    data = _planted_text(all_rules, seed, 3 * PARALLEL_MIN)
    monkeypatch.setattr(hsdb, "_cpus_to_spare", lambda: True)
    threaded = hs.find_bytes(data, decode=True)
    assert hs._hs_db.helper is not None and hs._hs_db.helper._pid == os.getpid()  # the helper ran
    monkeypatch.setattr(hsdb, "_cpus_to_spare", lambda: False)
    single = hs.find_bytes(data, decode=True)
    assert threaded == single
    assert {f.rule_id for f in threaded} >= {"payment-card", "iban", "email"}
    assert threaded == plain.find_bytes(data, decode=True)
    assert hs.find_bytes(data, overlapping=True) == plain.find_bytes(data, overlapping=True)


def test_masked_stream_is_the_same_with_and_without_the_helper(detectors, all_rules, monkeypatch):
    from tcg.keyhash import KeyedHasher
    from tcg.mask import Masker

    det = detectors["hyperscan"]
    data = _planted_text(all_rules, 7, 6 * PARALLEL_MIN)
    hasher = KeyedHasher(b"\x01" * 32)
    outputs = []
    for spare in (True, False):
        monkeypatch.setattr(hsdb, "_cpus_to_spare", lambda spare=spare: spare)
        for size in (PARALLEL_MIN + 1000, 1 << 18, 1 << 20):
            m = Masker(det, hasher, "strict")
            outputs.append(b"".join(m.feed(data[i:i + size]) for i in range(0, len(data), size)) + m.flush())
    assert all(out == outputs[0] for out in outputs)
    assert b"<PII:payment-card:" in outputs[0] and b"<PII:iban:" in outputs[0]


def test_helper_returns_results_and_raises_errors():
    h = Helper()
    h.start(lambda: 41 + 1)
    assert h.result() == 42

    def boom():
        raise ValueError("detector crash")

    h.start(boom)
    with pytest.raises(ValueError, match="detector crash"):
        h.result()
    h.start(lambda: "still serving")  # the thread survives an error
    assert h.result() == "still serving"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_helper_works_in_a_forked_child():
    h = Helper()
    h.start(lambda: 1)
    assert h.result() == 1
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through its exit code
        try:
            h.start(lambda: os.getpid())
            os._exit(0 if h.result() == os.getpid() else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_cached_database_keeps_the_split(tmp_path):
    from tcg.detect.regex import AnalysisMemo
    from tcg.detect.rule import load_rules

    key = b"k" * 32
    rules = load_rules()
    d1 = Detector.from_rules(rules, engine="hyperscan", cache_dir=tmp_path, memo=AnalysisMemo(None, key))
    d2 = Detector.from_rules(rules, engine="hyperscan", cache_dir=tmp_path, memo=AnalysisMemo(None, key))
    assert d1._hs_db.dense_ids == d2._hs_db.dense_ids and d2._hs_db.dense is not None
    data = _planted_text(rules, 5, 2 * PARALLEL_MIN)
    assert d1.find_bytes(data, decode=True) == d2.find_bytes(data, decode=True)
