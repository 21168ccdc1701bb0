"""tcg.leanjson decodes exactly as json.loads does (values and failures)."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcg.leanjson import JSONError, loads

scalars = st.none() | st.booleans() | st.integers() | st.text() | st.floats(allow_nan=False, allow_infinity=False)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
                      max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(values, st.booleans(), st.sampled_from(["", " ", "\n\t ", "\r\n"]))
def test_equals_json_loads_on_valid_documents(value, ascii_only, pad):
    text = pad + json.dumps(value, ensure_ascii=ascii_only) + pad
    assert loads(text) == json.loads(text)


def _finite_or_refused(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_equals_json_loads_on_arbitrary_text(text):
    try:
        expected = json.loads(text, parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name)),
                              parse_float=_finite_or_refused)
    except (ValueError, RecursionError):
        with pytest.raises(JSONError):
            loads(text)
        return
    got = loads(text)
    if isinstance(expected, float) and math.isnan(expected):  # pragma: no cover - constants are refused
        assert math.isnan(got)
    else:
        assert got == expected


@pytest.mark.parametrize("text", ["", "{", "{}x", "NaN", "[Infinity]", "-Infinity", '{"a":1,}', "[1,", '"\x01"',
                                  "1e999", '{"n": -1e400}', "[1.5e309]"])
def test_refuses_what_is_not_one_json_value(text):
    with pytest.raises(JSONError):
        loads(text)


def test_imports_neither_json_nor_re():
    code = ("import sys; from tcg.leanjson import loads; loads('{\"a\": [1, \"x\"]}'); "
            "print(sorted(m for m in ('json', 're', 'enum') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
