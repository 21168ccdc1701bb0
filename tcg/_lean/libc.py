"""A few libc functions bound through ``_ctypes``, ctypes' C core (see tcg._lean).

``bind`` builds what ``ctypes.CDLL(None, use_errno=True)`` builds for each
function, without the ctypes package's forty type classes; ``bind_ctypes`` is
the same through ctypes — the fallback, and the reference tests compare with.
Signatures map a name to (argument type codes, return type code), codes as in
ctypes' simple types: i int, L unsigned long, z char *, P void *.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Functions:
    """The bound functions as attributes; ``_handle`` is the dlopen handle they come from."""

    _handle: int


def bind(signatures: dict[str, tuple[str, str]]) -> tuple[Any, Any]:
    """(functions, get_errno) through ``_ctypes``."""
    import _ctypes

    core: Any = _ctypes  # typeshed types these calls for ctypes' own classes only
    types = {code: type(f"c_{code}", (core._SimpleCData,), {"_type_": code}) for code in "iLzP"}

    class Function(core.CFuncPtr):  # what ctypes.CDLL(None, use_errno=True) builds per function
        _flags_ = core.FUNCFLAG_CDECL | core.FUNCFLAG_USE_ERRNO
        _restype_ = types["i"]

    lib = Functions()
    lib._handle = core.dlopen(None, core.RTLD_LOCAL)
    for name, (args, ret) in signatures.items():
        fn = Function((name, lib))
        fn.argtypes = [types[c] for c in args]
        fn.restype = types[ret]
        setattr(lib, name, fn)
    return lib, core.get_errno


def bind_ctypes(signatures: dict[str, tuple[str, str]]) -> tuple[Any, Any]:
    """(functions, get_errno) through the ctypes package."""
    import ctypes

    types = {"i": ctypes.c_int, "L": ctypes.c_ulong, "z": ctypes.c_char_p, "P": ctypes.c_void_p}
    lib = ctypes.CDLL(None, use_errno=True)
    for name, (args, ret) in signatures.items():
        fn = getattr(lib, name)
        fn.argtypes = [types[c] for c in args]
        fn.restype = types[ret]
    return lib, ctypes.get_errno
