"""Shared set-up of the fuzz targets: a private TCG_HOME (events and caches go
there, never to the user's), and the atheris entry point."""

from __future__ import annotations

import os
import sys
import tempfile

if "TCG_HOME" not in os.environ:
    os.environ["TCG_HOME"] = tempfile.mkdtemp(prefix="tcg-fuzz-")


def instrumented():  # noqa: ANN201 - a context manager
    """Import tcg's modules inside this block: with atheris they are instrumented
    for coverage (only tcg: instrumenting everything takes minutes); without it
    (the pytest run of the seeds) nothing changes."""
    import contextlib

    if os.environ.get("TCG_FUZZ_INSTRUMENT") != "1":
        return contextlib.nullcontext()
    import atheris

    return atheris.instrument_imports(include=["tcg"])


def run(test_one_input) -> None:  # noqa: ANN001 - atheris' callback type
    """``python fuzz/TARGET.py [libFuzzer flags]``: fuzz ``test_one_input``."""
    import atheris

    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
