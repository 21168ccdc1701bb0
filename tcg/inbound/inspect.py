"""Inspect one text: build its views, run the rules over each, count invisible and
expensive-script characters. Pure: text in, :class:`Findings` out (no policy, no
I/O); tcg.inbound.gate decides what a surface does with them.

Views (a rule counts when it matches in any; its count is the largest over views):

- ``raw``: the text as it is;
- ``nfkc``: invisible characters removed, then NFKC (math-bold, full-width and
  circled letters become ASCII); case is folded by the matching, which is
  case-insensitive with Unicode case folding;
- ``skeleton``: windows around look-alike letters (a Latin letter next to a
  Cyrillic one, or a confusable from another script) with every confusable
  letter replaced by its ASCII prototype (Unicode TR39 data);
- ``tags``: runs of Unicode tag characters decoded to the ASCII they mirror;
- ``variation-selectors``: runs of variation selectors decoded to the bytes they carry;
- ``percent``: URL-like tokens percent-decoded, ``+`` read as a space after ``?``;
- ``decoded``: text hidden in base64, base32, hex, binary, ascii85/base85, reversed
  or spaced-out letters, decoded (tcg.inbound.decoders).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from urllib.parse import unquote, unquote_plus

from tcg.inbound import chars
from tcg.inbound.decoders import decoded_runs
from tcg.inbound.engine import InboundEngine
from tcg.inbound.marks import EXPENSIVE, INVISIBLE, NFKC, PERCENT, TRIGGER, Marks
from tcg.inbound.utf8 import encode, utf8_of

# The wallet-drain budget (characters of the expensive scripts).
DRAIN_THRESHOLD = 50  # more than this flags the text
DRAIN_BUDGET = 2000  # the first this many stay in the delivered text; the rest is cut
# Invisible flood: at least FLOOD_MIN counted characters, and either FLOOD_ABS of
# them or FLOOD_RATIO of the text.
FLOOD_MIN = 16
FLOOD_ABS = 256
FLOOD_RATIO = 0.02
SKELETON_REACH = 400  # characters of context around a confusable trigger
TOKEN_REACH = 2048  # the longest URL-like token decoded
# whitespace NFKC leaves alone (NEL, Ogham space, line/paragraph separators)
_UNI_SPACE = re.compile("[\x85\u1680\u2028\u2029]")
_TOKEN_STOP = frozenset(" \t\r\n\"'<>`()[]{}|\\")

#: synthetic rule ids (events and verdicts) for the character checks
FLOOD_ID = "invisible-flood"
TAGS_ID = "invisible-tags"
VS_ID = "invisible-variation-selectors"
BIDI_ID = "invisible-bidi"
DRAIN_ID = "wallet-drain"
CHARACTER_RULES = {
    FLOOD_ID: "many invisible characters (zero-width, format, filler, selector runs)",
    TAGS_ID: "Unicode tag characters outside an emoji flag: hidden ASCII text",
    VS_ID: "a run of variation selectors: hidden bytes after a visible character",
    BIDI_ID: "bidirectional override/embedding/isolate controls (Trojan Source)",
    DRAIN_ID: f"more than {DRAIN_THRESHOLD} characters of scripts that are expensive to tokenize",
}
KIND_OF = {FLOOD_ID: "invisible", TAGS_ID: "invisible", VS_ID: "invisible", BIDI_ID: "invisible",
           DRAIN_ID: "drain"}


@dataclass(frozen=True)
class Findings:
    """What one text holds. Never the text itself: counts, rule ids and view names."""

    rules: dict[str, int] = field(default_factory=dict)  # rule id -> count
    families: dict[str, str] = field(default_factory=dict)  # rule id -> family
    where: dict[str, tuple[str, ...]] = field(default_factory=dict)  # rule id -> views
    views: tuple[str, ...] = ()  # views scanned
    invisible: dict[str, int] = field(default_factory=dict)  # class -> counted characters
    expensive: int = 0
    length: int = 0
    cut_at: int | None = None  # where the drain budget starts cutting (character offset)

    @property
    def kinds(self) -> frozenset[str]:
        """``injection`` (a text rule), ``invisible`` and/or ``drain``."""
        return frozenset(KIND_OF.get(r, "injection") for r in self.rules)

    @property
    def flagged(self) -> bool:
        return bool(self.rules)


def inspect(engine: InboundEngine, text: str) -> Findings:
    """Everything the gate needs to decide about ``text``."""
    u = utf8_of(text) if engine.engine == "hyperscan" else None
    marks = engine.marks(text, u)
    views: dict[str, str] = {"raw": text}
    counted, tag_runs, vs_runs, smuggled = _invisibles(engine, text, marks)
    folded = _folded(engine, text, marks)
    if folded:
        views["nfkc"] = folded
    skeleton = _skeleton(engine, text, marks)
    if skeleton:
        views["skeleton"] = skeleton
    if tag_runs:
        views["tags"] = "\n".join(chars.decode_tags(r) for r in tag_runs)
    if vs_runs:
        views["variation-selectors"] = "\n".join(chars.decode_variation_selectors(r) for r in vs_runs)
    percent = _percent(text, marks)
    if percent:
        views["percent"] = percent
    # base64 runs are ASCII: the lead-byte copy holds the same runs as the UTF-8, in fewer bytes
    decoded = decoded_runs(text, u.proxy if u is not None else encode(text))
    if decoded:
        views["decoded"] = "\n".join(decoded)

    rules: dict[str, int] = {}
    where: dict[str, list[str]] = {}
    for name, view in views.items():
        for rid, n in engine.scan_view(view, u if name == "raw" else None).items():
            rules[rid] = max(rules.get(rid, 0), n)
            where.setdefault(rid, []).append(name)
    families = {r.id: r.family for r in engine.rules if r.id in rules}

    total = sum(counted.values())
    if INVISIBLE in marks.capped:
        total = max(total, engine.count_kind(INVISIBLE, text))
    if total >= FLOOD_MIN and (total >= FLOOD_ABS or total >= FLOOD_RATIO * max(len(text), 1)):
        rules[FLOOD_ID] = total
    for rid in smuggled:
        rules[rid] = smuggled[rid]
    expensive_at = marks.of(EXPENSIVE)
    expensive = len(expensive_at)
    cut_at = None
    if EXPENSIVE in marks.capped:
        cut_at = expensive_at[DRAIN_BUDGET] - 1  # the first character past the budget
        expensive = DRAIN_BUDGET + engine.count_kind(EXPENSIVE, text[cut_at:])
    if expensive > DRAIN_THRESHOLD:
        rules[DRAIN_ID] = expensive
    for rid in CHARACTER_RULES:
        if rid in rules:
            families[rid] = KIND_OF[rid]
    return Findings(rules=rules, families=families, where={k: tuple(v) for k, v in where.items()},
                    views=tuple(views), invisible=counted, expensive=expensive, length=len(text),
                    cut_at=cut_at)


def apply_budget(engine: InboundEngine, text: str, findings: Findings) -> tuple[str, int]:
    """``text`` with the expensive-script characters past the budget removed, and how
    many were removed (0: the text is returned as it is)."""
    if findings.cut_at is None:
        return text, 0
    head, tail = text[:findings.cut_at], text[findings.cut_at:]
    kept, removed = engine.py_mark(EXPENSIVE).subn("", tail)
    return head + kept, removed


# ---------------------------------------------------------------- pieces


def _invisibles(engine: InboundEngine, text: str, marks: Marks
                ) -> tuple[dict[str, int], list[str], list[str], dict[str, int]]:
    """(counted characters per class, tag runs, selector runs, smuggling rule counts)."""
    counted: dict[str, int] = {}
    tag_runs: list[str] = []
    vs_runs: list[str] = []
    smuggled: dict[str, int] = {}
    run_kind, run_start, prev = "", -1, -2
    positions = [e - 1 for e in marks.of(INVISIBLE)]

    def close(end: int) -> None:
        if run_kind == "tag":
            run = text[run_start:end]
            if not chars.allowed(text, run_start):
                tag_runs.append(run)
                smuggled[TAGS_ID] = smuggled.get(TAGS_ID, 0) + len(run)
        elif run_kind == "variation-selector" and end - run_start >= 2:
            vs_runs.append(text[run_start:end])
            smuggled[VS_ID] = smuggled.get(VS_ID, 0) + end - run_start

    for i in positions:
        cls = chars.invisible_class(ord(text[i])) or "format"
        if i != prev + 1 or cls != run_kind:
            close(prev + 1)
            run_kind, run_start = cls, i
        prev = i
        if chars.allowed(text, i):
            continue
        counted[cls] = counted.get(cls, 0) + 1
        if cls == "bidi":
            smuggled[BIDI_ID] = smuggled.get(BIDI_ID, 0) + 1
    if positions:
        close(prev + 1)
    return counted, tag_runs, vs_runs, smuggled


def _folded(engine: InboundEngine, text: str, marks: Marks) -> str:
    """The nfkc view: invisible characters removed, NFKC, odd whitespace as a
    space. Only the parts of the text where that changes something are built —
    windows around those characters, as wide as the widest rule plus a margin —
    since everywhere else the view equals the raw text, which is scanned anyway."""
    changed = sorted(set(marks.of(INVISIBLE)) | set(marks.of(NFKC)))
    if not changed:
        return ""
    if INVISIBLE in marks.capped or NFKC in marks.capped:
        spans = [(0, len(text))]
    else:
        reach = engine.max_width + 64
        spans = _spans([e - 1 for e in changed], reach, len(text))
    strip = engine.py_mark(INVISIBLE).sub
    out = []
    for lo, hi in spans:
        lo, hi = _at_space(text, lo, -1), _at_space(text, hi, 1)
        out.append(_UNI_SPACE.sub(" ", unicodedata.normalize("NFKC", strip("", text[lo:hi]))))
    return "\n".join(out)


def _spans(positions: list[int], reach: int, n: int) -> list[tuple[int, int]]:
    """Merged ranges of ``reach`` characters around each position (ascending)."""
    spans: list[tuple[int, int]] = []
    for p in positions:
        lo, hi = max(0, p - reach), min(n, p + reach + 1)
        if spans and lo <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(hi, spans[-1][1]))
        else:
            spans.append((lo, hi))
    return spans


def _at_space(text: str, i: int, step: int) -> int:
    """``i`` moved (by at most 256 characters, in the direction of ``step``) to an
    ASCII space or newline, where normalization cannot join characters across."""
    j = i
    for _ in range(256):
        if j <= 0 or j >= len(text) or text[j] in " \n":
            return max(0, min(j, len(text)))
        j += step
    return 0 if step < 0 else len(text)


def _skeleton(engine: InboundEngine, text: str, marks: Marks) -> str:
    """The skeleton view: windows around confusable triggers, folded and mapped."""
    hits = marks.of(TRIGGER)
    if not hits:
        return ""
    if TRIGGER in marks.capped:
        spans = [(0, len(text))]
    else:
        spans = _spans(hits, SKELETON_REACH, len(text))
    table = chars.skeleton_table()
    strip = engine.py_mark(INVISIBLE).sub
    out = []
    for lo, hi in spans:
        window = unicodedata.normalize("NFKC", strip("", text[lo:hi]))
        out.append(window.translate(table))
    return "\n".join(out)


def _percent(text: str, marks: Marks) -> str:
    """Percent-decoded URL-like tokens around the percent marks."""
    hits = marks.of(PERCENT)
    if not hits:
        return ""
    tokens: list[str] = []
    last_end = -1
    for e in hits:
        if e <= last_end:
            continue
        lo = e - 1
        while lo > 0 and text[lo - 1] not in _TOKEN_STOP and e - lo < TOKEN_REACH:
            lo -= 1
        hi = e
        while hi < len(text) and text[hi] not in _TOKEN_STOP and hi - lo < TOKEN_REACH:
            hi += 1
        last_end = hi
        tokens.append(_decode_url(text[lo:hi]))
    return "\n".join(tokens)


def _decode_url(token: str) -> str:
    """Percent-decode a URL-like token; ``+`` is a space only in the query."""
    for _ in range(3):  # nested encodings (%2520)
        head, sep, query = token.partition("?")
        decoded = unquote(head) + sep + (unquote_plus(query) if sep else "")
        if decoded == token:
            break
        token = decoded
    return token
