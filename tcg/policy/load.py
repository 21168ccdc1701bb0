"""Load the effective policy: built-in default, then user file (or TCG_POLICY),
then a repository's ``.tcg/policy.toml`` that may only add protection.

Layering rules (docs/policy.md):
- protect lists (e.g. ``secret_stores.basenames``) are unioned across layers;
- allow lists (keys starting with ``allow``) are unioned from default and user
  layers and IGNORED from the repository layer (an agent can write repo files);
- decisions: the user layer replaces; the repository layer can only make them
  stricter (the worse of the two wins);
- settings (numbers, flags): the user layer replaces; repository values are ignored;
- tables in arrays (``[[credential_dumps]]``) are keyed by ``id``: user entries
  replace by id; the repository may only add new ids.
Every ignored repository value becomes a notice, so `tcg policy show` says so.
"""

from __future__ import annotations

import marshal
import os
import sys

from tcg.cachestore import read_cache, write_cache
from tcg.digest import blake2b_256, sha256_hex
from tcg.errors import PolicyError
from tcg.paths import get_paths
from tcg.policy.glob import fnmatchcase
from tcg.policy.model import Decision, worst
from tcg.policy.reasons import REASONS
from tcg.record import Record

# Every mediated command loads the policy (usually from a snapshot), so this
# module keeps off typing, dataclasses, pathlib and hashlib: ~15 ms of imports.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path
    from typing import Any, TypeVar

    from tcg.paths import Paths

    _T = TypeVar("_T")

def _once(fn: Callable[[], _T]) -> Callable[[], _T]:
    """Memoise a no-argument function (functools costs ~1.5 ms of imports per command)."""
    cell: list[_T] = []

    def once() -> _T:
        if not cell:
            cell.append(fn())
        return cell[0]

    once.__doc__ = fn.__doc__
    once.cache_clear = cell.clear  # type: ignore[attr-defined]
    return once


DEFAULT_NAME = "default.toml"

# Kinds of keys. A schema key is a dotted path; "*" matches one segment.
DECISION = "decision"
PROTECT_LIST = "protect-list"
ALLOW_LIST = "allow-list"
SETTING = "setting"
TABLE_LIST = "table-list"
NAME = "name"
INBOUND_ACTION = "inbound-action"  # allow < warn < block (tcg.inbound.gate)
# The inbound gate's surfaces, kinds of finding and actions (weakest first). Defined here,
# where every command's policy load validates them, so that validation imports nothing;
# tcg.inbound.policy re-exports them.
INBOUND_SURFACES = ("web", "mcp-result", "file-read", "user-prompt", "clipboard")
INBOUND_KINDS = ("injection", "invisible", "drain")
INBOUND_ACTIONS = ("allow", "warn", "block")

SCHEMA: dict[str, tuple[str, type | tuple[type, ...]]] = {
    "policy.name": (NAME, str),
    "policy.version": (NAME, int),
    "decisions.*.*": (DECISION, str),
    "secret_stores.basenames": (PROTECT_LIST, str),
    "secret_stores.segments": (PROTECT_LIST, str),
    "secret_stores.paths": (PROTECT_LIST, str),
    "secret_stores.allow_basenames": (ALLOW_LIST, str),
    "secret_stores.listing_is_read": (SETTING, bool),
    "credential_dumps": (TABLE_LIST, dict),
    "secret_vars.names": (PROTECT_LIST, str),
    "secret_vars.allow_names": (ALLOW_LIST, str),
    "guard.files": (PROTECT_LIST, str),
    "guard.env": (PROTECT_LIST, str),
    "guard.allow_env": (ALLOW_LIST, str),
    "agents.known": (PROTECT_LIST, str),
    "launch.on-findings": (DECISION, str),
    "launch.on-partial": (DECISION, str),
    "launch.on-error": (DECISION, str),
    "launch.on-unmediated": (DECISION, str),
    "mcp.protected_resources": (PROTECT_LIST, str),
    "clipboard.interval": (SETTING, (int, float)),
    "clipboard.inspect-cap": (SETTING, int),
    "mask.terminal-hold-ms": (SETTING, int),
    "session.on-station-gone-human": (DECISION, str),
    "session.on-station-gone-agent": (DECISION, str),
    "session.verdict-timeout-ms": (SETTING, int),
    "scan.max-blob-bytes": (SETTING, int),
    "scan.allow_paths": (ALLOW_LIST, str),
    "scan.categories": (PROTECT_LIST, str),
    "detect.disabled_rules": (ALLOW_LIST, str),
    "sandbox.mechanism": (SETTING, str),
    "sandbox.on-unavailable": (SETTING, str),
    "sandbox.bwrap": (SETTING, str),
    "sandbox.allow_twins": (ALLOW_LIST, str),
    "sandbox.allow_env": (ALLOW_LIST, str),
    "sandbox.skip_dirs": (ALLOW_LIST, str),
    "sandbox.roots": (PROTECT_LIST, str),
    "sandbox.max-dirs": (SETTING, int),
    "entities.placeholder-write": (SETTING, str),
    "inbound.surfaces.*.*": (INBOUND_ACTION, str),
    "inbound.ml.model": (SETTING, str),
    "inbound.ml.threshold": (SETTING, (int, float)),
    "trash.copy-budget": (SETTING, int),
    "trash.max-entries": (SETTING, int),
    "channels.decisions.*": (DECISION, str),
    "channels.categories": (PROTECT_LIST, str),
    "events.max-bytes": (SETTING, int),
    "events.keep": (SETTING, int),
    "events.on-unwritable": (SETTING, str),
}
# Settings that take one of a few words: a typo must be an error, not a silent default.
SETTING_CHOICES: dict[str, tuple[str, ...]] = {
    "sandbox.mechanism": ("auto", "namespaces", "bwrap"),
    "sandbox.on-unavailable": ("block", "warn"),
    "events.on-unwritable": ("block", "warn"),
}
# Numeric settings with bounds (inclusive; None = unbounded).
SETTING_RANGES: dict[str, tuple[int, int | None]] = {
    "events.max-bytes": (65536, None),
    "events.keep": (1, 100),
}

# Fields an entry of an array of tables may have: "str" (a string) or "strs"
# (a string or a list of strings). A typo in a rule must be an error naming the
# file and line, not a rule that silently matches nothing. Keep in step with
# tcg/policy/dumprules.py compile_dump_rules (which re-checks without line numbers).
TABLE_FIELDS: dict[str, dict[str, str]] = {
    "credential_dumps": {
        "id": "str",
        "description": "str",
        "command": "strs",
        "args": "strs",
        "flags": "strs",
        "option": "strs",
        "option_values": "strs",
        "unless_first": "strs",
    },
}
TABLE_REQUIRED: dict[str, tuple[str, ...]] = {"credential_dumps": ("command",)}

_ACTORS = ("human", "agent")
# Decisions a policy file may name. relocate/snapshot only for the codes that carry
# what to move or save (ACTION_DECISIONS).
POLICY_DECISIONS = ("allow", "sanitize", "ask", "block")
ACTION_DECISIONS = {"delete-relocate": "relocate", "overwrite-snapshot": "snapshot", "git-snapshot": "snapshot"}


class Layer(Record, fields="kind path data"):
    """One policy file: ``kind`` is "default" | "user" | "env" | "repo"; ``path``
    is "<builtin>" for the default; ``data`` the parsed TOML document."""

    __slots__ = ()
    kind: str
    path: str
    data: dict[str, Any]


class Policy(Record, fields="data fingerprint sources notices", defaults=((),)):
    """The effective policy. ``data`` is the merged TOML document."""

    __slots__ = ()
    data: dict[str, Any]
    fingerprint: str
    sources: tuple[str, ...]
    notices: tuple[str, ...]

    def __hash__(self) -> int:  # ``data`` is a dict; the fingerprint stands for it
        return hash(self.fingerprint)

    @property
    def name(self) -> str:
        return str(self.data.get("policy", {}).get("name", "tcg"))

    @property
    def version(self) -> int:
        return int(self.data.get("policy", {}).get("version", 1))

    @property
    def snapshot_id(self) -> str:
        return f"{self.name}@v{self.version}:{self.fingerprint[:12]}"

    def ref(self) -> dict[str, str]:
        """The policy reference every event carries."""
        return {"snapshot": self.snapshot_id, "fingerprint": self.fingerprint}

    def decision_for(self, actor: str, code: str, default: Decision = Decision.BLOCK) -> Decision:
        value = self.data.get("decisions", {}).get(actor, {}).get(code)
        return Decision.parse(value) if isinstance(value, str) else default

    def get(self, dotted: str, default: Any = None) -> Any:
        node: Any = self.data
        for part in dotted.split("."):
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return node


def fingerprint_of(data: dict[str, Any]) -> str:
    import json

    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return sha256_hex(canonical.encode("ascii"))


# ---------------------------------------------------------------- parsing


# Used only to point at the line of an error: patterns, compiled (and cached by re) on use.
_HEADER = r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$"
_KEYLINE = r"^\s*((?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*'))*)\s*="


def _norm_key(raw: str) -> str:
    import re
    parts = re.findall(r"[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*'", raw)
    return ".".join(p.strip("\"'") for p in parts)


def _line_of(text: str, key: str) -> int | None:
    """Best-effort line number of the dotted ``key`` in TOML text.

    Tracks ``[table]`` headers so ``decisions.human.x`` is not reported at the
    line of ``decisions.agent.x``; falls back to the last segment for inline tables.
    """
    import re
    table = ""
    for lineno, line in enumerate(text.splitlines(), start=1):
        m = re.match(_HEADER, line)
        if m:
            table = _norm_key(m.group(1))
            if table == key:
                return lineno
            continue
        m = re.match(_KEYLINE, line)
        if m:
            full = f"{table}.{_norm_key(m.group(1))}" if table else _norm_key(m.group(1))
            if full == key or key.startswith(full + "."):
                return lineno
    last = key.split(".")[-1]
    m = re.search(r"^\s*([\"']?)" + re.escape(last) + r"\1\s*=", text, re.M)
    if m:
        return text.count("\n", 0, m.start()) + 1
    return None


def _validate_entries(table: str, entries: list[dict[str, Any]], path: str, text: str) -> None:
    """Each ``[[table]]`` entry: a kebab-case id, and only known fields of the right type."""
    import re
    fields = TABLE_FIELDS.get(table)
    for index, entry in enumerate(entries):

        def bad(field: str, message: str, hint: str, index: int = index) -> PolicyError:
            line = _entry_line(text, table, index, field) if text else None
            return PolicyError(message, hint=hint, path=path, line=line)

        ident = entry.get("id")
        if not isinstance(ident, str) or not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", ident):
            raise bad("id", f"every [[{table}]] entry needs a kebab-case id", 'add id = "my-rule"')
        if fields is None:
            continue
        where = f"in [[{table}]] {ident!r}"
        for name in TABLE_REQUIRED.get(table, ()):
            if not entry.get(name):
                raise bad("id", f"{name} is missing {where}", f'add {name} = ["…"]')
        for name, value in entry.items():
            kind = fields.get(name)
            if kind is None:
                raise bad(name, f"unknown field {name!r} {where}", "fields are: " + ", ".join(fields))
            if kind == "strs":
                if not (isinstance(value, str) or (
                    isinstance(value, list) and all(isinstance(v, str) for v in value)
                )):
                    raise bad(name, f"{name} {where} must be a string or a list of strings",
                              f'write it as {name} = ["a", "b"]')
            elif not isinstance(value, str):
                raise bad(name, f"{name} {where} must be a string", f'write it as {name} = "…"')


def _entry_line(text: str, table: str, index: int, field: str | None) -> int | None:
    """Line of ``field`` in the ``index``-th ``[[table]]`` entry (or of its header)."""
    import re
    seen = -1
    header: int | None = None
    for lineno, line in enumerate(text.splitlines(), start=1):
        m = re.match(_HEADER, line)
        if m:
            if header is not None:
                break  # left the entry without finding the field
            if line.lstrip().startswith("[[") and _norm_key(m.group(1)) == table:
                seen += 1
                if seen == index:
                    header = lineno
            continue
        if header is not None and field:
            km = re.match(_KEYLINE, line)
            if km and _norm_key(km.group(1)) == field:
                return lineno
    return header if header is not None else _line_of(text, table)


def parse_toml(text: str, path: str) -> dict[str, Any]:
    import re
    if sys.version_info >= (3, 11):  # imported here: a policy snapshot hit never parses TOML
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        line: int | None = getattr(exc, "lineno", None)  # tomli >= 2.1 and Python 3.14+ have it
        m = re.search(r"line (\d+)", msg)
        if line is None and m:
            line = int(m.group(1))
        last = max(1, len(text.splitlines()))
        if (line is None and "end of document" in msg) or (line is not None and line > last):
            line = last  # "end of document" is the last line, not the empty one after it
        raise PolicyError(
            f"invalid TOML: {msg}",
            hint="fix the syntax at that line (TOML reference: https://toml.io)",
            path=path,
            line=line,
        ) from None


def _schema_kind(dotted: str) -> tuple[str, type | tuple[type, ...]] | None:
    if dotted in SCHEMA:
        return SCHEMA[dotted]
    parts = dotted.split(".")
    for pattern, kind in SCHEMA.items():
        pp = pattern.split(".")
        if len(pp) == len(parts) and all(a == "*" or a == b for a, b in zip(pp, parts, strict=False)):
            return kind
    return None


def _is_prefix(dotted: str) -> bool:
    """True when ``dotted`` is a table that contains schema keys."""
    parts = dotted.split(".")
    for pattern in SCHEMA:
        pp = pattern.split(".")
        if len(pp) > len(parts) and all(a == "*" or a == b for a, b in zip(pp, parts, strict=False)):
            return True
    return False


def validate(data: dict[str, Any], path: str, text: str = "") -> None:
    """Raise PolicyError naming file, line and a hint for the first problem found."""

    def fail(key: str, message: str, hint: str) -> None:
        raise PolicyError(message, hint=hint, path=path, line=_line_of(text, key) if text else None)

    def walk(node: dict[str, Any], prefix: str) -> None:
        for key, value in node.items():
            dotted = f"{prefix}.{key}" if prefix else key
            kind = _schema_kind(dotted)
            if kind is None:
                if isinstance(value, dict) and _is_prefix(dotted):
                    walk(value, dotted)
                    continue
                fail(dotted, f"unknown key {dotted!r}", "see docs/policy.md for the keys a policy may set")
                return
            k, typ = kind
            if k == DECISION:
                if dotted.startswith("decisions."):
                    _, actor, code = dotted.split(".")
                    if actor not in _ACTORS:
                        fail(dotted, f"unknown actor in {dotted!r}", "actors are: human, agent")
                    if code not in REASONS:
                        fail(
                            dotted,
                            f"unknown reason code {code!r} in {dotted!r}",
                            "the codes are listed in docs/reason-codes.md",
                        )
                code = dotted.rsplit(".", 1)[-1] if dotted.startswith("decisions.") else ""
                allowed = POLICY_DECISIONS + ((ACTION_DECISIONS[code],) if code in ACTION_DECISIONS else ())
                if not isinstance(value, str) or value.lower() not in allowed:
                    fail(
                        dotted,
                        f"{dotted} = {value!r} is not a decision",
                        "use one of: " + ", ".join(allowed),
                    )
            elif k in (PROTECT_LIST, ALLOW_LIST):
                if not isinstance(value, list) or not all(isinstance(v, typ) for v in value):
                    fail(dotted, f"{dotted} must be a list of strings", 'write it as ["a", "b"]')
            elif k == INBOUND_ACTION:
                _, _, surface, inbound_kind = dotted.split(".")
                if surface not in INBOUND_SURFACES or inbound_kind not in INBOUND_KINDS:
                    fail(dotted, f"unknown inbound surface or kind in {dotted!r}",
                         f"surfaces: {', '.join(INBOUND_SURFACES)}; kinds: {', '.join(INBOUND_KINDS)}")
                if not isinstance(value, str) or value.lower() not in INBOUND_ACTIONS:
                    fail(dotted, f"{dotted} = {value!r} is not an inbound action",
                         "use one of: " + ", ".join(INBOUND_ACTIONS))
            elif k == TABLE_LIST:
                if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
                    fail(dotted, f"{dotted} must be an array of tables", f"write entries as [[{dotted}]]")
                _validate_entries(dotted, value, path, text)
            else:
                if isinstance(value, bool) and typ is not bool:
                    fail(dotted, f"{dotted} has the wrong type", "see docs/policy.md")
                if not isinstance(value, typ):
                    fail(dotted, f"{dotted} has the wrong type ({type(value).__name__})", "see docs/policy.md")
                bounds = SETTING_RANGES.get(dotted)
                if bounds and (value < bounds[0] or (bounds[1] is not None and value > bounds[1])):
                    fail(dotted, f"{dotted} = {value!r} is out of range",
                         f"use a value from {bounds[0]}" + (f" to {bounds[1]}" if bounds[1] else " up"))
                choices = SETTING_CHOICES.get(dotted)
                if choices and value not in choices:
                    fail(dotted, f"{dotted} = {value!r} is not one of: {', '.join(choices)}",
                         f'write it as {dotted.rsplit(".", 1)[1]} = "{choices[0]}"')

    walk(data, "")


def read_layer(path: str | os.PathLike[str], kind: str) -> Layer:
    return layer_from_text(kind, path, _read_text(path))


def layer_from_text(kind: str, path: str | os.PathLike[str], text: str) -> Layer:
    """Parse and validate one policy file's text (errors name the file and line)."""
    data = parse_toml(text, str(path))
    validate(data, str(path), text)
    return Layer(kind=kind, path=str(path), data=data)


@_once
def _default_text() -> str:
    # Next to this module in every install we support (wheel, editable); importlib.resources
    # costs ~6 ms of imports on the per-command path, so it is only the fallback (zip imports).
    here = os.path.join(os.path.dirname(__file__), DEFAULT_NAME)
    if os.path.isfile(here):
        with open(here, encoding="utf-8") as fh:
            return fh.read()
    from importlib import resources  # pragma: no cover

    return resources.files("tcg.policy").joinpath(DEFAULT_NAME).read_text(encoding="utf-8")


@_once
def default_layer() -> Layer:
    """The built-in default (parsed once per process; merge_layers deep-copies it)."""
    text = _default_text()
    data = parse_toml(text, "<builtin default>")
    validate(data, "<builtin default>", text)
    return Layer(kind="default", path="<builtin>", data=data)


# ---------------------------------------------------------------- merging


def _merge(base: dict[str, Any], layer: Layer, notices: list[str], prefix: str = "") -> None:
    repo = layer.kind == "repo"
    for key, value in layer.data.items():
        dotted = f"{prefix}.{key}" if prefix else key
        kind = _schema_kind(dotted)
        if kind is None:  # a table containing schema keys
            node = base.setdefault(key, {})
            _merge(node, Layer(layer.kind, layer.path, value), notices, dotted)
            continue
        k = kind[0]
        if k == NAME:
            if repo:
                notices.append(f"{layer.path}: {dotted} ignored: a repository policy cannot rename the policy")
                continue
            base[key] = value
        elif k == DECISION:
            if repo:
                # A code the lower layers do not decide is BLOCK by default
                # (Policy.decision_for), so the repository cannot loosen it either.
                current = Decision.parse(base[key]) if key in base else Decision.BLOCK
                new = worst([current, Decision.parse(value)]).value
                if new != Decision.parse(value).value:
                    notices.append(
                        f"{layer.path}: {dotted} = {value!r} ignored: a repository policy may only "
                        f"tighten (effective: {new!r})"
                    )
                base[key] = new
            else:
                base[key] = Decision.parse(value).value
        elif k == INBOUND_ACTION:
            new = value.lower()
            if repo:  # a repository may only make a surface stricter
                kept = max(base.get(key, "allow"), new, key=INBOUND_ACTIONS.index)
                if kept != new:
                    notices.append(f"{layer.path}: {dotted} = {value!r} ignored: a repository policy "
                                   f"may only tighten (effective: {kept!r})")
                new = kept
            base[key] = new
        elif k == PROTECT_LIST:
            existing = list(base.get(key, []))
            existing += [v for v in value if v not in existing]
            base[key] = existing
        elif k == ALLOW_LIST:
            if repo:
                if value:
                    notices.append(
                        f"{layer.path}: {dotted} ignored: a repository policy cannot add exceptions"
                    )
                continue
            existing = list(base.get(key, []))
            existing += [v for v in value if v not in existing]
            base[key] = existing
        elif k == TABLE_LIST:
            by_id = {e["id"]: e for e in base.get(key, [])}
            for entry in value:
                if entry["id"] in by_id and repo:
                    notices.append(
                        f"{layer.path}: [[{dotted}]] id {entry['id']!r} ignored: a repository policy "
                        "cannot replace a rule"
                    )
                    continue
                by_id[entry["id"]] = entry
            base[key] = list(by_id.values())
        else:  # SETTING
            if repo:
                notices.append(f"{layer.path}: {dotted} ignored: a repository policy cannot change settings")
                continue
            base[key] = value


def find_repo_policy(cwd: str | os.PathLike[str]) -> Path | None:
    """``.tcg/policy.toml`` in the nearest directory (upwards) holding ``.git`` or ``.tcg``."""
    found = _repo_policy(os.fspath(cwd))
    if found is None:
        return None
    from pathlib import Path

    return Path(found)


def _repo_policy(cwd: str) -> str | None:
    d = os.path.realpath(cwd)
    while True:
        candidate = os.path.join(d, ".tcg", "policy.toml")
        if os.path.isfile(candidate):
            return candidate
        if os.path.exists(os.path.join(d, ".git")):
            return None
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def user_policy_path(paths: Paths | None = None, environ: Mapping[str, str] | None = None) -> tuple[Path, str]:
    from pathlib import Path

    path, kind = _user_policy(paths, environ)
    return Path(path), kind


def _user_policy(paths: Paths | None, environ: Mapping[str, str] | None) -> tuple[str, str]:
    env = os.environ if environ is None else environ
    override = env.get("TCG_POLICY")
    if override:
        return os.path.expanduser(override), "env"
    return (paths or get_paths(env)).policy_path, "user"


def load_policy(
    cwd: str | os.PathLike[str] | None = None,
    paths: Paths | None = None,
    environ: Mapping[str, str] | None = None,
    include_repo: bool = True,
) -> Policy:
    """Build the effective policy. Raises PolicyError on any unreadable/invalid layer."""
    paths = paths or get_paths(environ)
    sources: list[tuple[str, str]] = []
    upath, ukind = _user_policy(paths, environ)
    if ukind == "env" or os.path.exists(upath):
        sources.append((ukind, upath))
    if include_repo:
        try:
            here = os.fspath(cwd) if cwd is not None else os.getcwd()
        except OSError:  # the working directory was removed: there is no repo to tighten
            here = None
        rpath = _repo_policy(here) if here is not None else None
        if rpath is not None:
            sources.append(("repo", rpath))
    texts = [(kind, path, _read_text(path)) for kind, path in sources]
    snapshots = PolicySnapshots(paths)
    key = snapshots.key(_default_text(), texts)
    cached = snapshots.get(key)
    if cached is not None:
        _apply_process_settings(cached)
        return cached
    layers = [default_layer(), *(layer_from_text(kind, path, text) for kind, path, text in texts)]
    policy = merge_layers(layers)
    snapshots.put(key, policy)
    _apply_process_settings(policy)
    return policy


def _apply_process_settings(policy: Policy) -> None:
    """Settings that act below the policy's callers: the event log's rotation
    applies to every record this process appends after loading its policy."""
    from tcg import events

    events.set_rotation(int(policy.get("events.max-bytes", events.DEFAULT_MAX_BYTES)),
                        int(policy.get("events.keep", events.DEFAULT_KEEP)))


def _read_text(path: str | os.PathLike[str]) -> str:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except FileNotFoundError:
        raise PolicyError(
            "policy file not found", hint="create it, or unset TCG_POLICY", path=str(path)
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyError(
            f"cannot read policy: {exc}", hint="check the file's permissions and encoding", path=str(path)
        ) from None


class PolicySnapshots:
    """Effective policies remembered in the cache dir, keyed by the exact text of
    every layer; the file is bound to the code that wrote it (tcg.cachestore).

    Parsing and validating the TOML layers costs ~15 ms of every `tcg_shell`
    start; a snapshot hit costs one small read. The file is signed with the
    install key (tcg.signed), so an edited or foreign snapshot is ignored (and
    rebuilt): it cannot loosen the policy. Used only once the install key
    exists — loading a policy never creates files by itself.

    The body is ``marshal`` data (the policy is plain dicts, lists, strings and
    numbers): json would add its import to every command. marshal is only
    ever read after the MAC verified, and the tag names the interpreter's
    marshal format, so another Python's snapshot reads as absent.
    """

    FILE = "policy-snapshots.bin"
    TAG = f"policy-snapshots/marshal-{marshal.version}/py{sys.version_info[0]}.{sys.version_info[1]}"
    KEEP = 8

    def __init__(self, paths: Paths):
        from tcg.keyhash import existing_key

        self.path = os.path.join(paths.cache_dir, self.FILE)
        self._key = existing_key(paths)

    def key(self, default_text: str, texts: list[tuple[str, str, str]]) -> str:
        h = blake2b_256()  # the code that merged it binds the file's MAC (tcg.cachestore)
        for part in (default_text, *(f"{k}\0{p}\0{t}" for k, p, t in texts)):
            h.update(b"\1" + part.encode("utf-8", "surrogatepass"))
        return h.hexdigest()

    def _entries(self) -> dict[str, Any]:
        if self._key is None:
            return {}
        body = read_cache(self.path, self._key, self.TAG)
        try:
            entries = marshal.loads(body) if body is not None else {}
        except (ValueError, EOFError, TypeError):
            return {}
        return entries if isinstance(entries, dict) else {}

    def get(self, key: str) -> Policy | None:
        entry = self._entries().get(key)
        if not isinstance(entry, dict):
            return None
        try:
            data = entry["data"]
            if not isinstance(data, dict) or not isinstance(entry["fingerprint"], str):
                return None
            return Policy(data=data, fingerprint=entry["fingerprint"],
                          sources=tuple(entry["sources"]), notices=tuple(entry["notices"]))
        except (TypeError, KeyError):
            return None

    def put(self, key: str, policy: Policy) -> None:
        """Best effort: a snapshot that cannot be written only costs start-up time."""
        if self._key is None:
            return
        entries = self._entries()
        entries.pop(key, None)
        entries[key] = {"data": policy.data, "fingerprint": policy.fingerprint,
                        "sources": list(policy.sources), "notices": list(policy.notices)}
        while len(entries) > self.KEEP:
            entries.pop(next(iter(entries)))
        body = marshal.dumps(entries)
        write_cache(self.path, self._key, self.TAG, body)


def merge_layers(layers: list[Layer]) -> Policy:
    import copy

    data: dict[str, Any] = {}
    notices: list[str] = []
    for layer in layers:
        _merge(data, Layer(layer.kind, layer.path, copy.deepcopy(layer.data)), notices)
    _canonicalize(data)
    return Policy(
        data=data,
        fingerprint=fingerprint_of(data),
        sources=tuple(layer.path for layer in layers),
        notices=tuple(notices),
    )


def _canonicalize(node: dict[str, Any]) -> None:
    """Sort list values in place: they are sets, so order must not move the fingerprint."""
    for key, value in node.items():
        if isinstance(value, dict):
            _canonicalize(value)
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            node[key] = sorted(set(value))
        elif isinstance(value, list) and all(isinstance(v, dict) and "id" in v for v in value):
            node[key] = sorted(value, key=lambda e: str(e["id"]))


def basename_matches(name: str, patterns: list[str]) -> bool:
    low = name.lower()
    return any(fnmatchcase(low, p.lower()) for p in patterns)
