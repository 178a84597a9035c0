"""Recursive, separator-aware chunking: paragraphs, then lines, then sentences, then words.

A span longer than ``size`` is split at the coarsest separator that occurs in it,
and each part that is still too long is split at the next finer one; a single
word longer than ``size`` is cut at ``size`` characters. The resulting pieces are
packed greedily, in order, into chunks of at most ``size`` characters. A chunk
starts with up to ``overlap`` characters of whole pieces from the end of the
previous chunk.

A heading (a Markdown ``#`` line, an reStructuredText title with its adornment,
or a lone short line without closing punctuation) is glued to the text that
follows it, so no chunk is a bare heading; that piece may exceed ``size`` by the
heading's length. A document no longer than ``size`` stays one chunk.

How it is computed (the rule above is the contract; tests/inputs/chunking/reference_recursive.py states it
piece by piece, and tests/inputs/chunking/test_recursive_reference.py holds both paths below to it):

- in C, _recursive.c, when it was built at install (hatch_build.py, given a C compiler): the
  reference's steps, with line breaks and sentence marks found by CPython's own fast search;
- else in Python (``python_spans``): paragraphs and lines are listed, but a part too long for one
  chunk whose text has no line break inside is not cut into its sentences and words one by one. No
  piece inside such a part can be a heading or blank, so packing needs only where its pieces begin
  and end near each chunk's size limit: those few boundaries are searched for around the limit
  (``str.rfind``, ``str.rsplit``, a short regex search), and a part whose boundaries lie far apart
  has them listed once. Packing jumps from limit to limit instead of adding piece after piece.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from assay.inputs.chunking.chunk import Chunk, SizedChunker, chunk_document

_SEPARATORS = (
    re.compile(r"\n[ \t]*\n\s*"),  # paragraphs
    # lines; never between a title and the rST/setext underline that makes it a heading
    # (a ``` line is far more often a Markdown code fence than an underline)
    re.compile(r"\n(?![ \t]*([=\-~^\"'#*+<>:_.])\1{2,}[ \t]*$)", re.M),
    re.compile(r"(?<=[.!?])\s+"),  # sentences
    re.compile(r"\s+"),  # words
)
_ADORNMENT_CHARS = "=-~^\"'`#*+<>:_."
_RST_ADORNMENT = re.compile(r"^([=\-~^\"'`#*+<>:_.])\1{2,}$")
_MD_HEADING = re.compile(r"^#{1,6}\s+\S")
_CLOSING = tuple(".!?:;,)|]}>`")
_NOT_HEADING_START = ("-", "*", "+", "|", "`", ">", "<")
_NUMBERED = re.compile(r"^\d+[.)]\s")


def is_heading(text: str) -> bool:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return False
    if all(_MD_HEADING.match(line) for line in lines):
        return True
    if len(lines) in (2, 3) and _RST_ADORNMENT.match(lines[-1]) and (
        len(lines) == 2 or _RST_ADORNMENT.match(lines[0])
    ):
        return True
    if len(lines) == 1:
        line = lines[0]
        return (
            len(line) <= 80
            and not line.endswith(_CLOSING)
            and not line.startswith(_NOT_HEADING_START)
            and not _NUMBERED.match(line)
        )
    return False


def _is_heading_piece(text: str, start: int, end: int) -> bool:
    """Whether a piece, in its place in the text, is a heading.

    is_heading judges text alone; a piece must also be whole lines (a sentence or
    word cut from a line is body text), and a short line counts only standing alone
    as its paragraph, not as one line of a wrapped paragraph.
    """
    s, e = _trim(text, start, end)
    if e <= s:
        return False
    first, last = text[s], text[e - 1]
    if first != "#" and first != last and last in _CLOSING and (last not in _ADORNMENT_CHARS or text[e - 2] != last):
        return False  # body text: ends like a sentence, and neither a Markdown heading nor an adornment
    before, after = s, e
    while before > 0 and text[before - 1] in " \t":
        before -= 1
    while after < len(text) and text[after] in " \t":
        after += 1
    if (before > 0 and text[before - 1] != "\n") or (after < len(text) and text[after] != "\n"):
        return False
    piece = text[s:e]
    if _RST_ADORNMENT.match(piece):
        # An rST overline: the title and underline follow on the next lines. A rule with a
        # blank line after it is left where it is.
        nxt = after + 1
        while nxt < len(text) and text[nxt] in " \t":
            nxt += 1
        return nxt < len(text) and text[nxt] != "\n"
    if len(piece.splitlines()) == 1:  # is_heading for one line, without its list building
        if not (_MD_HEADING.match(piece) or (
            len(piece) <= 80
            and not piece.endswith(_CLOSING)
            and not piece.startswith(_NOT_HEADING_START)
            and not _NUMBERED.match(piece)
        )):
            return False
    elif not is_heading(piece):
        return False
    if "\n" in piece or _MD_HEADING.match(piece):
        return True
    while before > 0 and text[before - 1].isspace():
        before -= 1
    while after < len(text) and text[after].isspace():
        after += 1
    return (before == 0 or text.count("\n", before, s) >= 2) and (
        after == len(text) or text.count("\n", e, after) >= 2
    )


# -- positions ------------------------------------------------------------------------------------
# A boundary may move across whitespace without changing any chunk: trimmed lengths and trimmed spans
# are all that packing reads. The helpers below answer "where does the text begin/end around here".

_NONSPACE = re.compile(r"\S")
_WORD_CUT = re.compile(r"\s\S")  # a word boundary is the character after a whitespace run
_PUNCT = ".!?"


def _text_from(text: str, i: int, end: int) -> int:
    """The first non-whitespace position in [i, end), or ``end``."""
    if i >= end:
        return end
    if not text[i].isspace():
        return i
    m = _NONSPACE.search(text, i, end)
    return m.start() if m else end


def _text_to(text: str, t: int, floor: int = 0) -> int:
    """One past the last non-whitespace position in [floor, t), or ``floor``."""
    if t <= floor:
        return floor
    if not text[t - 1].isspace():
        return t
    width = 32
    while True:
        lo = max(floor, t - width)
        kept = text[lo:t].rstrip()
        if kept or lo == floor:
            return lo + len(kept)
        width *= 8


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    s = _text_from(text, start, end)
    return s, _text_to(text, end, s)


def _punct_after(text: str, i: int, end: int) -> int:
    """The first of . ! ? in [i, end), or -1."""
    found = text.find(".", i, end)
    stop = found if found >= 0 else end
    for ch in "!?":
        p = text.find(ch, i, stop)
        if p >= 0:
            found = stop = p
    return found


def _punct_before(text: str, lo: int, i: int) -> int:
    """The last of . ! ? in [lo, i), or -1."""
    found = text.rfind(".", lo, i)
    floor = found + 1 if found >= 0 else lo
    for ch in "!?":
        p = text.rfind(ch, floor, i)
        if p >= 0:
            found, floor = p, p + 1
    return found


# -- cuts near a position -------------------------------------------------------------------------
# A cut of separator level L inside a part [a, b) is the end of a match of _SEPARATORS[L] searched in
# text[a:b] that falls strictly inside. For sentences that is the end of a whitespace run that starts
# at or after a, right after . ! or ?; for words, the end of any whitespace run. Each search below
# returns the largest cut <= x (or a) and the smallest cut > x (or b), or None when it gives up within
# its window: the caller then lists the part's cuts with the separator itself.

_GIVE_UP = 8  # punctuation marks not followed by whitespace before a sentence search gives up


def _sentence_cuts_around(text: str, a: int, b: int, x: int, window: int):
    floor = a - 1 if a else 0  # the mark may sit just before the part: the lookbehind sees it
    lo = max(floor, x - window)
    prev, tries = a, 0
    mark = _punct_before(text, lo, x)
    while True:
        if mark < 0:
            if lo > floor:
                return None
            break
        run = mark + 1
        if text[run].isspace():
            end = _text_from(text, run, b)
            if end <= x:
                prev = end
                break
        tries += 1
        if tries > _GIVE_UP:
            return None
        mark = _punct_before(text, lo, mark)
    hi, pos = min(b, x + window), x
    if text[x].isspace():
        run_end = _text_from(text, x, b)
        if run_end >= b:
            return prev, b
        run = _text_to(text, x)
        if run >= a and run and text[run - 1] in _PUNCT:
            return prev, run_end
        pos = run_end
    tries = 0
    mark = _punct_after(text, pos, hi)
    while True:
        if mark < 0:
            return (prev, b) if hi >= b else None
        run = mark + 1
        if run < b and text[run].isspace():
            return prev, _text_from(text, run, b)
        tries += 1
        if tries > _GIVE_UP:
            return None
        mark = _punct_after(text, run, hi)


def _word_cuts_around(text: str, a: int, b: int, x: int, window: int):
    width = 64
    while True:
        lo = max(a, x - width)
        kept = text[lo:x + 1].rstrip()
        last = kept.rsplit(None, 1)[-1] if kept else ""
        if len(last) < len(kept):  # whitespace before the last word in the window
            prev = lo + len(kept) - len(last)
            break
        if lo == a:
            prev = a
            break
        if width >= window:
            return None
        width *= 4
    hi = min(b, x + window)
    m = _WORD_CUT.search(text, x, hi)
    if m:
        return prev, m.start() + 1
    return (prev, b) if hi >= b else None


class _Document:
    """One text being chunked: its glued piece boundaries, found lazily inside long parts."""

    __slots__ = ("text", "size", "overlap", "window", "listed", "starts", "runs")

    def __init__(self, text: str, size: int, overlap: int):
        self.text, self.size, self.overlap = text, size, overlap
        self.window = max(4 * size, 256)
        self.listed: dict[tuple[int, int, int], list[int]] = {}  # a part's cuts, where searching gave up
        # glued pieces: [starts[i], starts[i + 1]); runs[i]: the long part inside piece i, if any
        self.starts: list[int] = []
        self.runs: dict[int, tuple[int, int, int, int]] = {}

    # -- splitting ---------------------------------------------------------------------------------
    def split(self, start: int, end: int, level: int, out: list) -> None:
        """Pieces (start, end) in order, and each long part without a line break inside as
        (start, end, level), of [start, end): longer than the size, with a line break inside."""
        text, size = self.text, self.size
        while True:  # a level without a cut hands the same part to the next
            if level == len(_SEPARATORS):
                s, e = _trim(text, start, end)
                out.extend((i, min(i + size, e)) for i in range(s, e, size))
                return
            cuts = [c for m in _SEPARATORS[level].finditer(text, start, end) if start < (c := m.end()) < end]
            if cuts:
                break
            level += 1
        level += 1
        for a, b in zip([start, *cuts], [*cuts, end]):
            s = a if not text[a].isspace() else _text_from(text, a, b)
            e = b if not text[b - 1].isspace() else _text_to(text, b, s)
            if e - s <= size:
                out.append((a, b))
            elif text.find("\n", s, e) < 0:  # paragraph and line separators would only cut blanks off its ends
                out.append((a, b, level if level > 2 else 2))
            else:
                self.split(a, b, level, out)

    def paragraphs(self, s: int, e: int) -> list | None:
        """What split gives for a text whose line breaks (inside its trimmed extent [s, e)) all belong to
        paragraph breaks, found with str.find; None for any other text. One difference: a paragraph break in the
        leading blanks (before s) gives split a blank first item, and this list none (its first item starts at
        0); the chunks made from either are the same (checked against the reference in tests/inputs/chunking)."""
        text, size, separator = self.text, self.size, _SEPARATORS[0]
        items: list = []
        a = 0
        i = text.find("\n", s, e)
        while True:
            if i < 0:
                stop, b = e, len(text)
            else:
                m = separator.match(text, i)
                if m is None:
                    return None
                stop, b = i, m.end()
            ps = a if not text[a].isspace() else _text_from(text, a, stop)
            pe = stop if not text[stop - 1].isspace() else _text_to(text, stop, ps)
            items.append((a, b) if pe - ps <= size else (a, b, 2))
            if i < 0:
                return items
            a = b
            i = text.find("\n", a, e)

    def glue(self, items: list) -> None:
        """RecursiveChunker._glue_headings over pieces and long parts (whose pieces are never headings
        nor blank, except a leading blank one that only moves the part's start across whitespace)."""
        text, starts, runs = self.text, self.starts, self.runs
        pending, last_end = None, 0
        for item in items:
            a, b = item[0], item[1]
            if len(item) == 3:
                runs[len(starts)] = (a, b, item[2], a if not text[a].isspace() else _text_from(text, a, b))
            elif text[a:b].isspace():
                if pending is None:
                    if starts:
                        last_end = b
                    else:
                        pending = a
                continue
            elif _is_heading_piece(text, a, b):
                if pending is None:
                    pending = a
                continue
            starts.append(a if pending is None else pending)
            last_end, pending = b, None
        if pending is not None:
            last_end = items[-1][1]
            if not starts:
                starts.append(pending)
        starts.append(last_end)

    # -- boundaries --------------------------------------------------------------------------------
    def around(self, x: int) -> tuple[int, int]:
        """The largest glued boundary <= x and the smallest > x, for starts[0] <= x < starts[-1]."""
        starts = self.starts
        i = bisect_right(starts, x)
        lo, hi = starts[i - 1], starts[i]
        run = self.runs.get(i - 1)
        if run is None:
            return lo, hi
        a, b, level, first = run
        if x >= b:
            prev, _ = self._run_around(a, b, level, b - 1)
            return (prev if prev > first else lo), hi
        if x <= first:
            _, nxt = self._run_around(a, b, level, first)
            return lo, (nxt if nxt < b else hi)
        prev, nxt = self._run_around(a, b, level, x)
        return (prev if prev > first else lo), (nxt if nxt < b else hi)

    def _run_around(self, a: int, b: int, level: int, x: int) -> tuple[int, int]:
        """The piece boundaries of part [a, b) around x (a <= x < b): what splitting it at `level`
        and below would give, without listing the pieces."""
        text, size, listed = self.text, self.size, self.listed
        while True:
            if level == len(_SEPARATORS):
                s, e = _trim(text, a, b)
                k = (x - s) // size if x >= s else 0
                prev = s + min(k, (e - 1 - s) // size) * size
                nxt = s + (k + 1) * size
                return (prev if prev > s else a), (nxt if nxt < e else b)
            found = None
            if not listed or (a, b, level) not in listed:
                search = _sentence_cuts_around if level == 2 else _word_cuts_around
                found = search(text, a, b, x, self.window)
            if found is None:
                cuts = listed.get((a, b, level))
                if cuts is None:
                    cuts = [c for m in _SEPARATORS[level].finditer(text, a, b) if a < (c := m.end()) < b]
                    listed[(a, b, level)] = cuts
                i = bisect_right(cuts, x)
                found = (cuts[i - 1] if i else a), (cuts[i] if i < len(cuts) else b)
            prev, nxt = found
            if prev == a and nxt == b:  # no cut at this level: the next one splits the same part
                level += 1
                continue
            if nxt - prev <= size:
                return found
            s = prev if not text[prev].isspace() else _text_from(text, prev, nxt)
            if _text_to(text, nxt, s) - s <= size:
                return found
            a, b, level = prev, nxt, level + 1

    # -- packing -----------------------------------------------------------------------------------
    def pack(self) -> list[tuple[int, int]]:
        """RecursiveChunker's greedy packing, a chunk at a time: the pieces that fit end at or before
        the first text position past the size limit, and the carried ones begin at or after the
        position from which both overlap conditions hold."""
        text, size, overlap, starts, runs = self.text, self.size, self.overlap, self.starts, self.runs
        n, end, first = len(text), starts[-1], starts[0]
        sentences = None if overlap else _sentence_chunk(size)
        cs = first
        ce = self.around(cs)[1] if 0 in runs else starts[1]
        spans: list[tuple[int, int]] = []
        # A chunk ended by `sentences` is right if the sentence after it fits in a chunk (no word of it
        # is a piece): the next such step shows that, a chunk reaching past its part too; else it is redone.
        unchecked = tried = None  # tried: a run where `sentences` found no chunk (not tried there again)
        while ce < end:
            t0 = cs if not text[cs].isspace() else _text_from(text, cs, n)
            limit = t0 + size
            if limit >= end:
                break
            if text[limit].isspace():
                limit = _text_from(text, limit, n)
                if limit >= end:
                    break
            run = runs.get(bisect_right(starts, limit) - 1)
            if sentences is not None and run is not None and run is not tried and run[2] == 2 and run[3] < limit < run[1]:
                m = None
                if not self.listed and _punct_after(text, t0, limit) >= 0:
                    m = sentences.match(text, t0, run[1])
                if m is None:
                    tried = run
                else:
                    stop = m.end()
                    cut = stop + 1 if not text[stop + 1].isspace() else _text_from(text, stop + 1, n)
                    if cut > run[3] and cut >= ce:
                        unchecked = (len(spans), cs, ce)
                        spans.append((t0, stop))
                        cs = ce = cut
                        continue
                if unchecked is not None:  # the sentence after the last chunk does not fit: redo that chunk
                    del spans[unchecked[0]:]
                    _, cs, ce = unchecked
                    sentences = unchecked = None
                    continue
            unchecked = None
            if ce == cs:
                ce = self.around(cs)[1]
                if ce >= end:
                    break
            prev, nxt = self.around(limit)
            if prev >= ce:
                ce = prev
            else:
                nxt = self.around(ce)[1]
            s = cs if not text[cs].isspace() else _text_from(text, cs, ce)
            spans.append((s, ce if not text[ce - 1].isspace() else _text_to(text, ce, s)))
            if overlap:
                y = max(_text_to(text, _text_to(text, ce) - overlap), _text_to(text, _text_to(text, nxt) - size))
                carry_from = self.around(y - 1)[1] if y > first else first
                cs = carry_from if carry_from < ce else ce
            else:
                cs = ce
            ce = nxt
        spans.append(_trim(text, cs, end))
        return [s for s in spans if s[1] > s[0]]


_SENTENCE_CHUNKS: dict[int, re.Pattern] = {}


def _sentence_chunk(size: int) -> re.Pattern:
    """From a chunk's first character, the longest stretch of at most ``size`` characters that ends a
    sentence (. ! or ? followed by whitespace and more text): a whole chunk in one search."""
    pattern = _SENTENCE_CHUNKS.get(size)
    if pattern is None:
        pattern = _SENTENCE_CHUNKS[size] = re.compile(r"(?s:.){0,%d}[.!?](?=\s+\S)" % (size - 1))
    return pattern


def python_spans(text: str, size: int, overlap: int) -> list[tuple[int, int]]:
    """The chunks' [start, end) offsets, computed in Python (what _recursive.c computes in C)."""
    n = len(text)
    s = 0 if n and not text[0].isspace() else _text_from(text, 0, n)
    if s == n:
        return []
    e = n if not text[-1].isspace() else _text_to(text, n, s)
    if e - s <= size:
        return [(s, e)]
    doc = _Document(text, size, overlap)
    items = doc.paragraphs(s, e)
    if items is None:
        items = []
        doc.split(0, n, 0, items)
    doc.glue(items)
    return doc.pack()


_COMPILED: list = []


def compiled_spans():
    """_recursive.c's spans(text, size, overlap), or None when it is not built, or was built from another
    version of its source (hatch_build.py builds it; `make install` again after editing it)."""
    if not _COMPILED:
        import hashlib
        from pathlib import Path

        try:
            from assay.inputs.chunking import _recursive
        except ImportError:
            _COMPILED.append(None)
        else:
            source = Path(__file__).with_name("_recursive.c")
            current = not source.exists() or hashlib.sha256(source.read_bytes()).hexdigest() == _recursive.SOURCE_SHA256
            _COMPILED.append(_recursive.spans if current else None)
    return _COMPILED[0]


class RecursiveChunker(SizedChunker):
    name = "recursive"

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The chunks' [start, end) offsets: in C when that is built, else in Python; the same either way."""
        compiled = compiled_spans()
        if compiled is not None:
            return compiled(text, self.size, self.overlap)
        return python_spans(text, self.size, self.overlap)

    def chunk(self, doc_id: str, text: str) -> list[Chunk]:
        return chunk_document(doc_id, text, self.spans(text))
