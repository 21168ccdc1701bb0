"""The streaming masker: bytes in, bytes out, secrets replaced by placeholders.

One Masker per output stream; pure (no I/O, no clock except the terminal-mode
hold timer). See docs/masking.md for the guarantees and their limits.

How strict mode stays chunk-invariant (``feed(c1)+…+flush() == mask(whole)``):
detection runs on the clean view (tcg.mask.view) of a window; a view position
``p`` is *decided* once ``p + W`` bytes of immutable view exist, where
``W = max_match_len + CONTEXT (+ the base64 run bound)`` — the engine's
candidate at ``p`` looks at no byte beyond that, and at one byte before ``p``.
Output is cut at the decided point, or earlier at the start of a finding that
crosses it, so a finding is never split. The next window starts ``W`` bytes
before the cut, so every candidate that could reach past the cut is seen again
with its full left context; findings before the cut are dropped and one that
starts before it is clipped at it, exactly as the engine's own overlap
resolution does on the whole stream. tcg.mask.strict_bound moves the decided
point much closer to the end when the rules prove no candidate there can still
grow (timing only: the released content is the same).
"""

from __future__ import annotations

import functools
import re
import time

from tcg.mask.anchors import AnchorSet, anchors_for_detector
from tcg.mask.keyblock import BlockState, Colours, block_rule_ids, end_width
from tcg.mask.strict_bound import StrictBound
from tcg.mask.view import BS_REACH, OVERSIZE_RULE, SGR, View

TYPE_CHECKING = False  # typing costs ~9 ms of import before the first masked byte
if TYPE_CHECKING:
    from tcg.detect.engine import Detector
    from tcg.detect.findings import Finding
    from tcg.keyhash import KeyedHasher

MODES = ("strict", "terminal")
DEFAULT_HOLD_MS = 500
CONTEXT = 2  # the engine's right context (\b, $); left context is 1 byte
STRICT_STEP = 1024
# a larger chunk is worked through in slices of this size (see feed()); a PTY runner
# hands over up to 1 MiB at once (terminal mode, fresh 1 MiB chunks of plain text:
# 123 MB/s whole, 194 MB/s in 256 KiB slices, 167 in 64 KiB ones)
FEED_SLICE = 1 << 18
# strict mode: output paused this long with bytes held -> idle_deadline() asks for the
# closer (costlier) look of release_idle(), which lets a finished last line through
STRICT_IDLE_S = 0.05
# Terminal mode rescans on every read (keystrokes), so its left context is short:
# enough for a key name before its value (``aws_secret_access_key = ``), not
# for the rest of a >512-byte secret whose beginning was already released.
TERMINAL_CONTEXT = 512
# Terminal mode: a held tail that keeps growing as a secret candidate has its hold
# timer restarted by each byte that extends it, but is released at the latest this
# many hold periods after it was first held (a stream is never held for ever).
HOLD_CAP_PERIODS = 60
MASKED_CATEGORIES = {"secret": "SECRET", "pii": "PII"}
_NO_END = re.compile(rb"(?!)")


def placeholder(category: str, rule_id: str, h8: str) -> bytes:
    """``<SECRET:rule-id:h8>`` / ``<PII:type:h8>``."""
    tag = MASKED_CATEGORIES.get(category, "SECRET")
    return f"<{tag}:{rule_id}:{h8}>".encode("ascii")


class Masker:
    """Streaming masker. ``mode`` is "strict" (pipes, agents) or "terminal" (a human's TTY)."""

    def __init__(self, detector: Detector, hasher: KeyedHasher, mode: str = "strict",
                 hold_ms: int = DEFAULT_HOLD_MS, *, decode: bool = True,
                 cut_off_tails: bool = False):
        if mode not in MODES:
            raise ValueError(f"unknown masking mode {mode!r} (strict or terminal)")
        self.detector = detector
        self.hasher = hasher
        self.mode = mode
        self.hold_ms = max(0, int(hold_ms))
        self.decode = decode
        #: strict: the stream is a live command's output, which a kill can end mid-token
        #: (flush); a document (a file, a hook's or an MCP reply) ends where it ends
        self.cut_off_tails = cut_off_tails
        look = detector.max_match_len
        self._decode_run = 0
        if decode:
            from tcg.detect.encoded import MAX_RUN

            look = max(look, MAX_RUN + 2)
            self._decode_run = MAX_RUN + 2
        #: view bytes held back beyond the decided point (the hold-back bound)
        self.window = look + CONTEXT
        self._ctx = look + CONTEXT + 1
        # strict mode rescans its window only after this many newly decided bytes
        self._step = STRICT_STEP
        self._v = View()
        self._cut = 0  # view offset: everything before it is emitted (or swallowed)
        self._emitted = 0  # raw offset up to which output has been produced
        self._block: BlockState | None = None
        self._idle_blocks: set[int] = set()  # terminal: view offsets of blocks closed on idle
        # rules that open a key block; their END patterns compile when a block opens
        # (~15 ms of a masking process's start that output without a PEM key never needs)
        self._block_ids = block_rule_ids(detector)
        self._block_res: dict[str, re.Pattern[bytes]] | None = None
        self._end_w = 0
        self._anchors: AnchorSet | None = None
        self._bound: StrictBound | None = None
        self._burst_end = True
        self._held_since: float | None = None
        self._held_first: float | None = None  # terminal: when the current hold began
        #: terminal: view offset of a tail released by the idle timer while it was a
        #: secret candidate; bytes that still continue that candidate are held
        self._cont: int | None = None
        self._strict_idle_at: float | None = None
        self._fed: tuple[int, bytes] | None = None  # (raw offset, chunk) during _feed
        #: larger chunks are worked through in slices of this size (see feed())
        self.slice_size = FEED_SLICE
        self.count = 0  # spans masked so far (for events: counts, never values)
        self.rules_seen: set[str] = set()

    # ------------------------------------------------------------ public API

    def feed(self, data: bytes) -> bytes:
        """Mask the next chunk; returns what can be released now."""
        if not data:
            return b""
        out: list[bytes] = []
        step = self.slice_size
        if len(data) > step:
            # Slices keep every working buffer small: buffers of a megabyte and more
            # come fresh from mmap each time, and their page faults cost more than the
            # scan (a PTY runner hands over up to 1 MiB at once). Strict output does
            # not depend on how the stream is cut. Terminal mode releases a slice only
            # up to ``window`` view bytes below its end (the rest of the chunk is
            # already here, so holding it costs no latency): every finding starting
            # below that point, with its right context, lies inside the slice, so the
            # output is the one of the whole chunk fed at once.
            last = len(data) - step
            with memoryview(data) as mv:
                for i in range(0, len(data), step):
                    self._feed(mv[i : i + step].tobytes(), out, inner=i < last)
        else:
            self._feed(bytes(data), out)
        self._update_hold()
        return b"".join(out)

    def _feed(self, data: bytes, out: list[bytes], inner: bool = False) -> None:
        self._burst_end = len(data) >= 64 or data.endswith(b"\n")
        # released exactly as it came (the common case): passed on without a copy
        self._fed = (self._v.raw_end, data)
        self._v.append(data)
        self._advance(out, final=False, inner=inner)
        self._fed = None

    def flush(self) -> bytes:
        """End of stream: release everything (an open key block is masked to the end).
        Strict mode with ``cut_off_tails`` (a live command's output): a tail that began
        a secret and was cut off before its rule could match (a killed ``printf``) is
        replaced by a ``partial`` placeholder, not released raw (tcg.mask.tail)."""
        v = self._v
        v.finish()
        out: list[bytes] = []
        stop = None
        if self.cut_off_tails and self.mode == "strict" and self._block is None \
                and self._cut < v.view_end:
            from tcg.mask.tail import tail_check

            base = max(v.view_base, self._cut - self._ctx)
            s = tail_check(self.detector).start(v.view_bytes(base, v.view_end), self._cut - base)
            stop = None if s is None else base + s
        self._advance(out, final=True, stop=stop)
        if stop is not None and self._cut < v.view_end:
            from tcg.mask.tail import PARTIAL_RULE

            self._emit(out, [_partial(self._cut, v.view_end, PARTIAL_RULE)], v.view_end)
        self._held_since = None
        return b"".join(out)

    def handover(self) -> tuple[bytes, bytes] | None:
        """For a successor masker (a policy change mid-stream): the released text of
        the last window (clean view bytes, for context) and the raw bytes still
        held; None inside a key block (then flush() masks it to the end)."""
        if self._block is not None:
            return None
        v = self._v
        ctx = v.view_bytes(max(v.view_base, self._cut - self.window), self._cut)
        return ctx, v.raw_bytes(self._emitted, v.raw_end)

    def prime(self, context: bytes) -> None:
        """Text the stream showed before this masker took over (a predecessor's
        handover()): detection sees it as left context, it is never output, and in
        terminal mode bytes that continue a secret candidate begun in it are held."""
        if not context:
            return
        v = self._v
        v.append(context)
        v.finish()
        self._cut = v.view_end
        self._emitted = v.raw_end
        v.floor = self._cut
        if self.mode == "terminal":
            self._cont = max(v.view_base, self._cut - self.window)
        self._trim()

    def release_idle(self) -> bytes:
        """Called when idle_deadline() has passed. Terminal mode: release what is held.
        Strict mode: release what a closer look proves decided (strict_bound's
        ``precise`` test), e.g. a finished last line; never a byte that could still
        be part of a match, so the output is the same as without the pause."""
        if self.mode != "terminal":
            self._strict_idle_at = None
            if self._block is not None or self._emitted >= self._v.raw_end:
                return b""
            out: list[bytes] = []
            self._advance(out, final=False, precise=True)
            return b"".join(out)
        # An escape cut short stays pending (a terminal keeps its parser state too): its
        # remnant turned into text would glue onto what the next write brings.
        self._held_since = None
        if self._block is not None and self._block.rule_id == OVERSIZE_RULE:
            return b""  # a clipboard payload is replaced whole: the terminal waits for its end
        out = []
        if self._block is not None:
            self._idle_blocks.add(self._block.start)
            self._close_block(out, self._v.view_end)
        elif self._cont is None and self._cut < self._v.view_end:
            self._cont = self._cut  # the released tail may be a secret's start: watch it
        self._advance(out, final=True)
        self._held_since = self._held_first = None
        return b"".join(out)

    def idle_deadline(self) -> float | None:
        """time.monotonic() at which release_idle() should run; None if nothing is held
        (strict mode: nothing that a pause could release)."""
        if self.mode != "terminal":
            return self._strict_idle_at
        if self._held_since is None or self._held_first is None:
            return None
        hold = self.hold_ms / 1000.0
        return min(self._held_since + hold, self._held_first + HOLD_CAP_PERIODS * hold)

    # ------------------------------------------------------------ internals

    def _update_hold(self) -> None:
        held = self._emitted < self._v.raw_end
        if self.mode != "terminal":
            # strict: once output pauses with bytes held, take the closer look once
            self._strict_idle_at = (time.monotonic() + STRICT_IDLE_S
                                    if held and self._block is None else None)
        elif not held:
            self._held_since = self._held_first = None
        elif self._held_since is None:
            self._held_since = self._held_first = time.monotonic()
        elif (self._anchor_end()
              or self._candidate(self._cut if self._cont is None else self._cont) is not None):
            # a key written a byte at a time: each byte that extends the candidate (or
            # its anchor, AKI -> AKIA) restarts the hold (HOLD_CAP_PERIODS bounds it all)
            self._held_since = time.monotonic()

    def _anchor_end(self) -> bool:
        from tcg.mask.tail import tail_check

        v = self._v
        check = tail_check(self.detector)
        view = v.view_bytes(max(v.view_base, v.view_end - check.longest), v.view_end)
        return check.anchor_end(view, v.view_end - self._cut)

    def _candidate(self, near: int) -> int | None:
        """Terminal: view offset of a secret candidate (a masked rule's literal start,
        then an unbroken token still a prefix of its match) beginning at most an
        anchor's length before ``near`` and running to the end (tcg.mask.tail)."""
        from tcg.mask.tail import tail_check

        v = self._v
        check = tail_check(self.detector)
        base = max(v.view_base, near - check.longest)
        if base >= v.view_end:
            return None
        s = check.start(v.view_bytes(base, v.view_end), 0)
        return None if s is None else base + s

    def _advance(self, out: list[bytes], final: bool, precise: bool = False,
                 inner: bool = False, stop: int | None = None) -> None:
        v = self._v
        terminal = self.mode == "terminal" and not final
        # terminal, a slice inside a larger chunk: release nothing the rest can change
        limit = v.view_end - self.window if terminal and inner else None
        while True:
            if self._block is not None:
                if not self._block_step(out, final):
                    break
                continue
            # strict: released up to the decided point; terminal: unless an anchor holds it
            if final or terminal:
                decided = v.view_end if stop is None else stop
            elif precise or self._burst_end or self._plain_decided() - self._cut >= self._step:
                decided = self._decided(precise)
            else:
                break  # a tiny write mid-line: wait for more before rescanning
            if not final and decided - self._cut < (1 if terminal or precise else self._step // 8):
                if terminal and v.parsed > self._emitted and v.view_end == self._cut:
                    self._emit(out, [], self._cut)  # escapes only (vim redraws): pass them on
                break
            ws = max(v.view_base, self._cut - (TERMINAL_CONTEXT if terminal else self._ctx))
            window = v.view_bytes(ws, v.view_end)
            classes = v.class_bytes(ws, v.view_end) if self.decode else None
            found = [
                _shift(f, f.start + ws, f.end + ws)
                for f in (self.detector.find_bytes(window, decode=self.decode, classes=classes)
                          if window else [])
                if f.end + ws > self._cut
                # terminal: a block already cut short on idle is not reopened
                and not (terminal and f.start + ws in self._idle_blocks)
            ]
            if v.forced:
                found = self._with_forced(found)
            cut_to = decided
            for f in found if stop is not None else ():  # a whole match is no cut-off tail
                if f.start <= cut_to < f.end:
                    cut_to = f.end
            block: Finding | None = None
            if terminal:
                cut_to = self._terminal_cut(window, ws, found, cut_to)
                for f in found:  # a key block opens as soon as its BEGIN is seen
                    if f.rule_id in self._block_ids and f.end >= v.view_end:
                        if limit is None or f.start <= limit:
                            block = f
                            cut_to = max(f.start, self._cut)
                        break
                if limit is not None and cut_to > limit:
                    cut_to = max(limit, self._cut)
            spans: list[Finding] = []
            whole: list[int] = []
            for f in found:
                s = max(f.start, self._cut)
                if s >= cut_to:
                    break
                if f.rule_id in self._block_ids and f.end >= v.view_end and not final:
                    block = f  # BEGIN seen, END not yet: stream the block
                    cut_to = s
                    break
                if f.end > cut_to:
                    cut_to = s  # never split a finding: hold it whole
                    break
                spans.append(_shift(f, s, f.end))
                # terminal: a finding whose start the idle timer released gets the
                # placeholder of its whole value (the same as the key seen whole)
                whole.append(f.start if self.mode == "terminal" and f.start >= v.view_base else s)
            self._emit(out, spans, cut_to, whole)
            if block is not None:
                self._open_block(block)
                continue
            break
        self._trim()

    def _with_forced(self, found: list[Finding]) -> list[Finding]:
        """Add the clipboard payloads too long to check (the view's ``forced`` spans) as
        findings of OVERSIZE_RULE, in place of whatever was found inside them."""
        from tcg.detect.findings import Finding

        v = self._v
        spans = []
        for s, e in list(v.forced.items()):
            if 0 <= e <= self._cut:
                del v.forced[s]
            elif e < 0 or e > s:
                spans.append((max(s, self._cut), v.view_end if e < 0 else e))
        if not spans:
            return found
        keep = [f for f in found if all(f.end <= s or f.start >= e for s, e in spans)]
        keep += [Finding(s, e, OVERSIZE_RULE, "secret") for s, e in spans]
        keep.sort(key=lambda f: f.start)
        return keep

    def _plain_decided(self) -> int:
        return self._v.stable_end() - self.window

    def _decided(self, precise: bool = False) -> int:
        """Strict: the rule-aware bound (tcg.mask.strict_bound), never below the plain one."""
        v = self._v
        top = v.stable_end()
        plain = top - self.window
        if self._bound is None:
            self._bound = _bound_for(self.detector, self._decode_run)
        rs = max(v.view_base, plain, self._cut)
        if rs >= top:
            return plain
        h = rs + self._bound.hold_from(v.view_bytes(rs, v.view_end), precise=precise)
        return max(plain, min(h, top))

    def _terminal_cut(self, window: bytes, ws: int, found: list[Finding], cut_to: int) -> int:
        """Terminal mode: hold only a tail that could begin a secret (or a finding at the end)."""
        v = self._v
        if self._anchors is None:
            self._anchors = _anchors_for(self.detector)
        lo = max(self._cut, v.view_end - self.window) - ws
        h = self._anchors.hold_from(window, max(lo, 0))
        if h is not None:
            cut_to = min(cut_to, h + ws)
        if self._cont is not None:
            # a candidate whose start the idle timer released: hold what continues it
            if self._cont >= v.view_base and self._candidate(self._cont) is not None:
                cut_to = min(cut_to, self._cut)
            else:
                self._cont = None
        for f in found:  # a finding touching the end may still grow
            if f.end + CONTEXT >= v.view_end and f.start < cut_to:
                cut_to = max(f.start, self._cut)
        return cut_to

    def _emit(self, out: list[bytes], spans: list[Finding], cut_to: int,
              whole: list[int] | None = None) -> None:
        v = self._v
        for i, f in enumerate(spans):
            if f.category not in MASKED_CATEGORIES:
                continue  # references name a variable/file; there is no value to hide
            rs = v.rawpos(f.start)
            re_ = v.rawpos(f.end - 1) + 1
            out.append(v.raw_bytes(self._emitted, rs))
            value = v.view_bytes(f.start if whole is None else whole[i], f.end)
            if f.rule_id in self._block_ids:  # same hash as a streamed block
                import hashlib  # OpenSSL's: loaded with the first key block, not at start

                value = hashlib.sha256(value).digest()
            out.append(placeholder(f.category, f.rule_id, self.hasher.h8(value)))
            if f.rule_id in self._block_ids:  # as a streamed block would (Colours)
                colours = Colours()
                colours.add(v.raw_bytes(rs, re_))
                out.append(colours.value())
            else:
                out.append(b"".join(SGR.findall(v.raw_bytes(rs, re_))))
            self._emitted = re_
            self.count += 1
            self.rules_seen.add(f.rule_id)
        target = v.rawpos(cut_to)
        if target > self._emitted:
            fed = self._fed
            if fed is not None and fed[0] == self._emitted and target - fed[0] == len(fed[1]):
                out.append(fed[1])
            else:
                out.append(v.raw_bytes(self._emitted, target))
            self._emitted = target
        self._cut = max(self._cut, cut_to)
        v.floor = self._cut

    # ------------------------------------------------------------ key blocks

    @property
    def _block_ends(self) -> dict[str, re.Pattern[bytes]]:
        """Rule id -> the END line's pattern, compiled on the first block."""
        return self._block_res if self._block_res is not None else self._compile_block_ends()

    @property
    def _end_width(self) -> int:
        """The longest END line (bytes): how far back a split END is searched."""
        if self._block_res is None:
            self._compile_block_ends()
        return self._end_w

    def _compile_block_ends(self) -> dict[str, re.Pattern[bytes]]:
        res = dict(getattr(self.detector, "block_rules", {}) or {})
        self._end_w = max((end_width(p) for p in res.values()), default=0)
        self._block_res = res
        return res

    def _open_block(self, f: Finding) -> None:
        import hashlib

        s = max(f.start, self._cut)
        end_re = self._block_ends.get(f.rule_id) or _NO_END  # OVERSIZE_RULE: the view ends it
        self._block = BlockState(f.rule_id, f.category, end_re, s, s, s,
                             hashlib.sha256())

    def _block_step(self, out: list[bytes], final: bool) -> bool:
        """Advance inside a key block; True if the block closed (continue scanning)."""
        b = self._block
        assert b is not None
        v = self._v
        if b.rule_id == OVERSIZE_RULE:
            return self._oversize_step(out, final)
        limit = v.view_end if final else min(v.view_end, v.hwm - BS_REACH)
        start = max(b.search_from, v.view_base)
        m = b.end_re.search(v.view_bytes(start, limit)) if limit > start else None
        if m is not None:
            self._close_block(out, start + m.end())
            return True
        if final:
            self._close_block(out, v.view_end)  # no END line: masked to the end
            return False
        b.search_from = max(b.search_from, limit - self._end_width - CONTEXT)
        self._forget(b.search_from)
        return False

    def _oversize_step(self, out: list[bytes], final: bool) -> bool:
        """A clipboard payload too long to check: replaced up to its end (the view
        records it), which may be any number of appends later."""
        b = self._block
        assert b is not None
        v = self._v
        for s, e in list(v.forced.items()):
            if s <= b.start and e >= 0:
                del v.forced[s]
                self._close_block(out, e)
                return True
        if final:
            self._close_block(out, v.view_end)
            return False
        self._forget(v.view_end)
        return False

    def _forget(self, upto: int) -> None:
        """Hash and forget a block's view below ``upto`` (bounded memory)."""
        b = self._block
        assert b is not None
        v = self._v
        if upto > b.hashed:
            b.digest.update(v.view_bytes(b.hashed, upto))
            b.hashed = upto
            self._cut = upto
            v.floor = upto
            raw_upto = v.rawpos(upto)
            if raw_upto > self._emitted:
                b.sgr.add(v.raw_bytes(self._emitted, raw_upto))
                self._emitted = raw_upto

    def _close_block(self, out: list[bytes], end: int) -> None:
        b = self._block
        assert b is not None
        v = self._v
        if end > b.hashed:
            b.digest.update(v.view_bytes(b.hashed, end))
        h8 = self.hasher.h8(b.digest.digest())
        out.append(placeholder(b.category, b.rule_id, h8))
        raw_end = v.rawpos(end - 1) + 1 if end > b.start else self._emitted
        if raw_end > self._emitted:
            b.sgr.add(v.raw_bytes(self._emitted, raw_end))
            self._emitted = raw_end
        out.append(b.sgr.value())
        self._cut = max(self._cut, end)
        v.floor = self._cut
        self.count += 1
        self.rules_seen.add(b.rule_id)
        self._block = None

    def _trim(self) -> None:
        v = self._v
        v.trim(max(v.view_base, self._cut - self._ctx), self._emitted)


@functools.lru_cache(maxsize=8)
def _bound_for(detector: Detector, decode_run: int) -> StrictBound:
    return StrictBound.for_detector(detector, decode_run)


@functools.lru_cache(maxsize=8)
def _anchors_for(detector: Detector) -> AnchorSet:
    return anchors_for_detector(detector)


def _partial(s: int, e: int, rule_id: str) -> Finding:
    from tcg.detect.findings import Finding

    return Finding(s, e, rule_id, "secret", "")


def _shift(f: Finding, s: int, e: int) -> Finding:
    from tcg.detect.findings import Finding

    return Finding(s, e, f.rule_id, f.category, getattr(f, "encoding", ""))
