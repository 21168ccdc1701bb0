"""tcg._lean.hs: hyperscan's extension without the package's ``__init__`` (no
``typing``), holding the very objects ``import hyperscan`` gives, before and
after the package itself is imported, and the same version string (the compiled
database's cache file is named by it)."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("hyperscan")

PROBE = r"""
import sys
from tcg._lean import hs
assert "typing" not in sys.modules, "the lean load imported typing"
assert "hyperscan" not in sys.modules, "the lean load ran the package's __init__"
db = hs.Database(mode=hs.HS_MODE_BLOCK)
db.compile(expressions=[b"tok[0-9]+"], ids=[7], flags=[hs.HS_FLAG_CASELESS])
blob = hs.dumpb(db)
seen = []
back = hs.loadb(blob, hs.HS_MODE_BLOCK)
back.scratch = hs.Scratch(back)
back.scan(b"a TOK42 b", match_event_handler=lambda i, f, t, fl, c: seen.append((i, t)))
assert seen == [(7, 6), (7, 7)], seen  # every end offset
import hyperscan
names = [n for n in dir(hyperscan) if not n.startswith("_") and n not in ("ExpressionExt", "typing")]
assert names and all(getattr(hs, n) is getattr(hyperscan, n) for n in names)
assert hs.__version__ == hyperscan.__version__
assert hs.ExpressionExt is hyperscan.ExpressionExt
print("ok")
"""


def test_lean_hyperscan_is_the_package_without_typing():
    out = subprocess.run([sys.executable, "-I", "-c", PROBE], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_package_first_gives_the_package_objects():
    probe = ("import hyperscan\nfrom tcg._lean import hs\n"
             "assert hs.Database is hyperscan.Database and hs.error is hyperscan.error\n"
             "assert hs.__version__ == hyperscan.__version__\nprint('ok')\n")
    out = subprocess.run([sys.executable, "-I", "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
