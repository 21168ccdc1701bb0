"""`tcg scan-transcript`: did a registered value or a secret reach a model?

Claude Code keeps every session as JSON lines (``~/.claude/projects/<project>/
<session>.jsonl``): what the model was sent and what it answered. Each line is
parsed and every string in it is matched — registered entities of every
project in tcg's state directory (their surface forms, look-alike spellings
included) and the secret/PII rules — and the hits are counted per file, by
entity type and by rule. A line that is not JSON is matched as it is. No value
is ever printed, only counts.
"""

from __future__ import annotations

import glob
import json
import os
from dataclasses import dataclass, field

from tcg.leanjson import strings_in

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tcg.paths import Paths


@dataclass
class FileCounts:
    path: str
    lines: int = 0
    entities: dict[str, int] = field(default_factory=dict)  # type -> hits
    secrets: dict[str, int] = field(default_factory=dict)  # rule id -> hits
    malformed: int = 0

    @property
    def total(self) -> int:
        return sum(self.entities.values()) + sum(self.secrets.values())


def default_paths(home: str | None = None) -> list[str]:
    base = os.path.join(home or os.path.expanduser("~"), ".claude", "projects")
    return sorted(glob.glob(os.path.join(base, "*", "*.jsonl")))


def expand(paths: list[str]) -> list[str]:
    out: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            out += sorted(glob.glob(os.path.join(p, "**", "*.jsonl"), recursive=True))
        else:
            out.append(p)
    return out


def all_entities(paths: Paths | None = None) -> tuple[object | None, dict[str, str]]:
    """One matcher over every project's registry, and alias -> type."""
    from tcg.entities.locate import REGISTRY, STORE_DIR
    from tcg.entities.matcher import EntitySpec, Matcher
    from tcg.entities.registry import Registry
    from tcg.paths import get_paths

    p = paths or get_paths()
    specs: list[EntitySpec] = []
    types: dict[str, str] = {}
    for reg_path in sorted(glob.glob(os.path.join(str(p.state), STORE_DIR, "*", REGISTRY))):
        with open(reg_path, "rb") as fh:
            reg = Registry.from_json(json.loads(fh.read()))
        for e in reg.entities:
            key = f"{reg.root}\0{e.alias}"
            specs.append(EntitySpec(key, e.capital, tuple((f, key) for f, _ in e.forms)))
            types[key] = e.type
    return (Matcher(specs) if specs else None), types


def scan_file(path: str, matcher: object | None, types: dict[str, str], detector: object) -> FileCounts:
    fc = FileCounts(path)
    with open(path, "rb") as fh:
        for raw in fh:
            fc.lines += 1
            try:
                texts = strings_in(json.loads(raw))
            except ValueError:
                fc.malformed += 1
                texts = [raw.decode("utf-8", "replace")]
            for t in texts:
                if not t:
                    continue
                data = t.encode("utf-8", "surrogatepass")
                if matcher is not None:
                    for m in matcher.find_bytes(data):  # type: ignore[attr-defined]
                        kind = types.get(m.token, "entity")
                        fc.entities[kind] = fc.entities.get(kind, 0) + 1
                for f in detector.find_bytes(data, decode=True):  # type: ignore[attr-defined]
                    if f.category in ("secret", "pii"):
                        fc.secrets[f.rule_id] = fc.secrets.get(f.rule_id, 0) + 1
    return fc


def scan(paths: list[str]) -> list[FileCounts]:
    from tcg.detect.engine import load_detector
    from tcg.policy.load import load_policy

    matcher, types = all_entities()
    detector = load_detector(load_policy())
    return [scan_file(p, matcher, types, detector) for p in paths]


def render(results: list[FileCounts]) -> str:
    lines = []
    for r in results:
        parts = [f"{k}={v}" for k, v in sorted(r.entities.items())]
        parts += [f"{k}={v}" for k, v in sorted(r.secrets.items())]
        status = "clean" if not r.total else "FOUND"
        extra = f" ({r.malformed} non-JSON lines)" if r.malformed else ""
        lines.append(f"{status:5s}  {r.path}  lines={r.lines}{extra}" + (f"  {' '.join(parts)}" if parts else ""))
    found = sum(1 for r in results if r.total)
    ent = sum(sum(r.entities.values()) for r in results)
    sec = sum(sum(r.secrets.values()) for r in results)
    lines.append(f"{len(results)} file(s), {found} with findings: {ent} registered value(s), "
                 f"{sec} secret(s)/PII")
    return "\n".join(lines)
