"""The regular-expression parser ``re`` itself uses (see tcg._lean).

Rule checks (width bounds, hyperscan translation, prefilter literals) walk a
pattern's parse tree (and compile one element of it, to ask ``re`` what it matches); the standard library has no public parser, so this is
``re._parser``/``re._constants`` (``sre_parse``/``sre_constants`` on 3.10,
where importing them warns that they moved).
"""

from __future__ import annotations

try:  # Python >= 3.11
    import re._compiler as compiler  # type: ignore[import-not-found]
    import re._constants as constants  # type: ignore[import-not-found]
    import re._parser as parser  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - Python 3.10
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import sre_compile as compiler  # type: ignore[no-redef]
        import sre_constants as constants  # type: ignore[no-redef]
        import sre_parse as parser  # type: ignore[no-redef]

__all__ = ["compiler", "constants", "parser"]
