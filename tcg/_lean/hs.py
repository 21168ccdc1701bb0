"""hyperscan's compiled extension without the package's ``__init__`` (see tcg._lean).

The ``hyperscan`` package's ``__init__`` imports ``typing`` (with ``contextlib``
and ``warnings``: ~3 ms, a tenth of a session's masking process start before it
can mask the first prompt) for one NamedTuple, ``ExpressionExt``, that tcg does
not use. Everything else it exports is its extension module ``hyperscan._hs_ext``
and ``__version__`` from ``hyperscan._version``. This module loads those two
through the interpreter's own path finder and loader, under their own names (so a
later ``import hyperscan`` anywhere reuses them: one ``Database`` class, one
``error``), and exposes their names here: ``from tcg._lean import hs as hyperscan``.

Where the package is imported already, its objects are used. Where the layout is
not the expected one (another hyperscan release), the package is imported as
usual. No hyperscan installed: ImportError, as ``import hyperscan`` raises.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any


def _parts() -> tuple[ModuleType, str]:
    """The extension module and the package's version string."""
    pkg = sys.modules.get("hyperscan")
    if pkg is None:
        try:
            import _frozen_importlib as boot
            import _frozen_importlib_external as external

            load = boot._load  # type: ignore[attr-defined]  # the loader `import` itself runs
            spec = external.PathFinder.find_spec("hyperscan")
            where = list(spec.submodule_search_locations or ()) if spec is not None else []
            subs = [external.PathFinder.find_spec(f"hyperscan.{n}", where) for n in ("_hs_ext", "_version")]
            if where and all(s is not None for s in subs):
                ext = sys.modules.get("hyperscan._hs_ext") or load(subs[0])
                version = sys.modules.get("hyperscan._version") or load(subs[1])
                return ext, str(version.__version__)
        except (ImportError, AttributeError, OSError):  # pragma: no cover - another layout
            pass
        import hyperscan

        pkg = hyperscan
    return pkg, str(getattr(pkg, "__version__", ""))


def _export() -> None:
    ext, version = _parts()
    names = getattr(ext, "__all__", None) or [n for n in vars(ext) if not n.startswith("_")]
    here = globals()
    for name in names:
        here[name] = getattr(ext, name)
    here["__version__"] = version


_export()


def __getattr__(name: str) -> Any:
    """A name the extension does not define (``ExpressionExt``): from the package."""
    import hyperscan

    return getattr(hyperscan, name)
