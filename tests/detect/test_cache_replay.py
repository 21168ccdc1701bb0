"""A genuine signed cache file of one identity replayed under another's name.

Every cache is signed with the install key, which the agent cannot read; but it
can copy a file tcg signed. Each cache's MAC binds its file name (which names
what the file was built from), so a copy under another name reads as absent and
is rebuilt. Each step runs in a process of its own, as sessions do.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.detect.conftest import ENGINES

pytestmark = pytest.mark.skipif("hyperscan" not in ENGINES, reason="hyperscan wheel not installed")

AWS = "AKIA" + "QYLPMN5HHHFPZAM2"
GH = "ghp_" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAB7C"

DETECT = f"""
import json, os, sys
from tcg.detect import engine, regex
from tcg.keyhash import load_or_create_key
from tcg.paths import get_paths
disabled = frozenset(a for a in sys.argv[1].split(",") if a)
d = engine._build_detector(disabled, "hyperscan", None)
found = sorted({{f.rule_id for f in d.find("key={AWS} tok={GH} pw")}})
paths = get_paths()
memo = regex.AnalysisMemo(os.path.join(paths.cache_dir, "detect", "analysis.memo"), load_or_create_key(paths))
print(json.dumps({{"found": found, "verified": memo._verified}}))
"""

MASK = """
import json
from tcg.mask import masker_for
from tcg.policy.load import load_policy
m = masker_for(load_policy(), "terminal")
first = m.feed(b"export K=AKIAQY")
print(json.dumps({"first": first.decode("latin-1")}))
"""


def _run(tmp_path: Path, script: str, *args: str, policy: Path | None = None,
         fsize: int | None = None) -> dict:
    env = {**os.environ, "TCG_HOME": str(tmp_path / "home"), "HOME": str(tmp_path / "h")}
    env.pop("TCG_POLICY", None)
    if policy is not None:
        env["TCG_POLICY"] = str(policy)

    def limit() -> None:  # a disk that is nearly full: the rebuilt database cannot be written
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    out = subprocess.run([sys.executable, "-c", script, *args], env=env, capture_output=True,
                         text=True, timeout=600, preexec_fn=limit, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _detect_dir(tmp_path: Path) -> Path:
    return tmp_path / "home" / "cache" / "detect"


def _built_under_both(tmp_path: Path, pattern: str, script: str, *args: str) -> tuple[Path, Path]:
    """A cache file built under a policy that disables the AWS key rule (A), then
    the default policy's (B)."""
    policy = tmp_path / "polA.toml"
    policy.write_text('[detect]\ndisabled_rules = ["aws-access-key-id"]\n')
    _run(tmp_path, script, *args, policy=policy)
    (a,) = _detect_dir(tmp_path).glob(pattern)
    _run(tmp_path, script, *([""] if args else []))
    (b,) = set(_detect_dir(tmp_path).glob(pattern)) - {a}
    return a, b


def test_replayed_compiled_database_is_rebuilt_not_memoized(tmp_path):
    a, b = _built_under_both(tmp_path, "hs-*.db", DETECT, "aws-access-key-id")
    assert _run(tmp_path, DETECT, "aws-access-key-id")["found"] == ["github-pat-classic"]
    want = _run(tmp_path, DETECT, "")["found"]
    assert want == ["aws-access-key-id", "github-pat-classic"]
    genuine_b = b.read_bytes()
    shutil.copyfile(a, b)
    # the rebuild of B cannot be written (EFBIG); the small memo can
    limited = _run(tmp_path, DETECT, "", fsize=len(genuine_b) // 2)
    assert limited["found"] == want  # this process uses its own rebuilt database
    # the memo never vouches for the file now under B's name (A's copy)
    on_disk = "mac:" + b.read_bytes().split(b"\n", 1)[0].decode("ascii")
    assert limited["verified"].get(b.name) != on_disk
    later = _run(tmp_path, DETECT, "")
    assert later["found"] == want  # every later session too
    assert b.read_bytes() != a.read_bytes()  # the replayed file failed its MAC and was rebuilt


def test_failed_write_after_rebuild_leaves_no_memo_entry(tmp_path):
    a, b = _built_under_both(tmp_path, "hs-*.db", DETECT, "aws-access-key-id")
    size = b.stat().st_size
    shutil.copyfile(a, b)
    (_detect_dir(tmp_path) / "analysis.memo").unlink()  # nothing remembered from before
    got = _run(tmp_path, DETECT, "", fsize=size // 2)  # B is rebuilt; its write fails
    assert got["found"] == ["aws-access-key-id", "github-pat-classic"]
    assert b.name not in got["verified"]


def test_replayed_derived_cache_is_not_used(tmp_path):
    a, b = _built_under_both(tmp_path, "anchors-*.json", MASK)
    assert _run(tmp_path, MASK)["first"] == "export K="  # B holds the key's start back
    shutil.copyfile(a, b)
    assert _run(tmp_path, MASK)["first"] == "export K="  # A's anchors (no AWS rule) not used
    assert b.read_bytes() != a.read_bytes()  # rebuilt under B's own signature
