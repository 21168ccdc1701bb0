"""The tree-sitter bash parser, loaded once per process without the packages' ``__init__``."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

def _parser() -> Any:
    # Loaded lazily and kept on the function: paid once per process.
    cached = getattr(_parser, "_p", None)
    if cached is None:
        ts = _binding("tree_sitter")
        cached = ts.Parser(ts.Language(_binding("tree_sitter_bash").language()))
        _parser._p = cached  # type: ignore[attr-defined]
    return cached


def _binding(package: str) -> Any:
    """``<package>._binding``, the C extension, loaded without the package's ``__init__``.

    tree_sitter's ``__init__`` imports typing (for one Protocol) and
    tree_sitter_bash's imports importlib.resources (tempfile, zipfile…) to read
    a highlighting query we never use: ~10 ms of every mediated command. The
    extensions need neither. Any surprise in the package layout falls back to
    the ordinary import.
    """
    import sys

    name = f"{package}._binding"
    if package not in sys.modules and name not in sys.modules:
        try:
            import importlib.machinery
            import os

            spec = importlib.machinery.PathFinder.find_spec(package)
            for directory in (spec.submodule_search_locations or []) if spec else []:
                for entry in sorted(os.listdir(directory)):
                    if entry.startswith("_binding.") and entry.endswith((".so", ".pyd")):
                        path = os.path.join(directory, entry)
                        loader = importlib.machinery.ExtensionFileLoader(name, path)
                        module = loader.create_module(importlib.machinery.ModuleSpec(name, loader, origin=path))
                        loader.exec_module(module)
                        sys.modules[name] = module
                        return module
        except (ImportError, OSError, AttributeError):
            pass
    import importlib

    return importlib.import_module(name)
