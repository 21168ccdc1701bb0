"""The view's libc calls are bound through ctypes' C core (``_ctypes``) to keep the
ctypes package off every agent command; the ctypes binding is the reference."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tcg._lean.libc import bind, bind_ctypes
from tcg.sandbox.linux import _SIGNATURES

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the view's libc calls are Linux only")

MISSING = b"/nonexistent-tcg-test-dir/target"


@pytest.mark.parametrize("binder", [bind, bind_ctypes])
def test_both_bindings_report_errno_the_same_way(binder):
    lib, get_errno = binder(_SIGNATURES)
    # a target that does not exist: nothing is mounted, whoever runs the test
    assert lib.mount(None, MISSING, None, 4096, None) == -1 and get_errno() == 2  # MS_BIND, ENOENT
    assert lib.prctl(-1, 0, 0, 0, 0) == -1 and get_errno() == 22  # EINVAL
    assert lib.unshare(-1) == -1 and get_errno() == 22


@pytest.mark.parametrize("binder", [bind, bind_ctypes])
def test_memset_and_unsigned_long_arguments(binder):
    import ctypes  # the test may use ctypes to hand over a buffer; the product does not

    lib, _ = binder(_SIGNATURES)
    buf = ctypes.create_string_buffer(b"secret-bytes", 12)
    lib.memset(ctypes.addressof(buf), 0, 6)
    assert buf.raw == b"\0" * 6 + b"-bytes"


@pytest.mark.parametrize("binder", [bind, bind_ctypes])
def test_a_successful_call_returns_the_kernels_answer(binder):
    lib, _ = binder(_SIGNATURES)
    with open("/proc/self/status") as fh:
        bounding = int(next(line for line in fh if line.startswith("CapBnd:")).split()[1], 16)
    for cap in range(8):  # PR_CAPBSET_READ
        assert lib.prctl(23, cap, 0, 0, 0) == (bounding >> cap) & 1


def test_an_agent_command_does_not_import_the_ctypes_package(tmp_path):
    code = ("import sys; from tcg.sandbox.linux import libc; libc(); "
            "print('ctypes' in sys.modules, 'hashlib' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "HOME": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "False"]
