"""A project's entities as the surfaces use them: matcher, inflections, glossary.

The registry is compiled once (``tcg entity add|remove`` does it right away) into
two files next to it, each signed with the install key and bound to the
registry file's identity (it is replaced atomically on every change) and
to tcg's code (tcg.cachestore):
- ``prefilter.bin`` — the hyperscan database (small, loaded by every mediated
  command of the project);
- ``entities.json`` — the forms, inflections and glossary, read only when the
  prefilter finds a candidate or a hook needs to restore (a command whose output
  names no entity never parses it).
Both live in the protected store directory: they hold the forms' skeletons.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from tcg.entities.endings import Inflection
from tcg.entities.matcher import EntitySpec, Matcher
from tcg.entities.prefilter import Prefilter
from tcg.entities.registry import Registry, Store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from tcg.paths import Paths

PREFILTER = "prefilter.bin"
DATA = "entities.json"


@dataclass(frozen=True)
class GlossaryEntry:
    alias: str
    type: str
    hint: str


class Entities:
    """What masking and restoring need; never printed."""

    def __init__(self, matcher: Matcher, rest: Callable[[], dict[str, object]]):
        self.matcher = matcher
        self._rest = rest
        self._data: dict[str, object] | None = None

    @classmethod
    def from_registry(cls, reg: Registry) -> Entities:
        specs = [EntitySpec(e.alias, e.capital, tuple(e.forms)) for e in reg.entities]
        data: dict[str, object] = {
            "inflections": {e.alias: {"value": e.value, **e.inflection} for e in reg.entities},
            "retired": sorted(reg.retired_aliases()),
            "glossary": [[e.alias, e.type, e.hint] for e in reg.entities],
        }
        return cls(Matcher(specs), lambda: data)

    def _get(self) -> dict[str, object]:
        if self._data is None:
            self._data = self._rest()
        return self._data

    @property
    def inflections(self) -> dict[str, Inflection]:
        d = self._get()
        cached = d.get("_infl")
        if cached is None:
            cached = {a: Inflection.from_json(str(v["value"]), v)  # type: ignore[index,arg-type]
                      for a, v in dict(d["inflections"]).items()}  # type: ignore[call-overload]
            d["_infl"] = cached
        return cached  # type: ignore[return-value]

    @property
    def retired(self) -> frozenset[str]:
        return frozenset(self._get()["retired"])  # type: ignore[call-overload]

    @property
    def glossary(self) -> tuple[GlossaryEntry, ...]:
        return tuple(GlossaryEntry(*g) for g in self._get()["glossary"])  # type: ignore[attr-defined]

    @property
    def aliases(self) -> frozenset[str]:
        return frozenset(self.inflections)


def load(root: str | None = None, paths: Paths | None = None) -> Entities | None:
    """The project's entities, or None when it has no registry. Raises
    RegistryError when the registry exists but cannot be read (callers fail closed)."""
    from tcg.entities.locate import project_root

    store = Store(root if root is not None and os.path.isabs(root) else project_root(root), paths)
    if not store.exists():
        return None
    return load_store(store, paths)


def load_store(store: Store, paths: Paths | None = None) -> Entities | None:
    """Entities from the compiled files, compiling them first when they are missing
    or stale."""
    from tcg.cachestore import read_cache
    from tcg.keyhash import load_or_create_key

    digest = store.identity()
    if digest is None:
        return None
    key = load_or_create_key(paths)
    tag = f"entities/{digest}"  # the code that compiled it binds the MAC (tcg.cachestore)
    pre_path, data_path = os.path.join(store.dir, PREFILTER), os.path.join(store.dir, DATA)
    body = read_cache(pre_path, key, tag + "/prefilter")
    if body is not None:
        try:
            head, _, blob = body.partition(b"\n")
            header = json.loads(head)
            pre = Prefilter.from_bytes(blob) if header.get("hyperscan") else None
        except Exception:  # noqa: BLE001 - unreadable: rebuilt below
            body = None
    if body is None:
        return compile_store(store, paths)

    cache: dict[str, dict[str, object]] = {}

    def rest() -> dict[str, object]:
        if "d" not in cache:
            raw = read_cache(data_path, key, tag + "/data")
            if raw is not None:
                cache["d"] = json.loads(raw)
            else:  # the prefilter without its data (a concurrent recompile): rebuild
                fresh = compile_store(store, paths)
                cache["d"] = _data(fresh) if fresh is not None else {
                    "inflections": {}, "retired": [], "glossary": [], "entities": [], "forms": []}
        return cache["d"]

    return Entities(Matcher.lazy(header, pre, rest), rest)


def _data(ents: Entities) -> dict[str, object]:
    return {**ents._get(), **ents.matcher.forms_state()}


def compile_store(store: Store, paths: Paths | None = None) -> Entities | None:
    """Compile the registry into the two files (under the registry's lock: two
    processes never compile at once); returns the fresh Entities."""
    from tcg.cachestore import write_cache
    from tcg.keyhash import load_or_create_key

    with store.reading() as (raw, reg):
        digest = store.identity()
        if raw is None or digest is None:
            return None
        key = load_or_create_key(paths)
        tag = f"entities/{digest}"  # the code that compiled it binds the MAC (tcg.cachestore)
        ents = Entities.from_registry(reg)
        pre = ents.matcher._prefilter()
        header = {**ents.matcher.header(), "hyperscan": pre is not None}
        data = _data(ents)
        write_cache(os.path.join(store.dir, DATA), key, tag + "/data",
                     json.dumps(data, ensure_ascii=False).encode("utf-8"))
        write_cache(os.path.join(store.dir, PREFILTER), key, tag + "/prefilter",
                     json.dumps(header).encode() + b"\n" + (pre.to_bytes() if pre else b""))
    return ents
