"""JSON decoding for the per-call hook entry, without importing ``json``.

Claude Code starts ``tcg hook claude EVENT`` for every tool call, and the
hook's budget is about half an interpreter start on top of the interpreter
(docs/agents.md, bench/hook_latency.py). ``import json`` costs ~7 ms there —
most of it ``re`` and ``enum``, which json's pure-Python decoder layer imports
— more than the whole rest of a PreToolUse decision. The C scanner that
``json.loads`` itself runs lives in CPython's ``_json`` accelerator and needs
none of that, so this module drives it directly: same parser, same results,
strict (no NaN/Infinity, which JSON does not have and no agent CLI sends, nor a
number too large for a float, which would come back as Infinity).
Where ``_json`` is missing (other interpreters), ``json.loads`` is used.

The accelerator comes through tcg._lean, the one place tcg imports private
CPython modules (it lists what each saves). It returns ``object``: callers check what they got
(the input is whatever the calling program sent). tests/test_leanjson.py holds it equal to
``json.loads`` (hypothesis).
"""

from __future__ import annotations

_WHITESPACE = " \t\n\r"


class JSONError(ValueError):
    """The text is not one JSON value."""


def _no_constant(name: str) -> object:
    raise JSONError(f"{name} is not JSON")


def _finite(text: str) -> float:
    """A number too large for a float (``1e999``) parses to infinity, which no reply
    can carry back as JSON (a hook's ``updatedInput`` echoes the input): refused."""
    value = float(text)
    if value - value != 0.0:  # inf - inf and nan - nan are nan
        raise JSONError(f"{text[:20]} is out of range")
    return value


class _Context:
    """The attributes the C scanner reads from its decoder (json.JSONDecoder's, strict)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = staticmethod(_finite)
    parse_int = int
    parse_constant = staticmethod(_no_constant)


def _make_scanner() -> object:
    from tcg._lean.jsonc import make_scanner

    if make_scanner is None:  # pragma: no cover - CPython always has the accelerator
        return None
    return make_scanner(_Context())  # type: ignore[arg-type]  # duck-typed decoder context


_scan_once = _make_scanner()


def _loads_slow(text: str) -> object:
    """json.loads with the same strictness: the reference the fast path must equal."""
    import json

    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite)
    except JSONError:
        raise
    except (ValueError, RecursionError) as exc:
        raise JSONError(str(exc)) from None


def loads(text: str) -> object:
    """One JSON value from ``text`` (surrounding whitespace allowed). JSONError otherwise.

    Any failure of the fast path (the C scanner reports errors through
    json.decoder, which may not be imported yet) is decided again by
    json.loads itself, so values and errors are always json.loads's.
    """
    if _scan_once is None:  # pragma: no cover - see _make_scanner
        return _loads_slow(text)
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scan_once(text, start)  # type: ignore[operator]  # the C scanner
    except JSONError:
        raise
    except Exception:  # noqa: BLE001 - StopIteration, ValueError, SystemError: json.loads decides
        return _loads_slow(text)
    if text[end:].strip(_WHITESPACE):
        return _loads_slow(text)
    return value


def strings_in(node: object, keys: bool = True) -> list[str]:
    """Every string in a parsed JSON value: values, and object keys unless
    ``keys`` is false (the hooks, the MCP checks and the transcript scan all
    look for text wherever a tool put it)."""
    out: list[str] = []
    stack = [node]
    while stack:
        cur = stack.pop()
        if isinstance(cur, str):
            out.append(cur)
        elif isinstance(cur, dict):
            for k, v in cur.items():
                if keys and isinstance(k, str):
                    out.append(k)
                stack.append(v)
        elif isinstance(cur, list):
            stack.extend(cur)
    return out
