"""tcg.record.Record behaves like the named tuples it replaces."""

from __future__ import annotations

import copy
import pickle
from collections import namedtuple

import pytest

from tcg.policy.cmdline import Word
from tcg.record import Record


class Point(Record, fields="x y label", defaults=("",)):
    __slots__ = ()

    @property
    def norm1(self) -> int:
        return abs(self.x) + abs(self.y)


Twin = namedtuple("Point", "x y label", defaults=("",))


@pytest.mark.parametrize(("args", "kwargs"), [
    ((1, 2), {}), ((1, 2, "a"), {}), ((1,), {"y": 2}), ((), {"y": 2, "x": 1, "label": "b"}),
])
def test_construction_matches_namedtuple(args, kwargs):
    p, t = Point(*args, **kwargs), Twin(*args, **kwargs)
    assert tuple(p) == tuple(t)
    assert repr(p) == repr(t)
    assert p._asdict() == t._asdict()
    assert (p.x, p.y, p.label) == (t.x, t.y, t.label)


@pytest.mark.parametrize(("args", "kwargs"), [
    ((), {}), ((1,), {}), ((1, 2, 3, 4), {}), ((1, 2), {"x": 5}), ((1, 2), {"z": 0}),
])
def test_bad_construction_raises_like_namedtuple(args, kwargs):
    with pytest.raises(TypeError):
        Twin(*args, **kwargs)
    with pytest.raises(TypeError):
        Point(*args, **kwargs)


def test_value_semantics():
    a, b = Point(1, -2), Point(1, -2)
    assert a == b and hash(a) == hash(b) and a != Point(1, 2)
    assert a.norm1 == 3
    assert a._replace(label="z") == Point(1, -2, "z")
    with pytest.raises(AttributeError):
        a.x = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        a.extra = 1  # type: ignore[attr-defined]
    assert pickle.loads(pickle.dumps(a)) == a
    assert copy.deepcopy(a) == a and type(copy.copy(a)) is Point


def test_policy_records_are_records():
    w = Word("cat", source="cat")
    assert isinstance(w, Record) and w.static and w.is_literal
    assert Word(*w) == w
