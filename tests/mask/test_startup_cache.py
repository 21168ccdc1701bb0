"""The masker's derived tables (strict hold-back bound, terminal anchors) are restored
from a signed start-up cache (tcg.detect.derived): the restored objects must answer
exactly like freshly built ones, and a tampered cache must be ignored."""

from __future__ import annotations

import random

import pytest

from tcg.detect import regex as rx
from tcg.detect.engine import Detector
from tcg.detect.hsdb import hyperscan_available
from tcg.detect.rule import load_rules
from tcg.mask.anchors import anchors_for_detector, build_anchors
from tcg.mask.strict_bound import StrictBound

pytestmark = pytest.mark.skipif(not hyperscan_available(), reason="caches hyperscan databases")


@pytest.fixture(scope="module")
def det(tmp_path_factory):
    rules = load_rules()[::4]  # a quarter of the rules: enough shapes, fast to compile
    return Detector.from_rules(rules, cache_dir=tmp_path_factory.mktemp("cache"),
                               memo=rx.AnalysisMemo(None, b"k" * 32))


def _views(seed=3):
    r = random.Random(seed)
    words = [b"AKIA", b"ghp_", b"sk-", b"token=", b"password: ", b"-----BEGIN R", b"\n", b" ",
             b"x" * 30, b"QUJD" * 8, b"4111 1111", b"user@host.io", b"\xd0\x90"]
    return [b"".join(r.choices(words, k=r.randrange(1, 30))) for _ in range(300)]


def test_strict_bound_restored_from_cache_answers_the_same(det):
    fresh = StrictBound(det.rules, decode_run=4098)
    first = StrictBound.for_detector(det, 4098)  # builds and stores
    assert list(det.cache_dir.glob("strict-bound-*.json"))
    again = StrictBound.for_detector(det, 4098)  # restored
    for v in _views():
        want = fresh.hold_from(v)
        assert first.hold_from(v) == want == again.hold_from(v)
        assert again.hold_from(v, precise=True) == fresh.hold_from(v, precise=True)


def test_anchors_restored_from_cache_answer_the_same(det):
    fresh = build_anchors(det.rules)
    anchors_for_detector(det)
    again = anchors_for_detector(det)
    for v in _views():
        assert again.hold_from(v, 0) == fresh.hold_from(v, 0)


def test_tampered_cache_is_ignored(det):
    StrictBound.for_detector(det, 4098)
    for f in det.cache_dir.glob("strict-bound-*.json"):
        data = f.read_bytes()
        f.write_bytes(data.replace(b"[", b"[1,", 1))  # a changed body: the MAC fails
    fresh = StrictBound(det.rules, decode_run=4098)
    again = StrictBound.for_detector(det, 4098)
    for v in _views(5):
        assert again.hold_from(v) == fresh.hold_from(v)


def test_tail_table_restored_from_cache_answers_the_same(det, monkeypatch):
    """The cut-off-token table (tcg.mask.tail) is built from every rule's parse tree
    (~70 ms, the first key held in a session waited for it): restored from the cache it
    parses nothing and answers exactly like a fresh one."""
    from tcg.mask import tail

    rules = tuple(det.rules)
    fresh = tail.TailCheck(rules, *tail.tail_anchors(rules))
    first = tail.tail_check.__wrapped__(det)  # builds and stores
    assert list(det.cache_dir.glob("tail-*.json"))

    def no_parse(_rules):
        raise AssertionError("the restored table parsed the rules again")

    monkeypatch.setattr(tail, "tail_anchors", no_parse)
    again = tail.tail_check.__wrapped__(det)
    # the rules' own match examples cut short: tokens that began a secret and stopped
    cut = [ex.encode()[: len(ex) * 2 // 3] for r in rules for ex in r.examples_match]
    for v in [*_views(7), *cut]:
        for lo in (0, len(v) // 2):
            assert first.start(v, lo) == fresh.start(v, lo) == again.start(v, lo), v[:40]
        assert again.anchor_end(v, 1) == fresh.anchor_end(v, 1)
    assert any(again.start(v, 0) is not None for v in cut)
