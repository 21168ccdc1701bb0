"""Immutable records: named, tuple-backed, cheap to define.

``collections.namedtuple`` builds every class with ``eval`` (~85 µs each); the
policy layer defines a dozen record types and every mediated command imports
them (dataclasses cost far more). :class:`Record` gives the same behaviour —
positional or keyword construction with defaults, attribute access, equality,
hashing, ``repr``, ``_replace``, ``_asdict``, pickling — through one generic
``__new__`` and ``operator.itemgetter`` properties::

    class Reason(Record, fields="code decision detail rule", defaults=(None,)):
        __slots__ = ()
"""

from __future__ import annotations

from tcg._lean.ops import itemgetter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Record(tuple):
    __slots__ = ()
    _fields: tuple[str, ...] = ()
    _field_defaults: dict[str, Any] = {}

    def __init_subclass__(cls, fields: str = "", defaults: tuple[Any, ...] = (), **kwargs: Any):
        super().__init_subclass__(**kwargs)
        if not fields:
            return  # a subclass of a record type keeps its fields
        names = tuple(fields.split())
        if len(defaults) > len(names) or len(set(names)) != len(names):
            raise TypeError(f"{cls.__name__}: bad fields {fields!r} / defaults {defaults!r}")
        cls._fields = names
        cls._field_defaults = dict(zip(names[len(names) - len(defaults):], defaults, strict=True))
        for i, name in enumerate(names):
            setattr(cls, name, property(itemgetter(i), doc=f"field {i}: {name}"))

    def __new__(cls, *args: Any, **kwargs: Any):
        fields = cls._fields
        if not kwargs and len(args) == len(fields):
            return tuple.__new__(cls, args)
        if len(args) > len(fields):
            raise TypeError(f"{cls.__name__} takes {len(fields)} arguments, {len(args)} given")
        values = list(args)
        for name in fields[len(args):]:
            if name in kwargs:
                values.append(kwargs.pop(name))
            elif name in cls._field_defaults:
                values.append(cls._field_defaults[name])
            else:
                raise TypeError(f"{cls.__name__} missing argument {name!r}")
        if kwargs:
            raise TypeError(f"{cls.__name__} got unexpected or repeated arguments: {', '.join(sorted(kwargs))}")
        return tuple.__new__(cls, values)

    def __getnewargs__(self) -> tuple[Any, ...]:
        return tuple(self)

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={value!r}" for name, value in zip(self._fields, self, strict=True))
        return f"{type(self).__name__}({inner})"

    def _replace(self, **changes: Any) -> Record:
        return type(self)(**{**self._asdict(), **changes})

    def _asdict(self) -> dict[str, Any]:
        return dict(zip(self._fields, self, strict=True))
