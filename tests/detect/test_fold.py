"""Homoglyph/width folding: only for rules with fold = true; spans stay on the original text."""

from __future__ import annotations

import pytest

from tcg.detect.engine import Detector
from tcg.detect.fold import fold
from tests.detect.conftest import ENGINES
from tests.detect.rulesets import engine_rules

KEY = "AKIAUJZDEGXDNCF32EPF"


@pytest.fixture(scope="module", params=ENGINES)
def det(request):
    return Detector.from_rules(engine_rules(), engine=request.param)


def test_fold_is_one_to_one():
    s = "АКІА ＡＫＩＡ１２３ 𝐀𝐁 ½ аРТ"
    assert len(fold(s)) == len(s)
    assert fold("АКІА") == "AKIA"  # Cyrillic
    assert fold("ΑΚΙΑ") == "AKIA"  # Greek
    assert fold("ＡＫＩＡ１２３") == "AKIA123"  # full width
    assert fold("𝐀𝐁𝟏") == "AB1"  # mathematical bold


@pytest.mark.parametrize(
    "variant",
    [
        "АKIA" + KEY[4:],  # Cyrillic А
        "AKΙA" + KEY[4:],  # Greek Iota
        "ＡＫＩＡ" + KEY[4:],  # full-width letters
        "AKIA" + "ＵＪＺＤＥＧＸＤＮＣＦ３２ＥＰＦ",  # full-width body
        KEY[:10] + "Х" + KEY[11:],  # Cyrillic Х inside
    ],
)
def test_folded_key_is_found_with_original_span(det, variant):
    text = f"creds: {variant} end"
    (f,) = det.find(text)
    assert f.rule_id == "tst-akia"
    assert text[f.start:f.end] == variant
    data = text.encode()
    (g,) = det.find_bytes(data)
    assert data[g.start:g.end] == variant.encode()
    assert g.end - g.start <= det.max_match_len


def test_rules_without_fold_do_not_see_homoglyphs(det):
    # tst-token has fold = false: a Cyrillic "т" hides it (by design: folding costs, opt-in)
    assert det.find("tѕt_Q8wE2rT5yU7iO9pA3sD6fG") == []


def test_folded_values_still_validated(det):
    assert det.find("АKIAUJZDEGXDNCF32EP1") == []  # 1 is not base32 -> aws-key-id fails
    assert det.find("АKIAUJZDEGXDNCF32EP") == []


def test_russian_prose_and_mixed_text(det):
    prose = "Пароль от сервера хранится в сейфе, а не в чате. Ключ: см. выше.\n" * 200
    assert det.find(prose) == []
    text = prose + f"ключ АKIA{KEY[4:]} ✓\n" + prose
    (f,) = det.find(text)
    assert text[f.start:f.end] == "АKIA" + KEY[4:]
    data = b"\xff\xfe" * 3000 + ("ＡＫＩＡ" + KEY[4:]).encode() + b"\x80" * 5000
    (g,) = det.find_bytes(data)
    assert data[g.start:g.end] == ("ＡＫＩＡ" + KEY[4:]).encode()


def test_fold_across_block_boundaries(det):
    """A folded key straddling the engine's 4 KB block boundary is still found."""
    for pad in range(4096 - 30, 4096 + 2, 3):
        text = "a" * pad + " АKIA" + KEY[4:] + " "
        (f,) = det.find(text)
        assert text[f.start:f.end] == "АKIA" + KEY[4:], pad


@pytest.mark.skipif(len(ENGINES) < 2, reason="hyperscan wheel not installed")
def test_fold_pass_identical_on_both_engines():
    """hyperscan decides which regions to fold from its own pass, re from a regex:
    same findings, including keys planted around the 4 KB block edges."""
    hs = Detector.from_rules(engine_rules(), engine="hyperscan")
    plain = Detector.from_rules(engine_rules(), engine="re")
    prose = "Пароль от сервера хранится в сейфе, а не в чате.\n" * 300
    variants = ["АKIA" + KEY[4:], "ＡＫＩＡ" + KEY[4:], KEY, "аkіа" + KEY[4:].lower()]
    for k, pos in enumerate([10, 4090, 4100, 8180, 8195, 12000]):
        text = prose[:pos] + " " + variants[k % len(variants)] + " " + prose[pos:]
        data = text.encode()
        assert hs.find_bytes(data) == plain.find_bytes(data), pos
        assert hs.find(text) == plain.find(text)
        if k % len(variants) < 3:
            assert [f.rule_id for f in hs.find(text)] == ["tst-akia"], pos


def test_fold_findings_do_not_depend_on_block_alignment(det):
    """Regions follow 4 KB blocks of the input; shifting the input must shift the
    findings and change nothing else (the masker scans windows at any alignment)."""
    prose = "Пароль хранится в сейфе. " * 400
    key = "АKIA" + KEY[4:]
    base = prose[:3000] + key + "x" + prose[:2000] + " " + key + " " + prose[:500] + key[:-1]
    want = det.find_bytes(base.encode())
    assert len(want) == 1  # glued to "x"/cut short: only the middle key counts
    for pad in (1, 7, 100, 351, 353, 1000, 2047, 4095):
        data = b"a" * pad + base.encode()
        got = [(f.start - pad, f.end - pad, f.rule_id) for f in det.find_bytes(data)]
        assert got == [(f.start, f.end, f.rule_id) for f in want], pad
