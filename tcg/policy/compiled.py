"""The effective policy compiled once into typed, immutable records.

The merged TOML document (``Policy.data``) is what the layers say; this is what
the surfaces read: the secret stores and secret variable names the shell path,
an agent's file tools and the sandbox match against, the MCP request check's
protection, the scanner's, the masker's, the clipboard watcher's, the event
log's, the trash's, the outbound channels', the resident session's, the inbound
gate's, the sandbox's, the launcher's and the entity hooks' settings, the
per-surface decisions and the policy's name and version. Each is built here, once per load, and kept in the policy
snapshot (tcg.policy.snapshots stores :func:`to_plain`, a tree of plain tuples,
and reads it back with :func:`from_plain`), so a snapshot hit builds nothing.

A setting the merged document does not hold (a Policy built by hand, without the
built-in default layer) is None here and the reader applies its own default.

The records are tcg.record.Record tuples, not dataclasses: an agent's
PreToolUse hook reads the secret stores on every tool call and stays clear of
the dataclasses and typing imports (tests/agents/test_claude_hook.py).
"""

from __future__ import annotations

from tcg.policy.glob import fnmatchcase
from tcg.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# What an MCP request may never name, whatever the policy says (docs/mcp.md): the
# same names lead the default [secret_stores], which also protect them on every
# other surface (tests/policy/test_compiled.py holds the two together).
MCP_MINIMUM_BASENAMES = (".env", ".env.*", "id_rsa", "id_ed25519", "id_ecdsa", "id_dsa")
MCP_MINIMUM_SEGMENTS = (".ssh",)


class SecretStores(Record, fields="basenames segments paths allow_basenames listing_is_read"):
    """``[secret_stores]``: basename globs (lower-cased, literal names first, so
    ``.env`` is reported as ``.env``, not as ``*.env``), directory names, path globs
    (``~`` unexpanded until :meth:`for_home`), exceptions, and whether listing a
    protected directory counts as reading it."""

    __slots__ = ()
    basenames: tuple[str, ...]
    segments: tuple[str, ...]
    paths: tuple[str, ...]
    allow_basenames: tuple[str, ...]
    listing_is_read: bool

    def for_home(self, home: str | None) -> SecretStores:
        """The same stores with ``~`` in the path globs expanded to ``home``."""
        if not home or not any(p == "~" or p.startswith("~/") for p in self.paths):
            return self
        paths = tuple(home + p[1:] if p == "~" or p.startswith("~/") else p for p in self.paths)
        return SecretStores(self.basenames, self.segments, paths, self.allow_basenames, self.listing_is_read)

    def match(self, path: str) -> str | None:
        """The protection ``path`` falls under (``basename P``, ``directory D`` or
        ``path P``), or None. ``path`` is a normalised path with ``/`` separators."""
        parts = [p for p in path.split("/") if p not in ("", ".")]
        if not parts:
            return None
        base = parts[-1].lower()
        if any(c.isspace() for c in base):
            return None  # prose ("update .env"), not a file name
        if any(fnmatchcase(base, p) for p in self.allow_basenames):
            return None
        for pat in self.basenames:
            if fnmatchcase(base, pat):
                return f"basename {pat}"
        for seg in parts:
            if seg.lower() in self.segments:
                return f"directory {seg}"
        for pat in self.paths:
            if fnmatchcase(path, pat):
                return f"path {pat}"
        return None


class SecretVars(Record, fields="names allow_names"):
    """``[secret_vars]``: globs over upper-cased variable names, and exceptions."""

    __slots__ = ()
    names: tuple[str, ...]
    allow_names: tuple[str, ...]


class GuardWiring(Record, fields="files env allow_env"):
    """``[guard]``: the files where tcg is wired in (empty: the shell rc files) and
    the variables it relies on (upper-cased globs), with exceptions."""

    __slots__ = ()
    files: tuple[str, ...]
    env: tuple[str, ...]
    allow_env: tuple[str, ...]


class McpProtection(Record, fields="minimum_basenames minimum_segments resources"):
    """What an MCP request may not name: the built-in minimum (no policy removes it)
    and ``mcp.protected_resources`` (lower-cased globs or substrings). The policy's
    secret stores apply to the paths a request names as well (tcg.mcp.check_request)."""

    __slots__ = ()
    minimum_basenames: tuple[str, ...]
    minimum_segments: tuple[str, ...]
    resources: tuple[str, ...]


class ScanSettings(Record, fields="max_blob_bytes allow_paths categories disabled_rules"):
    """``[scan]`` and ``detect.disabled_rules``: what `tcg scan` reads and reports."""

    __slots__ = ()
    max_blob_bytes: int | None
    allow_paths: tuple[str, ...]
    categories: tuple[str, ...] | None
    disabled_rules: tuple[str, ...]


class SurfaceSettings(Record, fields="terminal_hold_ms clipboard_interval clipboard_inspect_cap"):
    """The terminal masker's hold time and the clipboard watcher's poll interval and
    inspection cap."""

    __slots__ = ()
    terminal_hold_ms: int | None
    clipboard_interval: float | None
    clipboard_inspect_cap: int | None


class EventSettings(Record, fields="max_bytes keep on_unwritable"):
    """``[events]``: the log's rotation, and what an unwritable log does to a command."""

    __slots__ = ()
    max_bytes: int | None
    keep: int | None
    on_unwritable: str | None


class TrashSettings(Record, fields="copy_budget max_entries"):
    """``[trash]``: bytes one line may copy into the trash, entries it may move there."""

    __slots__ = ()
    copy_budget: int | None
    max_entries: int | None


class ChannelSettings(Record, fields="decisions categories"):
    """``[channels]``: per-channel decisions for a payload holding a secret (name,
    decision) on top of the guard's defaults, and the finding categories that count."""

    __slots__ = ()
    decisions: tuple[tuple[str, str], ...]
    categories: tuple[str, ...]


class Identity(Record, fields="name version decisions credential_dumps"):
    """``[policy]`` name and version; ``[decisions.<actor>]`` as (actor, ((code,
    decision), ...)) pairs; ``[[credential_dumps]]`` as given (each a tuple of
    (field, value) pairs), compiled only when a line needs them
    (tcg.policy.dumprules)."""

    __slots__ = ()
    name: str
    version: int
    decisions: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]
    credential_dumps: tuple[tuple[tuple[str, Any], ...], ...]

    def decision(self, actor: str, code: str) -> str | None:
        """The decision the policy names for ``actor`` and ``code``, or None."""
        for who, table in self.decisions:
            if who == actor:
                for name, value in table:
                    if name == code:
                        return value
        return None


class SessionSettings(Record, fields="on_station_gone_human on_station_gone_agent verdict_timeout_ms"):
    """``[session]``: what a resident session's shell does when the station is gone,
    per actor, and how long it waits for a verdict."""

    __slots__ = ()
    on_station_gone_human: str | None
    on_station_gone_agent: str | None
    verdict_timeout_ms: int | None


class InboundSettings(Record, fields="surfaces ml_model ml_threshold"):
    """``[inbound]``: per-surface actions as (surface, ((kind, action), ...)) and the
    optional classifier's model path and threshold."""

    __slots__ = ()
    surfaces: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]
    ml_model: str | None
    ml_threshold: float | None

    def surface(self, name: str) -> tuple[tuple[str, str], ...]:
        """(kind, action) pairs the policy sets for surface ``name``."""
        for surface, table in self.surfaces:
            if surface == name:
                return table
        return ()


class SandboxSettings(Record, fields="mechanism on_unavailable bwrap allow_twins allow_env skip_dirs roots max_dirs"):
    """``[sandbox]``: the agent commands' OS view (tcg.sandbox)."""

    __slots__ = ()
    mechanism: str | None
    on_unavailable: str | None
    bwrap: str | None
    allow_twins: tuple[str, ...]
    allow_env: tuple[str, ...]
    skip_dirs: tuple[str, ...]
    roots: tuple[str, ...]
    max_dirs: int | None


class LaunchSettings(Record, fields="known_agents on_findings on_partial on_error on_unmediated placeholder_write"):
    """``agents.known``, ``[launch]``'s decisions for a repository scan's outcome and
    an unmediated agent, and ``entities.placeholder-write`` for an agent's file tools."""

    __slots__ = ()
    known_agents: tuple[str, ...]
    on_findings: str | None
    on_partial: str | None
    on_error: str | None
    on_unmediated: str | None
    placeholder_write: str | None


class CompiledPolicy(Record, fields="secret_stores secret_vars guard mcp scan surfaces events trash channels "
                                    "identity session inbound sandbox launch"):
    """The policy as the surfaces read it (see the module docstring)."""

    __slots__ = ()
    secret_stores: SecretStores
    secret_vars: SecretVars
    guard: GuardWiring
    mcp: McpProtection
    scan: ScanSettings
    surfaces: SurfaceSettings
    events: EventSettings
    trash: TrashSettings
    channels: ChannelSettings
    identity: Identity
    session: SessionSettings
    inbound: InboundSettings
    sandbox: SandboxSettings
    launch: LaunchSettings


_PARTS = (SecretStores, SecretVars, GuardWiring, McpProtection, ScanSettings, SurfaceSettings, EventSettings,
          TrashSettings, ChannelSettings, Identity, SessionSettings, InboundSettings, SandboxSettings, LaunchSettings)


def compile_policy(data: dict[str, Any]) -> CompiledPolicy:
    """Build the typed model of a merged (and validated) policy document."""

    def section(name: str) -> dict[str, Any]:
        value = data.get(name)
        return value if isinstance(value, dict) else {}

    def strs(table: dict[str, Any], key: str) -> tuple[str, ...]:
        return tuple(str(v) for v in table.get(key) or ())

    def number(table: dict[str, Any], key: str, kind: type) -> Any:
        value = table.get(key)
        return kind(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    stores, svars, guard = section("secret_stores"), section("secret_vars"), section("guard")
    scan, detect, mask = section("scan"), section("detect"), section("mask")
    clip, events, mcp = section("clipboard"), section("events"), section("mcp")
    trash, channels = section("trash"), section("channels")
    per_channel = channels.get("decisions")
    basenames = sorted((b.lower() for b in strs(stores, "basenames")), key=lambda p: any(c in p for c in "*?["))
    categories = strs(scan, "categories") if "categories" in scan else None
    unwritable = events.get("on-unwritable")
    meta, session, inbound = section("policy"), section("session"), section("inbound")
    sandbox, agents, launch, entities = section("sandbox"), section("agents"), section("launch"), section("entities")
    ml_table = inbound.get("ml")
    ml: dict[str, Any] = ml_table if isinstance(ml_table, dict) else {}
    ml_model = ml.get("model")

    def text(table: dict[str, Any], key: str) -> str | None:
        value = table.get(key)
        return value if isinstance(value, str) else None

    def pairs(table: Any) -> tuple[tuple[str, str], ...]:
        items = table.items() if isinstance(table, dict) else ()
        return tuple((str(k), v) for k, v in items if isinstance(v, str))

    def tables(name: str, table: dict[str, Any]) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
        value = table.get(name)
        items = value.items() if isinstance(value, dict) else ()
        return tuple((str(k), pairs(v)) for k, v in items if isinstance(v, dict))

    dumps = data.get("credential_dumps") or ()
    return CompiledPolicy(
        SecretStores(tuple(basenames), tuple(s.lower() for s in strs(stores, "segments")),
                     strs(stores, "paths"), tuple(a.lower() for a in strs(stores, "allow_basenames")),
                     bool(stores.get("listing_is_read", False))),
        SecretVars(tuple(n.upper() for n in strs(svars, "names")),
                   tuple(n.upper() for n in strs(svars, "allow_names"))),
        GuardWiring(strs(guard, "files"), tuple(n.upper() for n in strs(guard, "env")),
                    tuple(n.upper() for n in strs(guard, "allow_env"))),
        McpProtection(MCP_MINIMUM_BASENAMES, MCP_MINIMUM_SEGMENTS,
                      tuple(p.lower() for p in strs(mcp, "protected_resources") if p.strip())),
        ScanSettings(number(scan, "max-blob-bytes", int), strs(scan, "allow_paths"), categories,
                     strs(detect, "disabled_rules")),
        SurfaceSettings(number(mask, "terminal-hold-ms", int), number(clip, "interval", float),
                        number(clip, "inspect-cap", int)),
        EventSettings(number(events, "max-bytes", int), number(events, "keep", int),
                      str(unwritable) if isinstance(unwritable, str) else None),
        TrashSettings(number(trash, "copy-budget", int), number(trash, "max-entries", int)),
        ChannelSettings(tuple((str(k), str(v)) for k, v in (per_channel or {}).items()),
                        strs(channels, "categories")),
        Identity(str(meta.get("name", "tcg")), int(meta.get("version", 1)), tables("decisions", data),
                 tuple(tuple(e.items()) for e in dumps if isinstance(e, dict))),
        SessionSettings(text(session, "on-station-gone-human"), text(session, "on-station-gone-agent"),
                        number(session, "verdict-timeout-ms", int)),
        InboundSettings(tables("surfaces", inbound), str(ml_model) if ml_model else None,
                        number(ml, "threshold", float)),
        SandboxSettings(text(sandbox, "mechanism"), text(sandbox, "on-unavailable"), text(sandbox, "bwrap"),
                        strs(sandbox, "allow_twins"), strs(sandbox, "allow_env"), strs(sandbox, "skip_dirs"),
                        strs(sandbox, "roots"), number(sandbox, "max-dirs", int)),
        LaunchSettings(strs(agents, "known"), text(launch, "on-findings"), text(launch, "on-partial"),
                       text(launch, "on-error"), text(launch, "on-unmediated"),
                       text(entities, "placeholder-write")),
    )


def to_plain(model: CompiledPolicy) -> tuple[tuple[Any, ...], ...]:
    """The model as plain tuples (what marshal stores in a policy snapshot)."""
    return tuple(tuple(part) for part in model)


def from_plain(value: Any) -> CompiledPolicy:
    """The model back from :func:`to_plain`'s form; ValueError when it is not one."""
    if not isinstance(value, tuple) or len(value) != len(_PARTS):
        raise ValueError("not a compiled policy")
    parts = []
    for cls, fields in zip(_PARTS, value, strict=True):
        if not isinstance(fields, tuple) or len(fields) != len(cls._fields):
            raise ValueError("not a compiled policy")
        parts.append(tuple.__new__(cls, fields))
    return tuple.__new__(CompiledPolicy, parts)
