"""The start-up cache: the packaged rules and the hyperscan databases are read from
signed files in the cache dir instead of being parsed and compiled again, and an
engine built that way decides exactly as one built from the rule files (and as the
``re`` engine, which runs every rule over whole views and caches nothing) — on the
corpora nobody here wrote and on random mutations of them."""

from __future__ import annotations

import json
import secrets

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcg.detect.engine import hyperscan_available
from tcg.inbound import engine as engine_mod
from tcg.inbound.engine import InboundEngine, packaged_rules
from tcg.inbound.inspect import inspect
from tcg.inbound.rules import builtin_rule_files, rule_from_record
from tests.inbound.conftest import RULES
from tests.inbound.test_quality import quality

KEY = secrets.token_bytes(32)


def _decisions(findings):
    return (findings.rules, findings.where, findings.cut_at, findings.invisible,
            findings.expensive)


def test_rule_records_round_trip_through_json():
    for rule in RULES:
        assert rule_from_record(json.loads(json.dumps(rule.record()))) == rule


def test_rule_record_of_another_shape_is_refused():
    record = RULES[0].record()
    del record["prefilter"]
    with pytest.raises(KeyError):
        rule_from_record(record)


def test_packaged_rules_come_from_the_signed_cache(tmp_path, monkeypatch):
    files = builtin_rule_files()
    assert packaged_rules(files, tmp_path, KEY) == RULES
    [cached] = tmp_path.glob("rules-*.json")

    def no_parsing(*_a, **_k):
        raise AssertionError("the rules were parsed again")

    monkeypatch.setattr(engine_mod, "load_rules", no_parsing)
    assert packaged_rules(files, tmp_path, KEY) == RULES

    # a forged cache (a rule made harmless, MAC line kept) reads as absent: parsed again
    mac, _, body = cached.read_bytes().partition(b"\n")
    doc = json.loads(body)
    doc["rules"][0]["regex"] = "(?!)x"
    cached.write_bytes(mac + b"\n" + json.dumps(doc).encode())
    parsed = []
    monkeypatch.setattr(engine_mod, "load_rules", lambda: parsed.append(1) or list(RULES))
    assert packaged_rules(files, tmp_path, KEY) == RULES
    assert parsed == [1]
    # another install's key cannot read it either
    assert packaged_rules(files, tmp_path, secrets.token_bytes(32)) == RULES
    assert parsed == [1, 1]


def test_changed_rule_files_are_parsed_again(tmp_path, monkeypatch):
    files = builtin_rule_files()
    packaged_rules(files, tmp_path, KEY)
    parsed = []
    monkeypatch.setattr(engine_mod, "load_rules", lambda: parsed.append(1) or list(RULES))
    edited = [(name, text + "\n# edited\n") for name, text in files]
    packaged_rules(edited, tmp_path, KEY)
    assert parsed == [1]
    assert len(list(tmp_path.glob("rules-*.json"))) == 2


@pytest.fixture(scope="module")
def cached_engine(tmp_path_factory) -> InboundEngine:
    """A hyperscan engine whose rules and databases were read from the cache (the way
    every process but the first builds it)."""
    if not hyperscan_available():
        pytest.skip("hyperscan wheel not installed")
    cache = tmp_path_factory.mktemp("inbound-cache")
    files = builtin_rule_files()
    InboundEngine(packaged_rules(files, cache, KEY), engine="hyperscan", cache_dir=cache, key=KEY)
    eng = InboundEngine(packaged_rules(files, cache, KEY), engine="hyperscan", cache_dir=cache,
                        key=KEY)
    assert eng._rules_db and all(isinstance(db, str) for db in eng._rules_db.values()), \
        "the databases were compiled, not read from the cache"
    return eng


ROWS = quality.bastion_rows() + quality.mini_rows() + quality.own_rows()


def test_cached_engine_decides_like_the_rule_files_on_the_corpora(cached_engine, engines):
    for row in ROWS:
        want = _decisions(inspect(engines["re"], row["text"]))
        assert _decisions(inspect(cached_engine, row["text"])) == want, row["id"]
        assert _decisions(inspect(engines["hyperscan"], row["text"])) == want, row["id"]


MUTATION = st.tuples(st.floats(0, 1), st.sampled_from(["insert", "delete", "replace"]),
                     st.sampled_from(list(" \n.,'ʻ’аоеiIl0\u200b\u00a0ｉ𝐢%+") + ["  ", "\t"]))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(row=st.sampled_from(ROWS), edits=st.lists(MUTATION, max_size=5))
def test_cached_engine_decides_like_re_on_mutated_rows(cached_engine, engines, row, edits):
    text = row["text"]
    for where, op, ch in edits:
        i = int(where * len(text))
        if op == "insert":
            text = text[:i] + ch + text[i:]
        elif op == "delete":
            text = text[:i] + text[i + 1:]
        else:
            text = text[:i] + ch + text[i + 1:]
    assert _decisions(inspect(cached_engine, text)) == _decisions(inspect(engines["re"], text))
