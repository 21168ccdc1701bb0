"""The environment an agent's command gets: the caller's, minus every secret.

A variable is removed when its name is a secret name (``[secret_vars] names``
minus ``allow_names``) or when its value is one the detector flags (a token
exported under an innocent name: ``DEPLOY=ghp_…``). ``sandbox.allow_env`` keeps
variables a build needs on purpose (a registry token for ``npm ci``). tcg's own
variables (``TCG_*``) and the basics every program expects are never removed.

Detection costs a detector load, so verdicts are remembered per value: a keyed
hash of ``name=value`` → secret or not, in a file signed with the install key.
An agent session keeps one environment, so after its first command the check is
one HMAC per variable.
"""

from __future__ import annotations

import marshal
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any

NEVER_REMOVED = frozenset({
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "PWD", "OLDPWD", "TERM", "LANG", "LC_ALL", "TMPDIR",
    "SHLVL", "_",
})
VERDICTS_FILE = "env-verdicts.bin"
VERDICTS_KEEP = 2048
TAG = f"sandbox-env/v1/marshal-{marshal.version}"


def _kept(name: str, keep: Iterable[str]) -> bool:
    from tcg.policy.glob import fnmatchcase

    up = name.upper()
    return up in NEVER_REMOVED or up.startswith("TCG_") or any(fnmatchcase(up, p.upper()) for p in keep)


def scrub(env: Mapping[str, str], secret_name: Callable[[str], bool], keep: Iterable[str],
          value_is_secret: Callable[[list[tuple[str, str]]], set[str]]) -> tuple[dict[str, str], list[str]]:
    """(the scrubbed environment, sorted names removed). ``value_is_secret`` gets the
    (name, value) pairs whose name alone did not decide and returns the names to drop."""
    keep = tuple(keep)
    out: dict[str, str] = {}
    removed: list[str] = []
    undecided: list[tuple[str, str]] = []
    for name, value in env.items():
        if _kept(name, keep):
            out[name] = value
        elif secret_name(name):
            removed.append(name)
        else:
            out[name] = value
            if value:
                undecided.append((name, value))
    for name in value_is_secret(undecided):
        out.pop(name, None)
        removed.append(name)
    return out, sorted(removed)


class ValueVerdicts:
    """``value_is_secret`` for :func:`scrub`, with verdicts remembered across commands."""

    def __init__(self, policy: Any, cache_dir: str | None, key: bytes | None):
        self.policy = policy
        self.path = os.path.join(cache_dir, "sandbox", VERDICTS_FILE) if cache_dir else None
        self.key = key
        self.detector_loads = 0
        self._known: dict[str, Any] | None = None

    def _load(self) -> dict[str, Any]:
        if self._known is not None:
            return self._known
        self._known = self._read()
        return self._known

    def _read(self) -> dict[str, Any]:
        if self.path is None or self.key is None:
            return {}
        from tcg.cachestore import read_cache

        body = read_cache(self.path, self.key, TAG)
        try:
            data = marshal.loads(body) if body is not None else {}
        except (ValueError, EOFError, TypeError):
            return {}
        return data if type(data) is dict else {}

    def _id(self, text: str) -> str:
        from tcg.digest import hmac_sha256

        key = self.key or b""
        salt = (self.policy.fingerprint if self.policy is not None else "").encode()
        return hmac_sha256(key, salt + b"\0" + text.encode("utf-8", "surrogateescape"))[:24]

    def whole(self, env: Mapping[str, str], keep: Iterable[str]) -> tuple[str, list[str] | None]:
        """(id of this exact environment, the names it lost last time or None): an agent
        session runs every command with one environment, so one HMAC decides them all."""
        # TCG_* change per command (session, mediation marks) and are never removed
        ident = "env:" + self._id("\0".join([*sorted(keep), *sorted(f"{k}={v}" for k, v in env.items()
                                                                  if not k.startswith("TCG_"))]))
        known = self._load().get(ident) if self.key is not None else None
        return ident, (list(known) if type(known) is list else None)

    def remember(self, ident: str, removed: list[str]) -> None:
        known = self._load()
        known[ident] = list(removed)
        self._save(known)

    def __call__(self, pairs: list[tuple[str, str]]) -> set[str]:
        ids = [self._id(f"{n}={v}") for n, v in pairs]
        known = self._load()
        missing = [(i, p) for i, p in zip(ids, pairs, strict=True) if i not in known]
        if missing:
            flagged = self._detect([p for _, p in missing])
            for i, (name, _) in missing:
                known[i] = name in flagged
            self._save(known)
        return {p[0] for i, p in zip(ids, pairs, strict=True) if known.get(i)}

    def _detect(self, pairs: list[tuple[str, str]]) -> set[str]:
        from tcg.mask import masker_for

        self.detector_loads += 1
        flagged: set[str] = set()
        for name, value in pairs:
            masker = masker_for(self.policy, "strict")
            data = value.encode("utf-8", "surrogateescape")
            if masker.feed(data) + masker.flush() != data:
                flagged.add(name)
        return flagged

    def _save(self, known: dict[str, Any]) -> None:
        if self.path is None or self.key is None:
            return
        from tcg.cachestore import write_cache

        while len(known) > VERDICTS_KEEP:
            known.pop(next(iter(known)))
        write_cache(self.path, self.key, TAG, marshal.dumps(known))
