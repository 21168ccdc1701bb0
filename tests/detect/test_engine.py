"""Detector behaviour: spans, overlap resolution, blocks, engines, locality, loading."""

from __future__ import annotations

import os
import random
import time

import pytest

from tcg.detect import hsdb
from tcg.detect.engine import CONTEXT, Detector, load_detector
from tcg.detect.findings import Finding
from tcg.policy.load import Policy
from tests.detect.conftest import ENGINES
from tests.detect.rulesets import engine_rules

TOKEN = "tst_Q8wE2rT5yU7iO9pA3sD6fG"


@pytest.fixture(scope="module", params=ENGINES)
def det(request):
    return Detector.from_rules(engine_rules(), engine=request.param)


def _spans(findings):
    return [(f.start, f.end, f.rule_id) for f in findings]


def test_finding_has_no_value_field():
    names = list(Finding._fields)
    assert names == ["start", "end", "rule_id", "category", "encoding"]


def test_value_group_span_and_bytes_offsets(det):
    text = f"export X={TOKEN}; passwd = Hx9!kq2Lm#"
    fs = det.find(text)
    assert [text[f.start:f.end] for f in fs] == [TOKEN, "Hx9!kq2Lm#"]
    assert [f.category for f in fs] == ["secret", "secret"]
    assert det.find_bytes(text.encode()) == fs


def test_str_offsets_with_non_ascii_text(det):
    text = f"ключ — {TOKEN} — почта иван@x ivan@corp.ru ✓"
    fs = det.find(text)
    assert [text[f.start:f.end] for f in fs] == [TOKEN, "ivan@corp.ru"]
    data = text.encode()
    assert [data[f.start:f.end] for f in det.find_bytes(data)] == [TOKEN.encode(), b"ivan@corp.ru"]


def test_invalid_utf8_is_tolerated(det):
    data = b"\xff\xfe\x80garbage " + TOKEN.encode() + b" \xc3(\xa0\xa1 passwd=q1w2e3r4t5\xed\xa0\x80"
    fs = det.find_bytes(data)
    assert [data[f.start:f.end] for f in fs] == [TOKEN.encode(), b"q1w2e3r4t5"]
    # a str holding lone surrogates (surrogateescape-decoded bytes) works too
    text = data.decode("utf-8", "surrogateescape")
    assert [text[f.start:f.end] for f in det.find(text)] == [TOKEN, "q1w2e3r4t5"]


def test_allow_list_entropy_and_validator(det):
    assert det.find("tst_AAAAbbbbCCCCddddEEEEffff") == []  # allow.values
    assert det.find("tst_ExAmPlE0123456789abcdef") == []  # allow.patterns
    assert det.find("tst_aaaaaaaaaaaaaaaaaaaaaaaa") == []  # entropy floor
    assert det.find("4111111111111112") == []  # Luhn fails
    assert _spans(det.find("4111111111111111")) == [(0, 16, "tst-card")]


def test_keyword_must_be_inside_the_match(det):
    # the keyword "@" nowhere in the match: nothing, even with "@" elsewhere in the text
    assert det.find("tst_ plain 4111111111111112 @ passwd") == []


def test_secret_beats_overlapping_pii(det):
    text = f"https://u:{TOKEN}@host.io/x"
    fs = det.find(text, overlapping=True)
    assert {f.rule_id for f in fs} == {"tst-token", "tst-mail"}
    (only,) = det.find(text)
    assert (text[only.start:only.end], only.rule_id) == (TOKEN, "tst-token")


def test_same_category_overlap_is_clipped_and_covers_union():
    rules = engine_rules()
    d = Detector.from_rules(rules, engine="re")
    text = "passwd=abcdefghijklmnopqrstuvwxyz0123!" + TOKEN  # assign value ends inside the token
    fs = d.find(text)
    assert [(f.start, f.end, f.rule_id) for f in fs] == [(7, 47, "tst-assign"), (47, 64, "tst-token")]
    covered = {i for f in fs for i in range(f.start, f.end)}
    cands = d.find(text, overlapping=True)
    assert covered == {i for f in cands for i in range(f.start, f.end)}
    assert all(a.end <= b.start for a, b in zip(fs, fs[1:], strict=False))
    assert fs[0].rule_id == "tst-assign"  # leftmost wins


def test_pem_block_reported_begin_to_end(det):
    body = "MIIEowIBAAKCAQEAq7Bd0xQ2v9nRk3mZ\nZm9vYmFy\n"
    text = f"key:\n-----BEGIN RSA PRIVATE KEY-----\n{body}-----END RSA PRIVATE KEY-----\nafter"
    (f,) = det.find(text)
    assert text[f.start:f.end].startswith("-----BEGIN RSA")
    assert text[f.start:f.end].endswith("-----END RSA PRIVATE KEY-----")
    cut = text[: text.index("-----END")]
    (g,) = det.find(cut)
    assert (g.start, g.end) == (f.start, len(cut))  # no END line: to the end (fail closed)
    assert set(det.block_rules) == {"tst-pem"}
    assert det.block_rules["tst-pem"].search(b"-----END OPENSSH PRIVATE KEY-----")


def test_max_match_len(det):
    widths = {r.id: r.max_len for r in det.rules}
    assert widths["tst-token"] == 34
    assert det.max_match_len == max(max(widths.values()), 4 * widths["tst-akia"])


def _corpus(rules, seed=11, size=60_000):
    rnd = random.Random(seed)
    noise = [
        "def handler(event, context):\n    return {'statusCode': 200}\n",
        "2026-11-29T10:00:00Z INFO request id=9f8e7d6c user@ latency=12ms\n",
        "Ошибка соединения: таймаут 30 с; повтор через 5 с\n",
        "sha512-2Q0xZ9h6V7rJ3v1k9b8Yw0P4n5m6l7k8j9h0g1f2e3d4c5b6a7Z8Y9X0W1V2U3T4==\n",
        "passwd = ${DB_PASSWORD}\n", "\x00\x01binary\xff\n", "SELECT * FROM t WHERE id = 4111;\n",
    ]
    parts = []
    examples = [ex for r in rules for ex in r.examples_match + r.examples_no_match]
    while sum(map(len, parts)) < size:
        parts.append(rnd.choice(noise) if rnd.random() < 0.7 else rnd.choice(examples) + rnd.choice(" \n;,\"'"))
    return "".join(parts)


@pytest.mark.skipif(len(ENGINES) < 2, reason="hyperscan wheel not installed")
def test_engines_identical_on_mixed_corpus(all_rules, detectors):
    for rules, hs, plain in (
        (engine_rules(), Detector.from_rules(engine_rules(), engine="hyperscan"),
         Detector.from_rules(engine_rules(), engine="re")),
        (all_rules, detectors["hyperscan"], detectors["re"]),
    ):
        text = _corpus(rules)
        data = text.encode("utf-8", "surrogateescape")
        for kw in ({}, {"overlapping": True}, {"decode": True}):
            a, b = hs.find_bytes(data, **kw), plain.find_bytes(data, **kw)
            assert a == b, kw
            assert len(a) > 10
        assert hs.find(text) == plain.find(text)


def test_candidates_are_position_local(det, all_rules, detectors):
    """The candidates found in a slice equal those of the whole input away from the
    slice edges: a finding [s, e) depends only on bytes [e - L - 1, s + L + CONTEXT)
    where L = max_match_len (its match starts at most L before e). The streaming
    masker relies on this."""
    for d, rules in ((det, engine_rules()), (detectors[det.engine], all_rules)):
        data = _corpus(rules, seed=5, size=40_000).encode()
        whole = [f for f in d.find_bytes(data, overlapping=True) if f.rule_id not in d.block_rules]
        rnd = random.Random(3)
        for _ in range(10):
            a = rnd.randrange(0, len(data) // 2)
            b = rnd.randrange(a + 1, len(data) + 1)
            part = [f._replace(start=f.start + a, end=f.end + a)
                    for f in d.find_bytes(data[a:b], overlapping=True) if f.rule_id not in d.block_rules]

            def inner(fs, a=a, b=b, L=d.max_match_len):
                return [f for f in fs if f.end - L - 1 >= a and f.start + L + CONTEXT <= b]

            assert inner(part) == inner(whole)


def test_engine_env_forces_re(monkeypatch):
    monkeypatch.setenv("TCG_DETECT_ENGINE", "re")
    assert hsdb.default_engine() == "re"
    assert Detector.from_rules(engine_rules()).engine == "re"
    with pytest.raises(ValueError):
        Detector.from_rules(engine_rules(), engine="pcre")


def _policy(disabled):
    return Policy(data={"detect": {"disabled_rules": disabled}}, fingerprint="f" * 64, sources=())


def test_load_detector_caches_and_honours_disabled_rules(all_rules):
    a = load_detector(engine="re")  # hyperscan compile time is spent in the leak test
    assert load_detector(engine="re") is a
    assert {r.id for r in a.rules} == {r.id for r in all_rules}
    victim = all_rules[0].id
    b = load_detector(_policy([victim]), engine="re")
    assert b is load_detector(_policy([victim]), engine="re")
    assert victim not in {r.id for r in b.rules}
    assert len(b.rules) == len(all_rules) - 1


@pytest.mark.skipif("hyperscan" not in ENGINES, reason="hyperscan wheel not installed")
def test_hyperscan_cache_on_disk_is_verified(tmp_path):
    from tcg.detect.regex import AnalysisMemo

    key = b"k" * 32
    memo = lambda: AnalysisMemo(None, key)  # noqa: E731 - the install key, not persisted
    rules = engine_rules()
    d1 = Detector.from_rules(rules, engine="hyperscan", cache_dir=tmp_path, memo=memo())
    (db_file,) = tmp_path.glob("hs-*.db")
    d2 = Detector.from_rules(rules, engine="hyperscan", cache_dir=tmp_path, memo=memo())
    text = f"a {TOKEN} passwd=q1w2e3r4t5 ivan@corp.ru"
    assert d1.find(text) == d2.find(text) and len(d1.find(text)) == 3
    # a cache from an empty database (or garbage, or unsigned) must not be trusted: rebuilt, still finds
    Detector.from_rules(rules[:1], engine="hyperscan", cache_dir=tmp_path / "o", memo=memo())
    (other_file,) = (tmp_path / "o").glob("hs-*.db")
    mac, head, _ = db_file.read_bytes().split(b"\n", 2)
    other_blob = other_file.read_bytes().split(b"\n", 2)[2]
    for forged in (mac + b"\n" + head + b"\n" + other_blob,  # old MAC, swapped database
                   head + b"\n" + other_blob,  # unsigned
                   b"garbage"):
        db_file.write_bytes(forged)
        d3 = Detector.from_rules(rules, engine="hyperscan", cache_dir=tmp_path, memo=memo())
        assert d3.find(text) == d1.find(text)
        assert db_file.read_bytes() != forged  # rebuilt and re-signed
    assert (db_file.stat().st_mode & 0o777) == 0o600
    # without the install key nothing is cached (nor trusted)
    Detector.from_rules(rules, engine="hyperscan", cache_dir=tmp_path / "nokey")
    assert not list((tmp_path / "nokey").glob("hs-*.db"))


@pytest.mark.skipif("hyperscan" not in ENGINES, reason="hyperscan wheel not installed")
def test_the_cached_database_is_loaded_not_compiled_again(tmp_path, monkeypatch):
    """A second detector over the same rules takes both databases from the signed
    file (read in its pieces, each straight into the bytes hyperscan.loadb takes):
    nothing is compiled, and it finds what the first one found."""
    from tcg._lean import hs
    from tcg.detect.regex import AnalysisMemo

    key = b"k" * 32
    rules = engine_rules()
    d1 = Detector.from_rules(rules, engine="hyperscan", cache_dir=tmp_path, memo=AnalysisMemo(None, key))

    def no_compile(*_a: object, **_k: object) -> None:
        raise AssertionError("compiled again")

    monkeypatch.setattr(hs, "Database", no_compile)
    d2 = Detector.from_rules(rules, engine="hyperscan", cache_dir=tmp_path, memo=AnalysisMemo(None, key))
    text = f"a {TOKEN} passwd=q1w2e3r4t5 ivan@corp.ru 4111 1111 1111 1111"
    assert d2.find(text) == d1.find(text) and len(d1.find(text)) >= 3
    assert d2.hyperscan_rules == d1.hyperscan_rules


@pytest.mark.skipif("hyperscan" not in ENGINES, reason="hyperscan wheel not installed")
def test_two_builds_of_one_database_at_once_compile_it_once(tmp_path, monkeypatch):
    """Sessions opened together after an upgrade each needed the same database:
    the second build waits for the first one's lock, then loads what it stored."""
    import threading

    from tcg._lean import hs
    from tcg.detect.regex import AnalysisMemo

    key = b"k" * 32
    rules = engine_rules()
    real_database = hs.Database
    compiled_by: list[str] = []
    second_waits = threading.Event()

    class Counting(real_database):  # type: ignore[misc, valid-type]
        def compile(self, *a: object, **k: object) -> None:
            compiled_by.append(threading.current_thread().name)
            if threading.current_thread().name == "first":
                second_waits.wait(30)  # the second build is at the lock by now
            super().compile(*a, **k)

    real_lock = getattr(hsdb, "_build_lock", None)

    def build_lock(cache_file):  # noqa: ANN001, ANN202
        if threading.current_thread().name == "second":
            second_waits.set()
        return real_lock(cache_file)

    monkeypatch.setattr(hs, "Database", Counting)
    monkeypatch.setattr(hsdb, "_build_lock", build_lock, raising=False)
    found: dict[str, list] = {}
    text = f"a {TOKEN} passwd=q1w2e3r4t5 ivan@corp.ru"

    def build() -> None:
        d = Detector.from_rules(rules, engine="hyperscan", cache_dir=tmp_path, memo=AnalysisMemo(None, key))
        found[threading.current_thread().name] = d.find(text)

    first = threading.Thread(target=build, name="first")
    first.start()
    deadline = time.monotonic() + 60
    while not compiled_by:
        assert time.monotonic() < deadline, "the first build never compiled"
        time.sleep(0.01)
    second = threading.Thread(target=build, name="second")
    second.start()
    first.join(120)
    second.join(120)
    assert set(compiled_by) == {"first"}, compiled_by
    assert found["second"] == found["first"] and found["first"]


@pytest.mark.skipif("hyperscan" not in ENGINES, reason="hyperscan wheel not installed")
def test_a_demotion_is_remembered_so_the_next_build_compiles_once(tmp_path, monkeypatch):
    """A rule the self-check demotes costs a second compile of the whole database;
    the next build of a database (after an upgrade: the code-bound cache is gone)
    leaves it out from the start. A forged hint file is ignored."""
    from tcg._lean import hs
    from tcg.detect.regex import AnalysisMemo

    key = b"k" * 32
    rules = engine_rules()
    victim = rules[0].id
    real_check = hsdb.self_check
    calls = {"check": 0, "compile": 0}

    def check_once_bad(db, items):  # noqa: ANN001, ANN202 - hyperscan "gets the first rule wrong" once
        calls["check"] += 1
        bad = real_check(db, items)
        return bad | {c.index for c, _, _ in items if c.rule.id == victim} if calls["check"] == 1 else bad

    class Counting(hs.Database):  # type: ignore[misc, valid-type]
        def compile(self, *a: object, **k: object) -> None:
            calls["compile"] += 1
            super().compile(*a, **k)

    monkeypatch.setattr(hsdb, "self_check", check_once_bad)
    monkeypatch.setattr(hs, "Database", Counting)
    first = Detector.from_rules(rules, engine="hyperscan", cache_dir=tmp_path, memo=AnalysisMemo(None, key))
    first_compiles = calls["compile"]
    assert victim not in first.hyperscan_rules
    for db in tmp_path.glob("hs-*.db"):
        db.unlink()
    calls["compile"] = 0
    second = Detector.from_rules(rules, engine="hyperscan", cache_dir=tmp_path, memo=AnalysisMemo(None, key))
    assert calls["compile"] == first_compiles // 2  # each database once, not twice
    assert victim not in second.hyperscan_rules
    text = f"a {TOKEN} passwd=q1w2e3r4t5 ivan@corp.ru " + " ".join(r.examples_match[0] for r in rules[:3])
    plain = Detector.from_rules(rules, engine="re")
    assert second.find(text) == first.find(text) == plain.find(text)

    assert (tmp_path / hsdb.DEMOTED_FILE).exists()
    (tmp_path / hsdb.DEMOTED_FILE).write_text('{"demoted": []}\n')  # unsigned: read as absent
    for db in tmp_path.glob("hs-*.db"):
        db.unlink()
    assert hsdb._demoted_before(tmp_path, key) == set()
    third = Detector.from_rules(rules, engine="hyperscan", cache_dir=tmp_path, memo=AnalysisMemo(None, key))
    assert victim in third.hyperscan_rules


def test_a_build_does_not_wait_for_a_stopped_lock_holder(tmp_path, monkeypatch):
    """A process stopped with Ctrl-Z while it compiles holds the build lock: the
    others stop waiting for it and compile themselves (their terminals would
    otherwise show nothing for BUILD_WAIT)."""
    import signal
    import subprocess
    import sys
    import threading

    if not os.path.isdir("/proc/self"):
        pytest.skip("telling a stopped process needs /proc (Linux)")
    monkeypatch.setattr(hsdb, "BUILD_WAIT", 3600.0)
    cache_file = str(tmp_path / "hs-x.db")
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, os, sys\n"
        f"fd = os.open({cache_file + '.lock'!r}, os.O_RDWR | os.O_CREAT, 0o600)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\n"
        "os.pwrite(fd, b'%d\\n' % os.getpid(), 0)\n"
        "print('locked', flush=True)\n"
        "os.kill(os.getpid(), 19)\n")], stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"locked\n"
        got: list[int | None] = []
        waiter = threading.Thread(target=lambda: got.append(hsdb._build_lock(cache_file)), daemon=True)
        waiter.start()
        waiter.join(120)
        assert got == [None], "still waiting for a stopped holder"
    finally:
        holder.send_signal(signal.SIGCONT)
        holder.kill()
        holder.wait()
    fd = hsdb._build_lock(cache_file)  # the holder gone: the lock is free
    assert fd is not None
    assert os.pread(fd, 32, 0) == b"%d\n" % os.getpid()
    os.close(fd)


DEMOTE_RULE = r"""
[[rule]]
id = "tst-caseless-alternation"
category = "secret"
description = "hyperscan 5.4 misses this caseless alternation once the match is past offset ~40"
regex = '''(?i)(?:mailgun|mg_|api:)[^\r\n]{0,40}(?P<value>key-[a-f0-9]{32})\b'''
keywords = ["mailgun", "mg_", "api:key-"]
[rule.examples]
match = ["curl -s --user 'api:key-251b62f8826e93cc2e07a73642ef54df' https://api.mailgun.net/v3", "MG_KEY=key-4b05a2e59283033168d210462a8937d6"]
no_match = ["key-4b05a2e59283033168d210462a8937d6", "api:key-short"]
"""


@pytest.mark.skipif("hyperscan" not in ENGINES, reason="hyperscan wheel not installed")
def test_rule_hyperscan_gets_wrong_is_demoted_to_keywords():
    from tcg.detect.rule import parse_rules_text

    rules = engine_rules() + parse_rules_text(DEMOTE_RULE, "demote.toml")
    hs = Detector.from_rules(rules, engine="hyperscan")
    plain = Detector.from_rules(rules, engine="re")
    text = "x" * 50 + " curl --user 'api:key-251b62f8826e93cc2e07a73642ef54df' https://api.mailgun.net " + TOKEN
    assert hs.find(text) == plain.find(text)
    assert [f.rule_id for f in hs.find(text)] == ["tst-caseless-alternation", "tst-token"]
    # whichever way hyperscan behaves on this build, every other rule stays in the database
    assert set(hs.hyperscan_rules) >= {r.id for r in engine_rules()}
