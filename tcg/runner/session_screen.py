"""The first screen of a session, shown before the masking process is ready.

A session's first output — a prompt, perhaps a greeting — is usually the same
every time a terminal opens, and the masking process needs a few hundred
milliseconds to load the detector. So each session remembers what it printed
before its first pause (up to 64 KiB) once its masking process has confirmed it
holds nothing to mask (terminal mode: output equal to input, nothing held
back), as a MAC under the install key (keyed BLAKE2b, as tcg.signed; HMAC-SHA256
loaded OpenSSL, ~3 ms of the station's start) and a length — never the bytes
themselves. The station measures the first screen and tells the masking
process its length over a control pipe; the masking process, which has the
detector loaded anyway, confirms and records it (ScreenConfirmer). A later
session whose first output is exactly such a screen shows it at once; the
masking process still gets it (for context) and drops its own copy of those
bytes from the front of its output (tcg.runner.session_mask).

Entries are kept per (policy fingerprint, detector files): after a policy or
rule change nothing is shown early until the new masker has confirmed it
again. The cache file is signed (tcg.signed): an edited or foreign file reads
as empty. Anything not in the cache waits for the masker, as before.
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

MAX_PREFIX = 64 << 10
MAX_ENTRIES = 16
HEAD = 16  # bytes: a screen's head is remembered too, so output that starts otherwise waits for none
PAUSE = 0.3  # seconds of quiet that end the first screen
FIRST_WAIT = 0.15  # how long unknown first output waits for more before it goes to the masker
WINDOW = 3.0  # the first screen ends at the latest this long after the first byte
HEADER = b"TCGSHOWN "


def header(shown: int) -> bytes:
    """The first line of the masking process's input: how many of the following
    bytes the station has already put on the screen."""
    return HEADER + str(shown).encode() + b"\n"


class ScreenCache:
    """Known-clean first screens for one (policy, detector) pair."""

    def __init__(self, directory: str, key: bytes, fingerprint: str, detector_sig: str):
        from tcg.digest import keyed_blake2b

        self.key = key
        self.fingerprint = fingerprint
        self.name = keyed_blake2b(key, f"{fingerprint}\0{detector_sig}".encode(), b"tcg screen name")[:16]
        self.path = os.path.join(directory, "session-screens", self.name)
        #: (length, MAC) -> the prefix MACs of that remembered screen (set by entries())
        self.prefixes: dict[tuple[int, str], list[str]] = {}

    def _tag(self) -> str:
        return "session-screen/" + self.name

    def mac(self, data: bytes) -> str:
        from tcg.digest import keyed_blake2b

        return keyed_blake2b(self.key, data, b"tcg screen")

    def head_mac(self, data: bytes) -> str:
        """The MAC of a screen's first HEAD bytes (all of a shorter one)."""
        from tcg.digest import keyed_blake2b

        return keyed_blake2b(self.key, data[:HEAD], b"tcg screen head")

    def prefix_macs(self, data: bytes) -> str:
        """Short MACs of the screen's first prefix_lengths() bytes, comma-separated:
        output that differs from a longer known screen only after the head (zsh's
        prompt comes after 18 bytes of attribute resets), or is shorter than the
        head, can then be told apart from it too. Only ever used to stop waiting
        (the output goes to the masker): a collision of these 64-bit values just
        waits."""
        return ",".join(self.prefix_mac(data[:k]) for k in prefix_lengths(len(data)))

    def prefix_mac(self, data: bytes) -> str:
        from tcg.digest import keyed_blake2b

        return keyed_blake2b(self.key, data, b"tcg screen pre")[:16]

    def entries(self) -> list[tuple[int, str, str]]:
        """(length, MAC, head MAC) per remembered screen; the head MAC is "" in
        a line written before heads were kept (no early answer for it)."""
        from tcg.signed import read_signed

        body = read_signed(self.path, self.key, self._tag())
        out: list[tuple[int, str, str]] = []
        self.prefixes = {}
        for line in (body or b"").decode("ascii", "replace").splitlines():
            length, mac, head, pre = (line.split(" ") + ["", "", ""])[:4]
            if length.isdigit() and 0 < int(length) <= MAX_PREFIX and len(mac) == 64:
                out.append((int(length), mac, head if len(head) == 64 else ""))
                if pre:
                    self.prefixes[(int(length), mac)] = pre.split(",")
        return out

    def add(self, data: bytes) -> bool:
        from tcg.signed import write_signed

        entry = (len(data), self.mac(data), self.head_mac(data))
        kept = [e for e in self.entries() if e[:2] != entry[:2]][: MAX_ENTRIES - 1]
        pre = {**self.prefixes, entry[:2]: self.prefix_macs(data).split(",")}
        body = "".join(f"{n} {m} {h} {','.join(pre.get((n, m), []))}".rstrip() + "\n"
                       for n, m, h in [entry, *kept]).encode("ascii")
        return write_signed(self.path, self.key, self._tag(), body)


def prefix_lengths(n: int) -> list[int]:
    """The prefix lengths of a screen of ``n`` bytes whose MACs are kept: every
    length below HEAD, then 32, 64, … below ``n``."""
    out = list(range(1, min(n, HEAD)))
    k = 2 * HEAD
    while k < n:
        out.append(k)
        k *= 2
    return out


def open_cache(env: dict[str, str], policy: Any = None) -> tuple[ScreenCache, Any] | None:
    """The cache for ``policy`` (default: the current one) and the detector, and
    that policy; None when either cannot be read (then nothing is shown early)."""
    try:
        from tcg.fingerprint import code_fingerprint
        from tcg.keyhash import KeyedHasher
        from tcg.paths import get_paths
        from tcg.policy.load import load_policy

        if policy is None:
            policy = load_policy()
        key = KeyedHasher.for_install().key
        cache = ScreenCache(str(get_paths(env).cache_dir), key, policy.fingerprint,
                            code_fingerprint())
        return cache, policy
    except Exception:  # noqa: BLE001 - an optimisation only
        return None


def first_screen(env: Mapping[str, str], confirm_later: Callable[[int], None],
                 policy: Any) -> FirstScreen:
    """The station's FirstScreen for a session under ``policy``: the known first
    screens read (while the shell reads its rc files); none when the cache
    cannot be read."""
    opened = open_cache(dict(env), policy)
    if opened is None:
        return FirstScreen(None, None)
    return FirstScreen(opened[0], confirm_later)


def confirm_clean(cache: ScreenCache, policy: Any, mode: str, data: bytes) -> bool:
    """Mask ``data`` as the session's masking process does (``mode``, one chunk,
    ``policy``); remember it when nothing would change and nothing is held back.
    Runs in the masking process, which has the detector loaded already."""
    try:
        from tcg.mask import masker_for

        if policy.fingerprint != cache.fingerprint:
            return False
        masker = masker_for(policy, mode)
        if masker.feed(data) != data or masker.idle_deadline() is not None:
            return False
        return cache.add(data)
    except Exception:  # noqa: BLE001 - an optimisation only
        return False


class FirstScreen:
    """The station's side: decides whether the first output may go out before
    the masker (``match``), and measures the first screen (the output before the
    first pause) for the masking process to confirm (``confirm_later(length)``)."""

    def __init__(self, cache: ScreenCache | None, confirm_later: Callable[[int], None] | None):
        self.cache = cache
        entries = cache.entries() if cache is not None else []
        self.candidates = sorted({n for n, _, _ in entries})
        self._macs = {m for _, m, _ in entries}
        prefixes = cache.prefixes if cache is not None else {}
        self._heads = sorted((n, h, prefixes.get((n, m), [])) for n, m, h in entries)
        self._head_of: str | None = None  # the head MAC of the pending bytes' first HEAD
        self._prefix_of: dict[int, str] = {}  # the prefix MAC of the pending bytes, by length
        self.confirm_later = confirm_later
        self.pending = bytearray()
        self.first_at: float | None = None
        self.length = 0
        self.collecting = confirm_later is not None
        self.last_at = 0.0

    def match(self) -> int | None:
        """Length of the known first screen the pending bytes are, exactly; 0 when
        none can be any more; None while more bytes could still make one. Exactly:
        a known screen followed, in the same output, by more bytes is not shown
        early — the masker might find something across the two. A longer known
        screen whose head differs from the pending bytes' is none they can become:
        output that changes every time (a clock in the prompt) goes to the masker
        at once instead of waiting FIRST_WAIT for more; so does output shorter than
        the head whose prefix differs from every longer known screen's."""
        cache = self.cache
        size = len(self.pending)
        if cache is None:
            return 0
        if size in self.candidates and cache.mac(bytes(self.pending)) in self._macs:
            return size
        for n, head, pre in self._heads:
            if n <= size:
                continue
            if head and size >= min(n, HEAD) and self._head(n) != head:
                continue  # its head differs: it cannot become this screen
            if self._prefix_differs(n, pre, size):
                continue  # differs in the longest prefix of it kept that has arrived
            return None
        return 0

    def _prefix_differs(self, n: int, pre: list[str], size: int) -> bool:
        lengths = prefix_lengths(n)
        if len(pre) != len(lengths):
            return False  # a line from before prefixes were kept: no early answer
        last = -1
        for i, k in enumerate(lengths):
            if k > size:
                break
            last = i
        return last >= 0 and self._prefix(lengths[last]) != pre[last]

    def _prefix(self, size: int) -> str:
        assert self.cache is not None
        if size not in self._prefix_of:
            self._prefix_of[size] = self.cache.prefix_mac(bytes(self.pending[:size]))
        return self._prefix_of[size]

    def _head(self, n: int) -> str:
        """The head MAC of the pending bytes as a screen of length ``n`` has it."""
        assert self.cache is not None
        if n < HEAD:
            return self.cache.head_mac(bytes(self.pending[:n]))
        if self._head_of is None:
            self._head_of = self.cache.head_mac(bytes(self.pending[:HEAD]))
        return self._head_of

    def deadline(self) -> float | None:
        if self.first_at is None:
            return None
        return self.first_at + FIRST_WAIT

    def collect(self, data: bytes, now: float) -> None:
        if not self.collecting:
            return
        if self.length and (now - self.last_at > PAUSE or
                            (self.first_at is not None and now - self.first_at > WINDOW)):
            self.finish()
            return
        self.length += len(data)
        self.last_at = now
        if self.length > MAX_PREFIX:
            self.collecting = False  # too long to be a first screen

    def collect_deadline(self) -> float | None:
        return self.last_at + PAUSE if self.collecting and self.length else None

    def finish(self) -> None:
        if self.collecting and self.length and self.confirm_later is not None:
            self.confirm_later(self.length)
        self.collecting = False

    @staticmethod
    def now() -> float:
        return time.monotonic()


class ScreenConfirmer:
    """The masking process's side: an OutputFilter wrapper that keeps the first
    MAX_PREFIX input bytes and, when the station says on the control pipe how
    long the first screen was (``screen N``), confirms it (confirm_clean) — at
    once, or once its N bytes have arrived: the word can come first (this process
    was still loading, and the station reads the shell's output before it)."""

    def __init__(self, inner: Any, control_fd: int, policy_of: Callable[[], Any], mode: str):
        self.inner = inner
        self.control_fd = control_fd
        self.policy_of = policy_of
        self.mode = mode
        self.head = bytearray()
        self._buf = b""
        self._wanted = 0  # a screen's length the station named before its bytes were here
        os.set_blocking(control_fd, False)

    def _poll(self) -> None:
        if self.control_fd < 0:
            return
        try:
            data = os.read(self.control_fd, 256)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            os.close(self.control_fd)
            self.control_fd = -1
            return
        self._buf += data
        while b"\n" in self._buf:
            line, _, self._buf = self._buf.partition(b"\n")
            word, _, count = line.partition(b" ")
            if word == b"screen" and count.isdigit() and 0 < int(count) <= MAX_PREFIX:
                self._wanted = int(count)
        self._confirm_arrived()

    def _confirm_arrived(self) -> None:
        if self._wanted and len(self.head) >= self._wanted:
            screen, self._wanted = bytes(self.head[: self._wanted]), 0
            self._confirm(screen)

    def _confirm(self, data: bytes) -> None:
        from tcg.fingerprint import code_fingerprint
        from tcg.keyhash import KeyedHasher
        from tcg.paths import get_paths

        try:
            policy = self.policy_of()
            cache = ScreenCache(str(get_paths().cache_dir), KeyedHasher.for_install().key,
                                policy.fingerprint, code_fingerprint())
        except Exception:  # noqa: BLE001 - an optimisation only
            return
        confirm_clean(cache, policy, self.mode, data)

    def feed(self, data: bytes) -> bytes:
        if len(self.head) < MAX_PREFIX:
            self.head += data[: MAX_PREFIX - len(self.head)]
        out = self.inner.feed(data)
        self._poll()
        self._confirm_arrived()
        return out

    def flush(self) -> bytes:
        self._poll()
        return self.inner.flush()

    def release_idle(self) -> bytes:
        self._poll()
        return self.inner.release_idle()

    def idle_deadline(self) -> float | None:
        return self.inner.idle_deadline()
