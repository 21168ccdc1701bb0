"""The "clean view" of terminal bytes that detection runs on.

What a terminal *shows* is not the byte stream: ``grep --color`` and ``ls
--color`` put CSI sequences inside words, ``less``/``man`` overstrike with
backspace, and NUL/BEL and friends are invisible. A secret split by any of
these is still on screen, so the detector must see the bytes joined. The view
is built incrementally and deterministically (the same stream gives the same
view whatever the read sizes), and every view byte remembers its raw offset so
a finding can be mapped back and the raw span, escapes included, replaced.

View rules:
- CSI (``ESC [ … final``) and short escapes (``ESC ( B``, ``ESC 7``) vanish;
- well-formed string sequences (OSC ``ESC ] Ps ;``, DCS, SOS, PM, APC, with a
  printable payload ended by BEL or ST) keep their payload in the view between
  two ``\\n`` separators (a token in a hyperlink URL or a window title is still
  detected, but does not glue onto the visible text); a malformed one loses
  only its ESC, so its text is scanned as ordinary text;
- C0 controls other than TAB, LF, VT, FF, CR vanish; ESC without a valid
  sequence vanishes; DEL vanishes;
- BS removes the previous view character (as the screen does) unless that is
  a newline, already emitted, or more than BS_REACH bytes below the highest
  view length reached so far: that cap keeps everything below
  ``hwm - BS_REACH`` immutable, and so is everything up to the last line break
  (``stable_end()``), which is what makes streaming decisions final.
- An incomplete escape at the end of the data is *pending*: it is not in the
  view and its bytes are not released until it completes (or the stream ends,
  or it exceeds its cap, and then its ESC is simply dropped).
"""

from __future__ import annotations

import bisect
import re
from itertools import accumulate, compress

from tcg.detect.encoded import CLASSES

CSI_MAX = 64  # parameter + intermediate bytes of one CSI
STRING_MAX = 4096  # payload bytes of one OSC/DCS/... sequence
BS_REACH = 16

_SPECIAL_BYTES = bytes([*range(0x00, 0x09), *range(0x0E, 0x20), 0x7F])
# translate() maps every special byte to 0 and every other byte to 1: then memchr finds them
_TO_ZERO = bytes(0 if b in _SPECIAL_BYTES else 1 for b in range(256))
# The view's class map (``View.cls``): the base64 classes the detector's encoded pass
# uses (tcg.detect.encoded.CLASSES: "A" alphabet, "=" padding, " " anything else),
# with special bytes as 0. The view never holds a special byte, so its class map is
# exactly the encoded pass's map of the view, computed once by the translate that
# also looks for special bytes.
_CLS = bytes(0 if b in _SPECIAL_BYTES else c for b, c in enumerate(CLASSES))
_CSI = re.compile(rb"\x1b\[[\x30-\x3f]{0,%d}[\x20-\x2f]{0,8}[\x40-\x7e]" % CSI_MAX)
_CSI_PREFIX = re.compile(rb"\x1b\[[\x30-\x3f]{0,%d}[\x20-\x2f]{0,8}\Z" % CSI_MAX)
_ESC_OTHER = re.compile(rb"\x1b[\x20-\x2f]{0,4}[\x30-\x7e]")
_ESC_OTHER_PREFIX = re.compile(rb"\x1b[\x20-\x2f]{0,4}\Z")
_STRING_INTRO = frozenset(b"]PX^_")
_STRING_END = re.compile(rb"[\x00-\x1f\x7f]")  # BEL/ESC end it; any other control = malformed
_OSC_HEAD = re.compile(rb"\x1b\][0-9]{1,4}(?:;|\x07|\x1b)")
_CSI_SPLIT = re.compile(rb"(\x1b\[[\x30-\x3f]{0,%d}[\x20-\x2f]{0,8}[\x40-\x7e])" % CSI_MAX)
SGR = re.compile(rb"\x1b\[[0-9;:]{0,%d}m" % CSI_MAX)


class View:
    """Raw stream buffer + its clean view, with a view->raw offset map.

    All offsets in the public methods are absolute stream offsets.
    """

    def __init__(self) -> None:
        self.raw = bytearray()
        self.raw_base = 0  # absolute offset of raw[0]
        self.parsed = 0  # absolute raw offset up to which raw has been parsed
        self.view = bytearray()
        self.cls = bytearray()  # class map of view (same offsets), see _CLS
        self.view_base = 0  # absolute offset of view[0]
        self.hwm = 0  # highest view end ever reached
        self._low = 0  # lowest view length during one _parse (for the class map)
        self.floor = 0  # view bytes below this are emitted: BS may not remove them
        # contiguous runs: view [vs[i], next vs) <-> raw [rs[i], ...)
        self._vs: list[int] = []
        self._rs: list[int] = []

    # ------------------------------------------------------------ properties

    @property
    def view_end(self) -> int:
        return self.view_base + len(self.view)

    @property
    def raw_end(self) -> int:
        return self.raw_base + len(self.raw)

    def stable_end(self) -> int:
        """View offset below which the view can no longer change: a backspace reaches
        back at most BS_REACH below the highest end, and never removes a line break
        (LF or CR), so everything up to the last one is final as well."""
        view = self.view
        nl = max(view.rfind(b"\n"), view.rfind(b"\r"))
        return min(self.view_base + len(view), max(self.hwm - BS_REACH, self.view_base + nl + 1))

    def pending(self) -> bool:
        """True when raw bytes are waiting for an escape sequence to complete."""
        return self.parsed < self.raw_end

    # ------------------------------------------------------------ building

    def append(self, data: bytes, final: bool = False) -> None:
        pending = self.parsed < self.raw_base + len(self.raw)
        self.raw += data
        if not pending and not final:
            # The common cases, nothing pending: the new region is ``data`` itself.
            if data.find(b"\x1b") < 0:
                marks = data.translate(_CLS)
                if marks.find(0) < 0:  # no special byte at all
                    self._add_plain(data, marks)
                    return
            elif self._only_csi(data, len(self.raw) - len(data)):
                return
        self._parse(final)

    def _add_plain(self, data: bytes, marks: bytes) -> None:
        """Append ``data`` (the unparsed end of raw, no special bytes) to the view."""
        ra = self.parsed
        vs = self._vs
        ve = self.view_base + len(self.view)
        if not vs or self._rs[-1] + (ve - vs[-1]) != ra:
            vs.append(ve)
            self._rs.append(ra)
        self.view += data
        self.cls += marks
        ve += len(data)
        if ve > self.hwm:
            self.hwm = ve
        self.parsed = ra + len(data)

    def finish(self) -> None:
        """End of stream (or forced release): resolve a pending escape."""
        self._parse(final=True)

    def _add(self, a: int, b: int) -> None:
        """Append raw[a:b] (relative offsets) to the view."""
        if a >= b:
            return
        ra = self.raw_base + a
        view = self.view
        ve = self.view_base + len(view)
        vs = self._vs
        if not vs or self._rs[-1] + (ve - vs[-1]) != ra:
            vs.append(ve)
            self._rs.append(ra)
        view += self.raw[a:b]
        ve += b - a
        if ve > self.hwm:
            self.hwm = ve

    def _add_sep(self, rel: int) -> None:
        self._vs.append(self.view_end)
        self._rs.append(self.raw_base + rel)
        self.view.append(0x0A)
        if self.view_end > self.hwm:
            self.hwm = self.view_end

    def _backspace(self) -> None:
        for _ in range(4):  # one character: up to 3 continuation bytes + lead
            ve = self.view_end
            if ve <= max(self.view_base, self.floor) or ve <= self.hwm - BS_REACH:
                return
            last = self.view[-1]
            if last in (0x0A, 0x0D):
                return
            self.view.pop()
            if len(self.view) < self._low:
                self._low = len(self.view)
            if self._vs[-1] >= self.view_end:
                self._vs.pop()
                self._rs.pop()
            if not 0x80 <= last < 0xC0:
                return

    def _parse(self, final: bool) -> None:
        raw = self.raw
        n = len(raw)
        pos = self.parsed - self.raw_base
        base = pos
        region = bytes(raw[pos:])
        marks = region.translate(_TO_ZERO)
        if marks.find(0) >= 0 and region.find(b"\x1b") >= 0 and self._only_csi(region, pos):
            return
        self._low = low = len(self.view)
        find = marks.find
        csi = _CSI.match
        add = self._add
        while pos < n:
            i = find(b"\x00", pos - base)
            if i < 0:
                add(pos, n)
                pos = n
                break
            i += base
            if i > pos:
                add(pos, i)
            b = raw[i]
            if b == 0x1B:
                c = csi(raw, i)  # the common case (colours): one regex, no dispatch
                if c is not None:
                    pos = c.end()
                    continue
                nxt = self._escape(i, final)
                if nxt < 0:
                    pos = i  # pending
                    break
                pos = nxt
            elif b == 0x08:
                self._backspace()
                pos = i + 1
            else:
                pos = i + 1
        self.parsed = self.raw_base + pos
        # the class map of what changed (a backspace may have removed bytes below ``low``)
        low = min(low, self._low)
        del self.cls[low:]
        self.cls += self.view[low:].translate(_CLS)

    def _only_csi(self, region: bytes, pos: int) -> bool:
        """Fast path for coloured output: every special byte starts a complete CSI.

        One C-level split removes the CSIs; one translate of what is left checks
        that nothing special (a stray ESC, a backspace) remains and gives its
        class map; the offset map comes from the piece lengths (``accumulate``)."""
        pieces = _CSI_SPLIT.split(region)
        texts = pieces[0::2]
        joined = b"".join(texts)
        marks = joined.translate(_CLS)
        if marks.find(0) >= 0:
            return False  # some other special byte: the general parser decides
        raw_offs = list(accumulate(map(len, pieces), initial=self.raw_base + pos))
        lens = list(map(len, texts))
        view_offs = list(accumulate(lens, initial=self.view_base + len(self.view)))
        # one run per non-empty text piece
        self._vs.extend(compress(view_offs, lens))
        self._rs.extend(compress(raw_offs[0::2], lens))
        self.view += joined
        self.cls += marks
        ve = view_offs[-1]
        if ve > self.hwm:
            self.hwm = ve
        self.parsed = self.raw_base + pos + len(region)
        return True

    def _escape(self, i: int, final: bool) -> int:
        """Consume the escape at raw[i]; return the next offset, or -1 if pending."""
        raw = self.raw
        n = len(raw)
        if i + 1 >= n:
            return i + 1 if final else -1
        c = raw[i + 1]
        if c == 0x5B:  # '['
            m = _CSI.match(raw, i)
            if m:
                return m.end()
            if not final and _CSI_PREFIX.match(raw, i):
                return -1
            return i + 1
        if c in _STRING_INTRO:
            limit = min(n, i + 2 + STRING_MAX)
            m = _STRING_END.search(raw, i + 2, limit)
            if m is None:
                if not final and limit == n and n < i + 2 + STRING_MAX:
                    return -1
                return i + 1
            j = m.start()
            if raw[j] not in (0x07, 0x1B) or (c == 0x5D and not _OSC_HEAD.match(raw, i)):
                return i + 1  # not a well-formed string sequence: its text stays visible
            if raw[j] == 0x1B:
                if j + 1 >= n and not final:
                    return -1
                end = j + 2 if j + 1 < n and raw[j + 1] == 0x5C else j
            else:
                end = j + 1
            self._add_sep(i)
            self._add(i + 2, j)
            self._add_sep(j)
            return end
        m = _ESC_OTHER.match(raw, i)
        if m:
            return m.end()
        if not final and _ESC_OTHER_PREFIX.match(raw, i):
            return -1
        return i + 1

    # ------------------------------------------------------------ mapping

    def rawpos(self, v: int) -> int:
        """Raw offset of view byte ``v`` (``v == view_end`` maps to ``parsed``)."""
        if v >= self.view_end:
            return self.parsed
        k = bisect.bisect_right(self._vs, v) - 1
        return self._rs[k] + (v - self._vs[k])

    # (one copy each: slicing a bytearray and then bytes() of it would copy twice)

    def view_bytes(self, a: int, b: int) -> bytes:
        with memoryview(self.view) as mv:
            return mv[a - self.view_base : b - self.view_base].tobytes()

    def class_bytes(self, a: int, b: int) -> bytes:
        """The class map (tcg.detect.encoded.CLASSES) of ``view_bytes(a, b)``."""
        with memoryview(self.cls) as mv:
            return mv[a - self.view_base : b - self.view_base].tobytes()

    def raw_bytes(self, a: int, b: int) -> bytes:
        with memoryview(self.raw) as mv:
            return mv[a - self.raw_base : b - self.raw_base].tobytes()

    # ------------------------------------------------------------ trimming

    def trim(self, view_keep: int, raw_keep: int) -> None:
        """Forget view bytes below ``view_keep`` and raw bytes below ``raw_keep``."""
        cut = view_keep - self.view_base
        if cut > 0:
            del self.view[:cut]
            del self.cls[:cut]
            self.view_base = view_keep
            k = bisect.bisect_right(self._vs, view_keep) - 1
            if k > 0:
                del self._vs[:k]
                del self._rs[:k]
            if self._vs and self._vs[0] < view_keep:
                self._rs[0] += view_keep - self._vs[0]
                self._vs[0] = view_keep
        rcut = raw_keep - self.raw_base
        if rcut > 0:
            del self.raw[:rcut]
            self.raw_base = raw_keep
