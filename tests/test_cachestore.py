"""One identity of tcg's code (tcg.fingerprint) keys every start-up cache
(tcg.cachestore): editing any module — a detector's regex analysis or validators,
not only the files a cache once listed by hand — invalidates them all, and a
tampered cache file reads as absent."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import tcg
from tcg import cachestore, fingerprint
from tcg.detect import derived
from tcg.detect import regex as rx
from tcg.launcher import cache as gate_cache
from tcg.paths import get_paths
from tcg.policy.load import Policy, PolicySnapshots

PACKAGE = Path(tcg.__file__).resolve().parent
KEY = b"k" * 32


@pytest.fixture
def package_copy(tmp_path: Path) -> Path:
    """A copy of the installed package (byte-code caches left out), to edit."""
    dest = tmp_path / "site" / "tcg"
    shutil.copytree(PACKAGE, dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def _append(path: Path, text: str = "\n# edited\n") -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(text)


@pytest.mark.parametrize("module", ["detect/regex.py", "detect/validators.py", "mask/masker.py",
                                    "entities/normal.py", "inbound/chars.py", "policy/load.py"])
def test_editing_any_module_changes_the_fingerprint(package_copy, module):
    before = fingerprint.fingerprint_of(str(package_copy), tcg.__version__)
    assert fingerprint.fingerprint_of(str(package_copy), tcg.__version__) == before
    _append(package_copy / module)
    assert fingerprint.fingerprint_of(str(package_copy), tcg.__version__) != before


def test_rules_new_files_and_the_version_change_it_and_bytecode_does_not(package_copy):
    fp = lambda: fingerprint.fingerprint_of(str(package_copy), tcg.__version__)  # noqa: E731
    first = fp()
    (package_copy / "detect" / "__pycache__").mkdir()
    (package_copy / "detect" / "__pycache__" / "regex.cpython-311.pyc").write_bytes(b"x")
    assert fp() == first
    rules = next((package_copy / "detect" / "rules").glob("*.toml"))
    _append(rules, "\n# a comment\n")
    second = fp()
    assert second != first
    (package_copy / "detect" / "extra.py").write_text("X = 1\n")
    assert fp() != second
    assert fingerprint.fingerprint_of(str(package_copy), "9.9.9") != fp()


def test_a_wheel_install_reads_its_record(tmp_path):
    """An installed wheel: the dist-info RECORD (which holds every file's SHA-256)
    names the code; one read instead of a walk."""
    site = tmp_path / "site"
    (site / "tcg").mkdir(parents=True)
    (site / "tcg" / "__init__.py").write_text("")
    info = site / f"tcg-{tcg.__version__}.dist-info"
    info.mkdir()
    record = info / "RECORD"
    record.write_text("tcg/__init__.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0\n")
    first = fingerprint.fingerprint_of(str(site / "tcg"), tcg.__version__)
    record.write_text("tcg/__init__.py,sha256=other,1\n")
    assert fingerprint.fingerprint_of(str(site / "tcg"), tcg.__version__) != first
    # A dist-info that does not list the package (an editable install's) is not used.
    record.write_text("__editable__.tcg.pth,sha256=x,1\n")
    walked = fingerprint.fingerprint_of(str(site / "tcg"), tcg.__version__)
    _append(site / "tcg" / "__init__.py")
    assert fingerprint.fingerprint_of(str(site / "tcg"), tcg.__version__) != walked


def test_the_mask_servers_staleness_check_reads_a_wheels_record_and_walks_a_checkout(tmp_path, monkeypatch):
    """The fork server compares the same code state at every request (tcg.runner.maskserver):
    a wheel's RECORD, read without walking the package; a checkout's every file."""
    from tcg.runner import maskserver

    site = tmp_path / "site"
    (site / "tcg").mkdir(parents=True)
    (site / "tcg" / "__init__.py").write_text("")
    info = site / f"tcg-{tcg.__version__}.dist-info"
    info.mkdir()
    (info / "RECORD").write_text("tcg/__init__.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0\n")
    walked: list[str] = []
    real_walk = fingerprint._tree_stamp
    monkeypatch.setattr(fingerprint, "_tree_stamp", lambda d: walked.append(d) or real_walk(d))
    before = fingerprint.code_state(str(site / "tcg"), tcg.__version__)
    (info / "RECORD").write_text("tcg/__init__.py,sha256=upgraded,1\n")  # what pip does on an upgrade
    upgraded = fingerprint.code_state(str(site / "tcg"), tcg.__version__)
    assert upgraded != before and walked == []
    _append(site / "tcg" / "__init__.py")  # an edit by hand, not by pip: not seen (docs/shells.md)
    assert fingerprint.code_state(str(site / "tcg"), tcg.__version__) == upgraded
    assert maskserver.code_stamp() == fingerprint.code_state(str(PACKAGE), tcg.__version__)
    assert set(walked) == {str(PACKAGE)}  # this checkout (an editable install) is walked


def test_code_fingerprint_is_this_install_and_memoised():
    fp = fingerprint.code_fingerprint()
    assert fp == fingerprint.fingerprint_of(str(PACKAGE), tcg.__version__)
    assert fingerprint.code_fingerprint() is fp


# ------------------------------------------------------------------ every cache


@pytest.fixture
def code(monkeypatch):
    """Set which code is running (the memoised fingerprint)."""
    def set_code(name: str) -> None:
        monkeypatch.setattr(fingerprint, "_memo", name)
    return set_code


def test_a_cache_written_by_other_code_or_tampered_reads_as_absent(tmp_path, code):
    path = tmp_path / "c" / "entry"
    code("a" * 32)
    assert cachestore.write_cache(path, KEY, "kind", b"body")
    assert cachestore.read_cache(path, KEY, "kind") == b"body"
    assert cachestore.read_cache(path, KEY, "other-kind") is None
    assert cachestore.read_cache(path, b"x" * 32, "kind") is None  # another install's key
    mac, _, body = path.read_bytes().partition(b"\n")
    path.write_bytes(mac + b"\nbodY")  # same MAC, edited body
    assert cachestore.read_cache(path, KEY, "kind") is None
    path.write_bytes(b"body")  # unsigned
    assert cachestore.read_cache(path, KEY, "kind") is None
    cachestore.write_cache(path, KEY, "kind", b"body")
    code("b" * 32)  # an edited module
    assert cachestore.read_cache(path, KEY, "kind") is None


def test_a_genuine_cache_copied_under_another_name_reads_as_absent(tmp_path, code):
    """Most caches are named by a hash of what they were built from: the name is in
    the MAC, so one identity's genuine file cannot stand in for another's."""
    code("a" * 32)
    one, other = tmp_path / "c" / "hs-aaaa.db", tmp_path / "c" / "hs-bbbb.db"
    mac = cachestore.write_cache_mac(one, KEY, "kind", b"body of a")
    assert mac is not None and cachestore.read_cache_pieces(one, KEY, "kind", lambda s, n: [n])[0] == mac
    assert cachestore.read_cache(one, KEY, "kind") == b"body of a"
    shutil.copyfile(one, other)
    assert cachestore.read_cache(other, KEY, "kind") is None
    assert cachestore.read_cache_pieces(other, KEY, "kind", lambda s, n: [n]) is None
    assert cachestore.read_cache_json(other, KEY, "kind") is None
    (tmp_path / "d").mkdir()
    shutil.copyfile(one, tmp_path / "d" / one.name)  # the same name elsewhere: the caller's tag decides
    assert cachestore.read_cache(tmp_path / "d" / one.name, KEY, "kind") == b"body of a"


def test_a_failed_cache_write_returns_no_mac(tmp_path, code):
    code("a" * 32)
    (tmp_path / "taken").mkdir()  # a directory where the file should go: os.replace fails
    assert cachestore.write_cache_mac(tmp_path / "taken", KEY, "kind", b"body") is None
    assert not cachestore.write_cache(tmp_path / "taken", KEY, "kind", b"body")


def test_every_cache_is_invalidated_by_a_code_change(tmp_home_paths, code):
    """The caches through their own interfaces: policy snapshots, the launch gate's
    result, the rule-analysis memo, derived detector tables."""
    paths, key = tmp_home_paths
    code("a" * 32)
    snaps = PolicySnapshots(paths)
    policy = Policy(data={"x": 1}, fingerprint="f" * 64, sources=(), notices=())
    snaps.put("k1", policy)
    gate_file = Path(paths.cache_dir) / "scan" / "r.gate"
    entry = {"v": gate_cache.CACHE_VERSION, "state": "s", "policy": "p", "scanner": gate_cache.scanner_id(),
             "status": "clean", "counts_by_rule": {}, "files": 1, "blobs": 1}
    gate_cache.store_cached(gate_file, entry, key)
    memo_file = Path(paths.cache_dir) / "memo.bin"
    memo = rx.AnalysisMemo(memo_file, key)
    memo.analyse("ab{1,4}c")
    memo.save()

    class Det:
        cache_dir = Path(paths.cache_dir) / "detect"
        _memo = memo

    derived.store(Det, "anchors", "fp", {"a": 1})

    def readable() -> list[bool]:
        return [PolicySnapshots(paths).get("k1") is not None,
                gate_cache.load_cached(gate_file, "s", "p", gate_cache.scanner_id(), key) is not None,
                rx.AnalysisMemo(memo_file, key)._analysis != {},
                derived.load(Det, "anchors", "fp") is not None]

    assert readable() == [True, True, True, True]
    code("b" * 32)
    assert readable() == [False, False, False, False]


@pytest.fixture
def tmp_home_paths(tcg_home):
    from tcg.keyhash import load_or_create_key

    paths = get_paths()
    return paths, load_or_create_key(paths)


# Signed files that are records, not caches: they must outlive an upgrade.
RECORDS = {
    "tcg/guard/trash.py": "transaction records of reversible deletes (restore after an upgrade)",
    "tcg/guard/approval.py": "one-time approvals the user granted",
    "tcg/detect/hsdb.py": "expressions hyperscan's self-check demoted (hs-demoted): kept across "
                          "upgrades on purpose; keyed by hyperscan's version; a wrong entry costs only speed",
}


def _signed_users() -> dict[str, str]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).as_posix()
        if rel in ("tcg/signed.py", "tcg/cachestore.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "tcg.signed":
                out[rel] = path.read_text(encoding="utf-8")
    return out


def test_caches_go_through_the_cache_store():
    """A module signing files itself is a record keeper (RECORDS) or names its cache
    by the code fingerprint; anything else would be a cache a code change leaves stale."""
    stray = sorted(rel for rel, text in _signed_users().items()
                   if rel not in RECORDS and "code_fingerprint" not in text)
    assert stray == [], f"use tcg.cachestore (or list a record keeper with its reason): {stray}"
    assert set(RECORDS) <= set(_signed_users()), "a record keeper no longer signs: drop it from RECORDS"


def test_editing_a_detector_module_invalidates_the_masked_line_cache(package_copy, tcg_home):
    """End to end, in a copy of the package: `run-line` caches the masked command
    line; after an edit of detect/validators.py (a file no cache listed by hand)
    the entry is rebuilt under the new code, and a second run reuses it."""
    env = {**os.environ, "PYTHONPATH": str(package_copy.parent)}
    code = ("import sys, tcg; assert tcg.__file__.startswith(sys.argv[1]), tcg.__file__\n"
            "from tcg.shell_entry import main; sys.exit(main(['run-line', 'true']))")

    def run() -> bytes:
        res = subprocess.run([sys.executable, "-c", code, str(package_copy)], env=env, capture_output=True,
                             timeout=120, stdin=subprocess.DEVNULL, cwd=package_copy.parent)
        assert res.returncode == 0, res.stderr.decode(errors="replace")
        (entry,) = (tcg_home / "cache" / "masked-lines").iterdir()
        return entry.read_bytes()

    first = run()
    assert run() == first
    _append(package_copy / "detect" / "validators.py")
    second = run()
    assert second != first and second.endswith(b"\ntrue")
    assert run() == second
