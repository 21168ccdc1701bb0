"""The fuzz targets (fuzz/, docs/reliability.md): their seeds and pinned
findings run in every test run; with atheris installed, each target also
fuzzes briefly (`make fuzz` runs 60 s per target)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

FUZZ = Path(__file__).resolve().parents[2] / "fuzz"
TARGETS = sorted(p.stem for p in FUZZ.glob("fuzz_*.py"))


def load(name: str):
    spec = importlib.util.spec_from_file_location(name, FUZZ / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_target_is_listed():
    assert TARGETS == ["fuzz_cmdline", "fuzz_hook_input", "fuzz_mcp_framer", "fuzz_unicode_views"]


@pytest.mark.parametrize("name", TARGETS)
def test_seeds_and_pinned_findings_pass(name, tcg_home):
    target = load(name)
    for seed in target.SEEDS:
        target.test_one_input(seed)


@pytest.mark.parametrize("name", TARGETS)
def test_a_short_fuzz_run_finds_nothing(name, tmp_path):
    try:
        import atheris  # noqa: F401
    except ImportError:
        pytest.skip("atheris is not installed (pip install -e '.[fuzz]'); the seeds still ran")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i, seed in enumerate(load(name).SEEDS):
        (corpus / f"seed{i}").write_bytes(seed)
    res = subprocess.run(
        [sys.executable, str(FUZZ / f"{name}.py"), "-runs=400", f"-artifact_prefix={tmp_path}/", str(corpus)],
        capture_output=True, timeout=300,
        env={**os.environ, "TCG_FUZZ_INSTRUMENT": "1", "TCG_HOME": str(tmp_path / "home")})
    assert res.returncode == 0, res.stderr.decode(errors="replace")[-3000:]
    assert b"Done 400 runs" in res.stderr
