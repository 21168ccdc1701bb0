"""Start-up cache files: signed with the install key, bound to the code that wrote them.

A cache file is a tcg.signed file whose MAC tag is ``<kind>\\0<code
fingerprint>\\0<file name>`` (tcg.fingerprint). A file written by other tcg code
(an upgrade, an edited module in an editable install) fails the MAC exactly like
an edited or forged one: it reads as absent and the caller rebuilds it. So a
cache never needs its own list of the modules its content depends on, and a
forged or stale cache can only cost the time to rebuild it.

The file name is in the tag because most caches are named by a hash of what
they were built from (a rule set, a policy): a genuine file of one identity
copied over another's name would otherwise verify and be used for the wrong
input. With the name bound, such a replayed file fails the MAC and is rebuilt.
Files signed before the name was bound fail the same way, once.

Records that must outlive an upgrade (the trash's transaction records,
approvals, the rules hyperscan's self-check demoted) use tcg.signed directly.
"""

from __future__ import annotations

import os

from tcg import signed
from tcg.fingerprint import code_fingerprint

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


def cache_tag(kind: str, path: str | os.PathLike[str]) -> str:
    """The MAC tag of the cache of ``kind`` at ``path`` written by this code: the
    file's name is bound in, so a genuine file replayed under another name fails."""
    return f"{kind}\0{code_fingerprint()}\0{os.path.basename(os.fspath(path))}"


def read_cache(path: str | os.PathLike[str], key: bytes, kind: str) -> bytes | None:
    """The body of the cache file, or None when absent, forged, replayed from another
    name or written by other code."""
    return signed.read_signed(path, key, cache_tag(kind, path))


def read_cache_pieces(path: str | os.PathLike[str], key: bytes, kind: str,
                      cut: Callable[[bytes, int], list[int] | None]) -> tuple[bytes, list[bytes]] | None:
    """``(MAC line, the body in pieces)``, each read into its own bytes and none
    copied again, or None (tcg.signed.read_signed_pieces)."""
    return signed.read_signed_pieces(path, key, cache_tag(kind, path), cut)


def read_cache_json(path: str | os.PathLike[str], key: bytes, kind: str) -> dict[str, object] | None:
    """A JSON object cached by write_cache, or None (see read_cache)."""
    return signed.read_signed_json(path, key, cache_tag(kind, path))


def write_cache(path: str | os.PathLike[str], key: bytes, kind: str, body: bytes) -> bool:
    """Atomically replace the cache file (0600, private dir). Best effort: False on failure."""
    return write_cache_mac(path, key, kind, body) is not None


def write_cache_mac(path: str | os.PathLike[str], key: bytes, kind: str, body: bytes) -> bytes | None:
    """write_cache, returning the MAC line it wrote (the file's identity, as
    read_cache_pieces returns it) when the write succeeded, else None."""
    return signed.write_signed_mac(path, key, cache_tag(kind, path), body)
