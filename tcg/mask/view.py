"""The "clean view" of terminal bytes that detection runs on.

What a terminal *shows* is not the byte stream: ``grep --color`` and ``ls
--color`` put CSI sequences inside words, ``less``/``man`` overstrike with
backspace, and NUL/BEL and friends are invisible. A secret split by any of
these is still on screen, so the detector must see the bytes joined. The view
is built incrementally and deterministically (the same stream gives the same
view whatever the read sizes), and every view byte remembers its raw offset so
a finding can be mapped back and the raw span, escapes included, replaced.

View rules (escapes are parsed as a VT500-style terminal parses them, so no
remnant of a sequence ever becomes text glued onto a token):
- SGR (``ESC [ … m``), EL (``ESC [ K``) and short escapes that leave the cursor
  where it is (``ESC ( B``, ``ESC 7``) vanish; every other CSI and the short
  escapes that move the cursor leave a boundary (``\\n``): text at different
  screen positions never joins into one word;
- a CSI runs to its final byte however long; C0 controls inside it are executed
  (TAB, LF, CR, BS) or ignored; a malformed one leaves a boundary; CAN/SUB
  cancel it, and what was meant as its rest is text between two boundaries;
- string sequences (OSC, DCS, SOS, PM, APC, ended by BEL or ST) keep their
  payload, minus the controls in it, between two boundaries (a token in a
  hyperlink URL or a window title is detected, but does not glue onto the
  visible text); a payload over STRING_MAX is streamed into the view the same
  way, and an OSC 52 (clipboard) one is recorded in ``forced`` so the masker
  replaces it whole (it is too long for the decoder to check);
- C0 controls other than TAB, LF, VT, FF, CR vanish; DEL vanishes; so do the
  invisible format characters U+200B-U+200D, U+2060, U+FEFF, U+00AD;
- BS removes the previous view character (as the screen does) unless that is
  a newline, already emitted, or more than BS_REACH bytes below the highest
  view length reached so far: that cap keeps everything below
  ``hwm - BS_REACH`` immutable, and so is everything up to the last line break
  (``stable_end()``), which is what makes streaming decisions final.
- An incomplete escape at the end of the data is *pending*: it is not in the
  view and its bytes are not released until it completes or the stream ends
  (an idle release keeps it pending, as a terminal keeps its parser state); a
  sequence longer than its cap is consumed and goes on in a parser state
  (``_mode``) carried to the next append.
"""

from __future__ import annotations

import bisect
import re
from itertools import accumulate, compress

from tcg.detect.encoded import CLASSES

CSI_MAX = 64  # parameter + intermediate bytes of one CSI
STRING_MAX = 4096  # payload bytes of one OSC/DCS/... sequence
BS_REACH = 16

# the lead bytes of the invisible format characters a token may hide behind (_FORMAT)
_FORMAT_LEADS = b"\xc2\xe2\xef"
_SPECIAL_BYTES = bytes([*range(0x00, 0x09), *range(0x0E, 0x20), 0x7F]) + _FORMAT_LEADS
# translate() maps every special byte to 0 and every other byte to 1: then memchr finds them
_TO_ZERO = bytes(0 if b in _SPECIAL_BYTES else 1 for b in range(256))
# zero-width space / non-joiner / joiner, word joiner, BOM (ZWNBSP), soft hyphen: not
# shown, so they vanish from the view (``ghp_Zq8`` U+200B ``Rt5…`` is one token on screen)
_FORMAT = re.compile(rb"\xe2\x80[\x8b-\x8d]|\xe2\x81\xa0|\xef\xbb\xbf|\xc2\xad")
_FORMAT_PREFIX = re.compile(rb"(?:\xe2[\x80\x81]?|\xef\xbb?|\xc2)\Z")
# Any byte the view drops or rewrites (controls, escapes, CR, format characters): a
# text holding none reads the same raw and in the view, so a plain engine scan of it
# finds what the masker would (the MCP proxy's per-string fast path relies on it).
VIEW_REWRITES = re.compile(rb"[\x00-\x08\x0e-\x1f\x7f\r]|" + _FORMAT.pattern)
# The view's class map (``View.cls``): the base64 classes the detector's encoded pass
# uses (tcg.detect.encoded.CLASSES: "A" alphabet, "=" padding, " " anything else),
# with special bytes as 0. The view never holds a special byte, so its class map is
# exactly the encoded pass's map of the view, computed once by the translate that
# also looks for special bytes.
_CLS = bytes(0 if b in _SPECIAL_BYTES else c for b, c in enumerate(CLASSES))
# what the view may hold of the special bytes: a format character's lead byte that
# begins no format character; the class map of the view is taken with this table
_CLS_VIEW = bytes(CLASSES[b] if b in _FORMAT_LEADS else c for b, c in enumerate(_CLS))
_CSI = re.compile(rb"\x1b\[[\x30-\x3f]{0,%d}[\x20-\x2f]{0,8}[\x40-\x7e]" % CSI_MAX)
_CSI_PREFIX = re.compile(rb"\x1b\[[\x30-\x3f]{0,%d}[\x20-\x2f]{0,8}\Z" % CSI_MAX)
_ESC_OTHER = re.compile(rb"\x1b[\x20-\x2f]{0,4}[\x30-\x7e]")
_ESC_OTHER_PREFIX = re.compile(rb"\x1b[\x20-\x2f]{0,4}\Z")
_STRING_INTRO = frozenset(b"]PX^_")
# what ends a string sequence: BEL or ST (ESC \\), CAN/SUB abort it, ESC starts another
_STRING_STOP = re.compile(rb"[\x07\x18\x1a\x1b]")
_CONTROLS = re.compile(rb"[\x00-\x1f\x7f]+")
_OSC52 = re.compile(rb"\x1b\]52;")
#: rule id of the placeholder that replaces a clipboard (OSC 52) payload too long to check
OVERSIZE_RULE = "clipboard-oversize"
# CSI final bytes that leave the cursor where it was: SGR (colours) and EL (``grep
# --color`` writes ``ESC[K`` after each colour). Any other CSI may move the cursor or
# the text, so it leaves a boundary in the view.
_JOIN_FINALS = frozenset(b"mK")
# short escapes that move the cursor: DECRC, IND, NEL, RI, RIS
_MOVE_ESC = frozenset(b"8DEMc")
_REMNANT = re.compile(rb"[\x20-\x3f]{0,%d}[\x40-\x7e]" % CSI_MAX)
_REMNANT_PREFIX = re.compile(rb"[\x20-\x3f]{0,%d}\Z" % CSI_MAX)
_GROUND, _CSI_IGNORE, _STRING = 0, 1, 2
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
        self._mode = _GROUND  # parser state carried across appends (see _resume)
        #: clipboard payloads too long to check: view start -> view end (-1 while open)
        self.forced: dict[int, int] = {}

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
        pending = self.parsed < self.raw_base + len(self.raw) or self._mode
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
        if (not self._mode and marks.find(0) >= 0 and region.find(b"\x1b") >= 0
                and self._only_csi(region, pos)):
            return
        self._low = low = len(self.view)
        find = marks.find
        csi = _CSI.match
        add = self._add
        if self._mode:
            pos = self._resume(pos, final)
        while pos < n:
            if self._mode:  # a long sequence that ran to the end of the data
                break
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
                    if raw[pos - 1] not in _JOIN_FINALS:
                        self._add_sep(i)
                    continue
                nxt = self._escape(i, final)
                if nxt < 0:
                    pos = i  # pending
                    break
                pos = nxt
            elif b == 0x08:
                self._backspace()
                pos = i + 1
            elif b in _FORMAT_LEADS:
                f = _FORMAT.match(raw, i)
                if f is not None:
                    pos = f.end()  # vanishes
                elif not final and _FORMAT_PREFIX.match(raw, i):
                    pos = i  # may be one, cut by the read: wait for its rest
                    break
                else:
                    add(i, i + 1)
                    pos = i + 1
            else:
                pos = i + 1
        self.parsed = self.raw_base + pos
        # the class map of what changed (a backspace may have removed bytes below ``low``)
        low = min(low, self._low)
        del self.cls[low:]
        self.cls += self.view[low:].translate(_CLS_VIEW)

    def _only_csi(self, region: bytes, pos: int) -> bool:
        """Fast path for coloured output: every special byte starts a complete CSI.

        One C-level split removes the CSIs; one translate of what is left checks
        that nothing special (a stray ESC, a backspace) remains and gives its
        class map; the offset map comes from the piece lengths (``accumulate``)."""
        pieces = _CSI_SPLIT.split(region)
        # the only byte of a CSI in 0x40-0x7e is its final: all colours/EL iff these add up
        seqs = b"".join(pieces[1::2])
        if seqs.count(b"m") + seqs.count(b"K") != len(pieces) // 2:
            return False  # a cursor move leaves a boundary: the general parser puts it
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
        """Consume the escape at raw[i]; return the next offset, or -1 if pending.

        Parsed as a VT500-style terminal does, so the view shows what the screen
        shows: nothing of a sequence that is malformed or cut short becomes text, and
        whatever follows one is kept apart from what precedes it by a boundary."""
        raw = self.raw
        n = len(raw)
        if i + 1 >= n:
            return i + 1 if final else -1
        c = raw[i + 1]
        if c == 0x5B:  # '['
            return self._csi(i, final)
        if c in _STRING_INTRO:
            return self._string(i, final)
        m = _ESC_OTHER.match(raw, i)
        if m:
            if m.end() == i + 2 and c in _MOVE_ESC:
                self._add_sep(i)
            return m.end()
        if not final and _ESC_OTHER_PREFIX.match(raw, i):
            return -1
        self._add_sep(i)  # not an escape a terminal knows: it shows nothing of it
        return i + 1

    def _csi(self, i: int, final: bool) -> int:
        """A CSI the fast regex did not take: over-long, malformed, or with C0 controls
        inside (a terminal executes those and goes on with the sequence)."""
        raw = self.raw
        n = len(raw)
        j = i + 2
        bad = False
        inter = False
        ctl: list[int] = []
        while j < n:
            b = raw[j]
            if 0x30 <= b <= 0x3F:
                bad = bad or inter  # a parameter after an intermediate: ignored sequence
            elif 0x20 <= b <= 0x2F:
                inter = True
            elif 0x40 <= b <= 0x7E:
                self._controls(ctl)
                if bad or j - i - 2 > CSI_MAX or b not in _JOIN_FINALS:
                    self._add_sep(i)
                return j + 1
            elif b < 0x20 and b not in (0x18, 0x1A, 0x1B):
                ctl.append(j)
            elif b in (0x18, 0x1A):  # CAN/SUB cancel it: the rest shows as text
                r = _REMNANT.match(raw, j + 1)
                if r is None and not final and _REMNANT_PREFIX.match(raw, j + 1):
                    return -1
                self._controls(ctl)
                self._add_sep(i)
                if r is None:
                    return j + 1
                self._add(j + 1, r.end())  # what was meant as the sequence's rest is
                self._add_sep(r.end())  # text on screen, kept apart from what follows
                return r.end()
            elif b == 0x1B:  # another sequence starts
                self._controls(ctl)
                self._add_sep(i)
                return j
            elif b >= 0x80:
                bad = True  # not a CSI byte: the sequence goes on, and is ignored
            j += 1
        if not final and n - i <= CSI_MAX + 12:
            return -1
        # too long to hold (or the stream ends): consume it, go on in the ignore state
        self._controls(ctl)
        self._add_sep(i)
        if not final:
            self._mode = _CSI_IGNORE
        return n

    def _controls(self, offs: list[int]) -> None:
        """Execute the C0 controls found inside a sequence, as a terminal does."""
        for j in offs:
            b = self.raw[j]
            if b == 0x08:
                self._backspace()
            elif 0x09 <= b <= 0x0D:
                self._add(j, j + 1)

    def _string(self, i: int, final: bool) -> int:
        """OSC/DCS/SOS/PM/APC: the payload goes into the view between two boundaries
        (a token in a hyperlink URL or a title is detected and glues onto nothing)."""
        raw = self.raw
        n = len(raw)
        limit = i + 2 + STRING_MAX
        m = _STRING_STOP.search(raw, i + 2, min(n, limit))
        if m is None:
            if not final and n < limit:
                return -1
            # longer than we hold: stream the rest of the payload into the view
            self._add_sep(i)
            stop = min(n, limit)
            if _OSC52.match(raw, i):  # a clipboard payload too long to decode: replaced
                self.forced[self.view_end] = -1
            self._payload(i + 2, stop)
            self._mode = _STRING
            return self._string_more(stop, final)
        j = m.start()
        if raw[j] == 0x1B:
            if j + 1 >= n and not final:
                return -1
            end = j + 2 if j + 1 < n and raw[j + 1] == 0x5C else j
        else:
            end = j + 1
        self._add_sep(i)
        self._payload(i + 2, j)
        self._add_sep(j)
        return end

    def _string_more(self, pos: int, final: bool) -> int:
        """The _STRING state: payload up to its end, then a boundary."""
        raw = self.raw
        n = len(raw)
        m = _STRING_STOP.search(raw, pos)
        if m is None:
            self._payload(pos, n)
            if not final:
                return n
            j = end = n
        else:
            j = m.start()
            if raw[j] == 0x1B:
                if j + 1 >= n and not final:
                    self._payload(pos, j)
                    return j  # ESC at the end: ST or another sequence, wait
                end = j + 2 if j + 1 < n and raw[j + 1] == 0x5C else j
            else:
                end = j + 1
        self._payload(pos, j)
        for k, v in self.forced.items():
            if v < 0:
                self.forced[k] = self.view_end
        self._add_sep(j)
        self._mode = _GROUND
        return end

    def _payload(self, a: int, b: int) -> None:
        """raw[a:b] of a string sequence into the view; a terminal ignores its controls."""
        for m in _CONTROLS.finditer(self.raw, a, b):
            self._add(a, m.start())
            a = m.end()
        self._add(a, b)

    def _resume(self, pos: int, final: bool) -> int:
        """Go on with a sequence that was too long to hold at the last append."""
        if self._mode == _STRING:
            return self._string_more(pos, final)
        raw = self.raw
        n = len(raw)
        while pos < n:
            b = raw[pos]
            if 0x40 <= b <= 0x7E:
                self._mode = _GROUND
                return pos + 1
            if b in (0x18, 0x1A):
                self._mode = _GROUND
                return pos + 1
            if b == 0x1B:
                self._mode = _GROUND
                return pos
            if b < 0x20:
                self._controls([pos])
            pos += 1
        if final:
            self._mode = _GROUND
        return pos

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
