"""Client → server request check: refuse requests that name a protected resource.

Every string in the message (values and object keys, the method included) is
checked in several forms, in this order:

1. the string as parsed (JSON escapes such as ``\\u002e`` are already decoded);
2. ``normalize_for_match``: percent-decoding and JS/JSON escape decoding, up to
   3 nested rounds, then backslashes → slashes;
3. for a ``file:`` URI, its path;
4. path resolution: an absolute path (or ``~``) through ``realpath`` (symlinks
   followed); a relative one against the proxy's cwd and each declared root.

Each form is split into segments (on ``/``, whitespace, quotes and shell
punctuation) and matched against the built-in minimum, which no policy can
remove (tcg.policy.compiled MCP_MINIMUM_*): ``.env`` / ``.env.*`` and ``.ssh``
as whole segments, basenames ``id_rsa``, ``id_ed25519``, ``id_ecdsa``, ``id_dsa``
(case-insensitive, as on case-insensitive filesystems). Policy
``mcp.protected_resources`` entries are matched as case-insensitive
basename/segment globs, and (without glob characters) as substrings of every
form. The resolved paths (step 4) are also matched against the policy's
``[secret_stores]``, the same match the shell and an agent's file tools get.
"""

from __future__ import annotations

import fnmatch
import os
import re
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from tcg.detect.normalize import normalize_for_match
from tcg.leanjson import strings_in
from tcg.policy.compiled import MCP_MINIMUM_BASENAMES, MCP_MINIMUM_SEGMENTS, SecretStores
from tcg.policy.realpath import MAX_PATH_LEN, real_path

REASON = "protected-resource"
RULE_DOTENV = "mcp-dotenv"
RULE_SSH_DIR = "mcp-ssh-dir"
RULE_SSH_KEY = "mcp-ssh-key"
RULE_POLICY = "mcp-protected-resource"
RULE_SECRET_STORE = "mcp-secret-store"

# The minimum's names by rule: the .env family, the SSH key files, the .ssh directory.
_DOTENV_NAMES = tuple(b for b in MCP_MINIMUM_BASENAMES if b.startswith(".env"))
SSH_KEY_BASENAMES = frozenset(b for b in MCP_MINIMUM_BASENAMES if b not in _DOTENV_NAMES)
_SSH_DIRS = frozenset(MCP_MINIMUM_SEGMENTS)
# NUL splits too: a C-level open stops there, so ".env\0" names .env
_SEGMENT_SPLIT = re.compile(r"[/\s\x00\"'`;|&<>(){}\[\],=:*?]+")
# substrings a segment of the minimum must contain (a cheap gate before splitting)
_BUILTIN_KEYS = tuple(dict.fromkeys(n.split("*")[0].rstrip(".") for n in (*MCP_MINIMUM_BASENAMES, *_SSH_DIRS)))
_GLOB = re.compile(r"[*?\[]")
MAX_RESOLVE_TOKENS = 64  # whitespace-separated words resolved per string


@dataclass(frozen=True)
class Blocked:
    """Why a request was refused (rule id only: never the matched value)."""

    reason: str
    rule: str


def builtin_rule_for_segment(segment: str) -> str | None:
    low = segment.lower()
    if any(fnmatch.fnmatchcase(low, n) for n in _DOTENV_NAMES):
        return RULE_DOTENV
    if low in _SSH_DIRS:
        return RULE_SSH_DIR
    if low in SSH_KEY_BASENAMES:
        return RULE_SSH_KEY
    return None


def file_uri_path(text: str) -> str | None:
    """The local path of a ``file:`` URI (percent-decoded), else None."""
    if not text[:5].lower() == "file:":
        return None
    try:
        parts = urlsplit(text)
    except ValueError:
        return None
    return unquote(parts.path) or None


def _abs_paths(roots: Iterable[str | Path]) -> list[Path]:
    paths: list[Path] = []
    for r in roots:
        s = str(r)
        p = file_uri_path(s) if s[:5].lower() == "file:" else s
        if p and os.path.isabs(p):
            paths.append(Path(p))
    return paths


class RequestChecker:
    """Decides whether a client message may reach the server. Thread-safe."""

    def __init__(self, protected: Iterable[str] = (), cwd: Path | None = None,
                 roots: Iterable[str | Path] = (), stores: SecretStores | None = None):
        self._stores = stores  # the policy's secret stores, ~ expanded (None: the minimum only)
        self.protected = [p.lower() for p in protected if isinstance(p, str) and p.strip()]
        self._globs = [p for p in self.protected if _GLOB.search(p)]
        self._plain = [p for p in self.protected if not _GLOB.search(p)]
        self.cwd = Path(cwd) if cwd is not None else Path.cwd()
        self._static = _abs_paths(roots)  # e.g. directories named on the server's command line
        self._client: list[Path] = []  # from the client's roots/list answers
        self._lock = threading.Lock()
        self._real_cache: dict[str, str] = {}

    @classmethod
    def for_policy(cls, policy: Any, cwd: Path | None = None,
                   roots: Iterable[str | Path] = ()) -> RequestChecker:
        """The checker of ``policy``'s compiled model: its MCP protection and its
        secret stores (``~`` as this process's home)."""
        model = policy.model
        stores = model.secret_stores.for_home(os.path.expanduser("~"))
        return cls(model.mcp.resources, cwd=cwd, roots=roots, stores=stores)

    # ------------------------------------------------------------ roots

    def set_client_roots(self, roots: Iterable[str | Path]) -> None:
        """Replace the roots the client declared (``file:`` URIs or absolute paths)."""
        paths = _abs_paths(roots)
        with self._lock:
            self._client = paths

    @property
    def roots(self) -> list[Path]:
        with self._lock:
            return [*self._static, *self._client]

    # ------------------------------------------------------------ matching

    def _match_text(self, text: str) -> str | None:
        low = text.lower()
        if any(p in low for p in self._plain):
            return RULE_POLICY
        # cheap gate: a built-in segment needs one of these substrings (30 MB
        # arguments are not split into millions of segments for nothing)
        if not self._globs and not any(k in low for k in _BUILTIN_KEYS):
            return None
        for seg in _SEGMENT_SPLIT.split(text):
            if not seg:
                continue
            rule = builtin_rule_for_segment(seg)
            if rule:
                return rule
            if self._globs and any(fnmatch.fnmatchcase(seg.lower(), g) for g in self._globs):
                return RULE_POLICY
        return None

    def _resolved_forms(self, text: str) -> Iterator[str]:
        """``text`` resolved as a local path through symlinks (absolute, or relative
        to the cwd and every root); a string holding NUL as what precedes it (where a
        C-level open stops)."""
        text = text.split("\x00", 1)[0]
        if not text or len(text) > MAX_PATH_LEN or "\n" in text:
            return
        candidates = [text]
        words = text.split()
        if len(words) > 1:
            candidates.extend(words[:MAX_RESOLVE_TOKENS])
        for cand in candidates:
            cand = cand.strip("\"'`")
            if not cand:
                continue
            if cand.startswith("~"):
                cand = os.path.expanduser(cand)
            try:
                if os.path.isabs(cand):
                    real = real_path(cand)
                    if real is not None:
                        yield real
                    continue
                first = cand.split("/", 1)[0]
                for base in [self.cwd, *self.roots]:
                    real_base = self._real(base)
                    # a path whose first component does not exist cannot lead through a
                    # symlink: one lstat instead of a realpath walk per string and base
                    if first not in ("", ".", "..") and not os.path.lexists(os.path.join(real_base, first)):
                        continue
                    # the whole resolved path is matched: a cwd or root inside .ssh or a
                    # .env.d directory makes its existing entries protected too (fail closed)
                    real = real_path(os.path.join(real_base, cand))
                    if real is not None:
                        yield real
            except (OSError, ValueError):
                continue

    def _real(self, base: Path) -> str:
        key = str(base)
        real = self._real_cache.get(key)
        if real is None:
            real = self._real_cache[key] = real_path(key) or key
        return real

    def check_string(self, s: str) -> str | None:
        """The rule id that ``s`` trips, else None."""
        forms = [s]
        norm = normalize_for_match(s) if ("%" in s or "\\" in s) else s
        if norm != s:
            forms.append(norm)
        for f in list(forms):
            p = file_uri_path(f)
            if p:
                forms.append(p)
        for f in forms:
            rule = self._match_text(f)
            if rule:
                return rule
        for f in dict.fromkeys(forms):
            for resolved in self._resolved_forms(f):
                rule = self._match_text(resolved)
                if rule:
                    return rule
                if self._stores is not None and self._stores.match(resolved) is not None:
                    return RULE_SECRET_STORE
        return None

    def check(self, message: Any) -> Blocked | None:
        """Blocked(reason, rule) if any string in ``message`` names a protected resource."""
        for s in strings_in(message):
            if s in ("2.0", "jsonrpc", "id", "method", "params"):
                continue
            rule = self.check_string(s)
            if rule:
                return Blocked(REASON, rule)
        return None
