"""The signed start-up cache of the inbound engine: the parsed packaged rules and
the engine's small JSON state, in files signed with the install key and bound to
the code that wrote them (tcg.cachestore). A file that fails the MAC check, was
written by other code, or holds another shape, reads as absent."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from tcg.inbound.rules import InboundRule, load_rules, rule_from_record

RULES_FORMAT = "tcg-inbound-rules-2"  # the parsed packaged rules (signed like the databases)


def file_tag(fmt: str, path: Path | None) -> str:
    """The MAC tag of a database file signed without tcg.cachestore: its name (the
    rule set's fingerprint, which database) is bound in, so another rule set's or
    another database's genuine file copied under this name fails the check."""
    return f"{fmt}\0{path.name if path is not None else ''}"


def load_state(path: Path | None, key: bytes | None, tag: str) -> dict[str, Any] | None:
    """A signed cache file's JSON object; None when absent, forged or unreadable."""
    if path is None or key is None:
        return None
    from tcg.cachestore import read_cache_json

    return read_cache_json(path, key, tag)


def store_state(path: Path | None, key: bytes | None, tag: str, state: dict[str, Any]) -> None:
    """Best effort: a cache that cannot be written only costs compile time."""
    if path is None or key is None:
        return
    from tcg.cachestore import write_cache

    write_cache(path, key, tag, json.dumps(state, separators=(",", ":")).encode("ascii"))


def packaged_rules(files: list[tuple[str, str]], cache_dir: Path | None,
                   key: bytes | None) -> list[InboundRule]:
    """The packaged rules (``files``: builtin_rule_files()), read from a signed cache
    file when the rule files did not change since it was written (the code that
    parses them binds the file's MAC: tcg.cachestore); else parsed and validated (tcg.inbound.rules.load_rules) and stored.
    Parsing analyses every pattern's tree for its prefilter: most of a cold
    process's start-up. A file that fails the MAC check reads as absent."""
    h = hashlib.sha256(RULES_FORMAT.encode())
    h.update(sys.version.encode())
    h.update(json.dumps(files, ensure_ascii=False).encode("utf-8"))
    path = cache_dir / f"rules-{h.hexdigest()[:32]}.json" if cache_dir is not None else None
    state = load_state(path, key, RULES_FORMAT)
    if state is not None:
        try:
            return [rule_from_record(r) for r in state["rules"]]
        except (KeyError, TypeError):
            pass  # a record of another shape: parse again
    rules = load_rules()
    store_state(path, key, RULES_FORMAT, {"rules": [r.record() for r in rules]})
    return rules
