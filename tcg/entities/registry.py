"""The per-project entity registry: one JSON file in tcg's state directory.

    <state>/tcg-entities/<project id>/registry.json    (0600, directory 0700)

The project id is the first 16 hex digits of the SHA-256 of the project root's
real path (a git work tree root, ``TCG_PROJECT``, or the directory given). The
``tcg-entities`` directory name is listed in the policy's secret stores
(``[secret_stores] segments``), so an agent's commands and tools are refused a
read of it, and tcg's own-files rule refuses writes there.

The file holds each entity's value and its surface forms — the only place tcg
keeps them. Writes take an exclusive lock on ``registry.lock`` next to it and
replace the file atomically (temp file, fsync, rename). Aliases are allocated
from per-type counters that only grow, and a removed entity's alias is kept in
``retired``: an alias is never given to a second entity.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import dataclass, field

from tcg.entities.locate import REGISTRY, store_dir
from tcg.errors import TcgError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from tcg.paths import Paths

LOCK = "registry.lock"
VERSION = 1
ALIAS_PREFIX = "CTXG_"
# type -> alias word; persons are numbered (CTXG_PERSON_3), the rest lettered (CTXG_COMPANY_A)
TYPES = {"person": "PERSON", "company": "COMPANY", "project": "PROJECT", "product": "PRODUCT",
         "place": "PLACE", "other": "ENTITY"}
NUMBERED = {"person"}
MAX_VALUE = 200
MAX_HINT = 120


class RegistryError(TcgError):
    """The registry cannot be read, written or changed as asked."""


def letters(n: int) -> str:
    """1 -> A, 26 -> Z, 27 -> AA (bijective base 26)."""
    out = ""
    while n > 0:
        n, r = divmod(n - 1, 26)
        out = chr(65 + r) + out
    return out


@dataclass
class Entity:
    alias: str
    type: str
    hint: str
    value: str
    gender: str
    capital: bool
    forms: list[tuple[str, str]]  # (surface form, token)
    inflection: dict[str, object]
    sources: list[str] = field(default_factory=list)
    added: float = 0.0

    def to_json(self) -> dict[str, object]:
        return {"alias": self.alias, "type": self.type, "hint": self.hint, "value": self.value,
                "gender": self.gender, "capital": self.capital,
                "forms": [list(f) for f in self.forms], "inflection": self.inflection,
                "sources": self.sources, "added": self.added}

    @classmethod
    def from_json(cls, d: dict[str, object]) -> Entity:
        return cls(str(d["alias"]), str(d["type"]), str(d.get("hint", "")), str(d["value"]),
                   str(d.get("gender", "")), bool(d.get("capital", True)),
                   [(str(a), str(b)) for a, b in d.get("forms", [])],  # type: ignore[attr-defined]
                   dict(d.get("inflection", {})),  # type: ignore[call-overload]
                   list(d.get("sources", [])),  # type: ignore[call-overload]
                   float(d.get("added", 0.0)))  # type: ignore[arg-type]


@dataclass
class Registry:
    root: str
    entities: list[Entity] = field(default_factory=list)
    counters: dict[str, int] = field(default_factory=dict)
    retired: list[dict[str, object]] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {"v": VERSION, "root": self.root, "counters": self.counters, "retired": self.retired,
                "entities": [e.to_json() for e in self.entities]}

    @classmethod
    def from_json(cls, d: dict[str, object]) -> Registry:
        if d.get("v") != VERSION:
            raise ValueError(f"unknown registry version {d.get('v')!r}")
        return cls(str(d["root"]), [Entity.from_json(e) for e in d.get("entities", [])],  # type: ignore[attr-defined]
                   {str(k): int(v) for k, v in dict(d.get("counters", {})).items()},  # type: ignore[call-overload]
                   list(d.get("retired", [])))  # type: ignore[call-overload]

    def skeleton_owners(self) -> dict[str, str]:
        """Form skeleton -> the alias that owns it (built once per loaded registry)."""
        cached = getattr(self, "_owners", None)
        if cached is None:
            from tcg.entities.normal import compact_skeleton

            cached = {}
            for e in self.entities:
                for t, _ in e.forms:
                    cached.setdefault(compact_skeleton(t), e.alias)
            self._owners = cached
        return cached

    def by_alias(self, alias: str) -> Entity | None:
        for e in self.entities:
            if e.alias == alias:
                return e
        return None

    def retired_aliases(self) -> set[str]:
        return {str(r.get("alias")) for r in self.retired}

    def next_alias(self, kind: str) -> str:
        word = TYPES[kind]
        n = self.counters.get(word, 0) + 1
        used = {e.alias for e in self.entities} | self.retired_aliases()
        while True:
            alias = f"{ALIAS_PREFIX}{word}_{n if kind in NUMBERED else letters(n)}"
            if alias not in used:
                break
            n += 1
        self.counters[word] = n
        return alias


class Store:
    """One project's registry file: read, and change under the lock."""

    def __init__(self, root: str, paths: Paths | None = None):
        self.root = os.path.realpath(root)
        self.dir = store_dir(self.root, paths)
        self.path = os.path.join(self.dir, REGISTRY)

    def exists(self) -> bool:
        return os.path.exists(self.path)

    def load(self) -> Registry:
        """The registry (empty when there is none yet). A damaged file is an error,
        never an empty registry: protection must not vanish silently."""
        try:
            with open(self.path, "rb") as fh:
                data = fh.read()
        except FileNotFoundError:
            return Registry(self.root)
        except OSError as exc:
            raise RegistryError(f"cannot read the entity registry {self.path}: {exc.strerror}",
                                hint="check its permissions (tcg doctor)") from None
        return self._parse(data)

    def _parse(self, data: bytes) -> Registry:
        try:
            return Registry.from_json(json.loads(data))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise RegistryError(f"the entity registry {self.path} is damaged ({type(exc).__name__})",
                                hint="restore it from a backup, or move it away and register the "
                                     "entities again") from None

    def identity(self) -> str | None:
        """The registry file's identity (inode, size, mtime) or None without one:
        compiled data derived from it is bound to it. Writes replace the file
        atomically, so every change gives a new identity."""
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"

    @contextlib.contextmanager
    def reading(self) -> Iterator[tuple[bytes | None, Registry]]:
        """(the registry file's bytes or None, the registry), under the lock."""
        from tcg.paths import ensure_private_dir

        ensure_private_dir(self.dir)
        fd = os.open(os.path.join(self.dir, LOCK), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            _flock(fd)
            try:
                with open(self.path, "rb") as fh:
                    raw: bytes | None = fh.read()
            except FileNotFoundError:
                raw = None
            yield raw, (self._parse(raw) if raw is not None else Registry(self.root))
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def locked(self) -> Iterator[Registry]:
        """The registry for changing: written back atomically when the block ends
        without an exception."""
        from tcg.paths import ensure_private_dir

        ensure_private_dir(os.path.dirname(self.dir))
        ensure_private_dir(self.dir)
        fd = os.open(os.path.join(self.dir, LOCK), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            _flock(fd)
            reg = self.load()
            yield reg
            self._write(reg)
        finally:
            os.close(fd)

    def _write(self, reg: Registry) -> None:
        body = json.dumps(reg.to_json(), ensure_ascii=False, indent=1).encode("utf-8") + b"\n"
        tmp = os.path.join(self.dir, f".{REGISTRY}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(body)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
            _fsync_dir(self.dir)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise RegistryError(f"cannot write the entity registry {self.path}: {exc.strerror}",
                                hint="check free space and permissions of tcg's state directory") from None


def _flock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # Windows: msvcrt locks a byte range
        import msvcrt

        msvcrt.locking(fd, msvcrt.LK_LOCK, 1)  # type: ignore[attr-defined]
        return
    fcntl.flock(fd, fcntl.LOCK_EX)


def _fsync_dir(path: str) -> None:
    if os.name != "posix":
        return
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# ------------------------------------------------------------ changes


def check_value(value: str) -> str:
    value = " ".join(value.split())
    if not value:
        raise RegistryError("the value is empty", hint="pass the name to protect, e.g. tcg entity add "
                                                        "person --hint 'client contact' (value on stdin)")
    if len(value) > MAX_VALUE:
        raise RegistryError(f"the value is longer than {MAX_VALUE} characters",
                            hint="register the name itself, not a sentence")
    if ALIAS_PREFIX.lower() in value.lower():
        raise RegistryError("the value contains an alias prefix (CTXG_)",
                            hint="register the real name, not an alias")
    from tcg.entities.normal import compact_skeleton

    if len(compact_skeleton(value)) < 2:
        raise RegistryError("the value needs at least two letters or digits",
                            hint="a one-letter name would match everywhere")
    return value


def add_entity(reg: Registry, value: str, kind: str, hint: str, *, gender: str | None = None,
               case: str = "auto", also: list[str] | None = None, decline: bool = True,
               backends: tuple[str, ...] | None = None) -> tuple[Entity, list[str]]:
    """Register ``value``; returns the entity and warnings (never containing a value)."""
    from tcg.entities.endings import assign
    from tcg.entities.morph import Form, surface_forms
    from tcg.entities.normal import compact_skeleton
    from tcg.entities.translit import spellings

    if kind not in TYPES:
        raise RegistryError(f"unknown entity type {kind!r}",
                            hint="one of: " + ", ".join(TYPES))
    value = check_value(value)
    hint = " ".join(hint.split())
    if len(hint) > MAX_HINT:
        raise RegistryError(f"the hint is longer than {MAX_HINT} characters", hint="keep it short")
    skel = compact_skeleton(value)
    for e in reg.entities:
        if compact_skeleton(e.value) == skel:
            raise RegistryError(f"this value is already registered as {e.alias}",
                                hint=f"tcg entity list shows it; tcg entity remove {e.alias} first "
                                     "to register it again")
    fs = surface_forms(value, kind, gender, backends, decline=decline)
    forms = list(fs.forms)
    for extra in also or []:
        extra = check_value(extra)
        forms.append(Form(extra, "nomn", "sing", "", "also"))
    translit = [Form(lat, f.case, f.number, f.gender, "translit")
                for f in fs.forms for lat in spellings(f.text)]
    # as JSON strings and string literals hold it («Зорька \"Рассвет\"»)
    translit += [Form(json.dumps(f.text, ensure_ascii=False)[1:-1], f.case, f.number, f.gender, "escaped")
                 for f in forms if '"' in f.text or "\\" in f.text]
    alias = reg.next_alias(kind)
    tokens, infl = assign(alias, value, tuple(forms + translit))
    if case == "auto":
        capital = kind == "person" or fs.common_noun
    else:
        capital = case == "capital"
    ent = Entity(alias, kind, hint, value, fs.gender, capital, tokens, infl.to_json(),
                 list(fs.sources), round(time.time(), 3))
    warnings = []
    owners = reg.skeleton_owners()
    mine = {compact_skeleton(t) for t, _ in tokens}
    shared: dict[str, int] = {}
    for k in mine:
        if k in owners:
            shared[owners[k]] = shared.get(owners[k], 0) + 1
    for other, n in shared.items():
        warnings.append(f"{n} surface form(s) are shared with {other}; they are masked as "
                        f"{other} (registered first)")
    reg.entities.append(ent)
    for k in mine:
        owners.setdefault(k, ent.alias)
    return ent, warnings


def remove_entity(reg: Registry, alias: str) -> Entity:
    ent = reg.by_alias(alias)
    if ent is None:
        hint = ("it was removed before; aliases are never reused" if alias in reg.retired_aliases()
                else "tcg entity list shows the registered aliases")
        raise RegistryError(f"no entity {alias} in this project", hint=hint)
    reg.entities.remove(ent)
    reg.retired.append({"alias": ent.alias, "type": ent.type, "removed": round(time.time(), 3)})
    return ent
