"""Real -> alias on a byte stream (an agent command's output), chunk-invariant.

``AliasStream`` comes after the secret masker (``Chained``): the masker's output
goes in, the same bytes with every registered entity's forms replaced by their
alias tokens come out. Like the strict masker it never releases a byte that
could still be part of a match: a match cannot cross a line break, and no match
is longer than ``matcher.max_match_bytes``, so what lies before the last line
break (or that many bytes plus context before the end) is decided; the rest is
held until more arrives or the stream ends. For any split of the stream into
chunks the output is the output of the whole stream (tests/entities).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from tcg.entities.matcher import Match, Matcher
    from tcg.entities.runtime import Entities

_SGR = None
#: new bytes from which a chunk that follows held bytes is scanned without first
#: being copied after them (see AliasStream._split)
SPLIT_MIN = 4096
#: the longest first line of such a chunk scanned again with the held bytes
SPLIT_JUNCTION = 8192


def _sgr_codes(raw: bytes) -> bytes:
    """Colour sequences inside a replaced span, kept after the alias so the
    terminal's colours stay as the program set them."""
    global _SGR
    if b"\x1b" not in raw:
        return b""
    if _SGR is None:
        import re

        _SGR = re.compile(rb"\x1b\[[0-9;:]*m")
    return b"".join(_SGR.findall(raw))


def replace_bytes(data: bytes, matches: list[Match], base: int = 0) -> bytes:
    """``data`` with each match (byte offsets relative to ``base``) replaced."""
    out = []
    pos = 0
    for m in matches:
        s, e = m.start - base, m.end - base
        out.append(data[pos:s])
        out.append(m.token.encode("utf-8"))
        out.append(_sgr_codes(data[s:e]))
        pos = e
    out.append(data[pos:])
    return b"".join(out)


class AliasStream:
    """Streaming real -> alias filter (strict: holds what may still change)."""

    def __init__(self, matcher: Matcher):
        self.matcher = matcher
        self._buf = b""
        self._ctx = b""  # released raw bytes kept as left context
        self._keep = 2 * matcher.context_bytes
        self._reach = matcher.max_match_bytes + matcher.context_bytes
        self.count = 0  # spans replaced (for events: counts, never values)

    def feed(self, data: bytes) -> bytes:
        if not data:
            return b""
        tail = self._buf
        if tail and len(data) >= SPLIT_MIN:
            out = self._split(tail, data)
            if isinstance(out, bytes):
                return out
            self._buf = tail + data
            return self._advance(final=False, hits=out)
        self._buf = tail + data
        return self._advance(final=False)

    def _split(self, tail: bytes, data: bytes) -> bytes | tuple[list[int] | None] | None:
        """What _advance() releases for ``tail + data`` when its prefilter scan has no
        hit, found without copying ``data`` after ``tail`` for the scan; when a scan
        below has a hit, (the hits of both, in ``tail + data``'s offsets — every hit
        of the joined scan is among them —, or None when one is dense) for the caller
        to match around; None when the shortcut does not apply.

        No prefilter hit spans a line break (no piece, rare character or trigger
        holds \\n or \\r), and ``tail`` holds none (it is what follows the last
        one). So a hit of ``tail + data`` either lies in its prefix up to data's first
        line break — scanned as such, the same bytes around it — or starts after that
        break, where data alone shows the same bytes around it (what word_before()
        looks back through stops at the break). Hits data alone shows before its
        first break are extra, never missing: a hit in either scan only sends the
        buffer to the matcher, which finds what it would have found anyway."""
        pre = self.matcher._prefilter()
        if pre is None:
            return None
        nl = data.find(b"\n")
        cr = data.find(b"\r", 0, nl if nl >= 0 else len(data))
        first = cr if cr >= 0 else nl
        if first < 0 or first >= SPLIT_JUNCTION:
            return None
        head, rest = pre.scan(tail + data[: first + 1]), pre.scan(data)
        if head is None or rest is None:
            return (None,)
        if head or rest:
            return (sorted({*head, *(h + len(tail) for h in rest)}),)
        # the cut _advance() makes, in data's offsets: data's own last break keeps it in data
        cut = self._cut(data)
        out = b"".join((tail, memoryview(data)[:cut]))
        self._buf = data[cut:]
        keep = self._keep
        self._ctx = (self._ctx + out[-keep:])[-keep:]
        return out

    def flush(self) -> bytes:
        return self._advance(final=True)

    def release_idle(self) -> bytes:
        return b""  # strict: an unfinished line is held until it ends or the stream does

    def idle_deadline(self) -> float | None:
        return None

    def _cut(self, buf: bytes) -> int:
        """Where a non-final release of ``buf`` ends: after its last line break, or
        the reach before its end if that is later (on a character boundary, and
        never inside a colour sequence: see csi_start())."""
        from tcg.entities.normal import char_start, csi_start

        nl = buf.rfind(b"\n")
        last = max(nl, buf.rfind(b"\r", nl + 1))
        return csi_start(buf, char_start(buf, max(last + 1, len(buf) - self._reach)))

    def _advance(self, final: bool, hits: tuple[list[int] | None] | None = None) -> bytes:
        """Release what is decided of the held bytes, aliased. ``hits``: the prefilter's
        hits in them when already scanned (None inside: dense)."""

        buf = self._buf
        if not buf:
            return b""
        if final:
            cut = len(buf)
        else:
            cut = self._cut(buf)
            if cut <= 0:
                return b""
        ctx = self._ctx
        keep = self._keep
        pre = self.matcher._prefilter()
        if pre is not None and hits is None:
            hits = (pre.scan(buf),)
        if hits is not None and hits[0] == []:
            # no candidate in the new bytes (every match holds a hit): no copy, no view
            out = buf[:cut] if cut < len(buf) else buf
            self._buf = buf[cut:]
            self._ctx = (ctx + out[-keep:])[-keep:]
            return out
        data = ctx + buf
        base = len(ctx)
        # the hits of buf stand for those of data in the matches that start in buf (the
        # ones kept): such a match lies in buf, and a hit of it in buf alone differs
        # only in seeing the start of the text before it, which keeps a hit, never drops one
        at = None if hits is None else ([h + base for h in hits[0]] if hits[0] is not None else None)
        found = [m for m in self.matcher.find_bytes(data, at, scanned=hits is not None)
                 if base <= m.start < base + cut]
        if found:
            cut = max(cut, found[-1].end - base)
            self.count += len(found)
        out = replace_bytes(data[base : base + cut], found, base)
        self._buf = buf[cut:]
        self._ctx = (ctx + buf[:cut][-keep:])[-keep:]
        return out


class Chained:
    """Two output filters in a row (the secret masker, then the alias stream)."""

    def __init__(self, first: object, second: AliasStream):
        self.first = first
        self.second = second

    def feed(self, data: bytes) -> bytes:
        return self.second.feed(self.first.feed(data))  # type: ignore[attr-defined]

    def flush(self) -> bytes:
        return self.second.feed(self.first.flush()) + self.second.flush()  # type: ignore[attr-defined]

    def release_idle(self) -> bytes:
        return self.second.feed(self.first.release_idle())  # type: ignore[attr-defined]

    def idle_deadline(self) -> float | None:
        return self.first.idle_deadline()  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        return getattr(self.first, name)  # count, rules_seen, slice_size, ...


def entities_for(env: Mapping[str, str] | None = None, cwd: str | None = None) -> Entities | None:
    """The entities of the project ``cwd`` belongs to (None: none registered).
    Without a registry this costs a few stats and no imports."""
    from tcg.entities.locate import has_registries, project_root, registry_path
    from tcg.paths import get_paths

    env = os.environ if env is None else env
    paths = get_paths(env)
    if not has_registries(paths):
        return None
    root = project_root(cwd, env)
    if not os.path.exists(registry_path(root, paths)):
        return None
    from tcg.entities.runtime import load

    return load(root, paths)


def with_entities(masker: object, env: Mapping[str, str] | None = None, cwd: str | None = None
                  ) -> object:
    """``masker`` followed by the project's alias stream, or ``masker`` alone when
    the project has no registered entities. Raises when the registry is damaged
    (the caller withholds the output)."""
    ents = entities_for(env, cwd)
    if ents is None or not ents.matcher:
        return masker
    return Chained(masker, AliasStream(ents.matcher))


def alias_text(text: str, env: Mapping[str, str] | None = None, cwd: str | None = None) -> str:
    """``text`` with the project's entities aliased (for a command line in an event)."""
    ents = entities_for(env, cwd)
    if ents is None or not ents.matcher:
        return text
    data = text.encode("utf-8", "surrogateescape")
    return replace_bytes(data, ents.matcher.find_bytes(data)).decode("utf-8", "surrogateescape")
