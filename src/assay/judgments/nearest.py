"""The passage of a document nearest to a quote that does not resolve, so the fix takes seconds.

RapidFuzz's ``partial_ratio_alignment`` slides a window the quote's length over the document
(bit-parallel; about 10 ms for a 1 MB document) and returns the best-scoring window. That window
has the quote's length, so an edit that added or removed words leaves it cut mid-word or short;
the window is then refined over the word boundaries near its ends, keeping the passage whose
Indel similarity (``fuzz.ratio``: 2 * matched characters / total characters) with the quote is
highest. Both sides are compared whitespace-collapsed, so a line break costs nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_WS = re.compile(r"\s+")


@dataclass(frozen=True)
class Nearest:
    """The passage of ``text[start:end]`` nearest to a quote.

    ``similarity``: 0..1, Indel similarity of the whitespace-collapsed passage and quote (1 is equal).
    ``start``, ``end``: [start, end) character offsets in the original text. ``line``: 1-based line
    of ``start``. ``snippet``: the passage with its whitespace runs collapsed to one space (it
    resolves as a quote when it occurs once).
    """

    similarity: float
    start: int
    end: int
    line: int
    snippet: str

    def describe(self) -> str:
        """``similarity 0.93, line 12, chars 340-389``: where the passage is."""
        return f"similarity {self.similarity:.2f}, line {self.line}, chars {self.start}-{self.end}"


class _Collapsed:
    """``text`` with every whitespace run as one space; ``span`` maps a range back to ``text``."""

    def __init__(self, text: str):
        pieces: list[str] = []
        self._starts: list[int] = []  # collapsed offset of each kept piece
        self._origins: list[int] = []  # original offset of each kept piece
        pos = out = 0
        for m in _WS.finditer(text):
            for a, b, piece in ((pos, m.start(), text[pos:m.start()]), (m.start(), m.end(), " ")):
                if b > a:
                    self._starts.append(out)
                    self._origins.append(a)
                    pieces.append(piece)
                    out += len(piece)
            pos = m.end()
        if pos < len(text):
            self._starts.append(out)
            self._origins.append(pos)
            pieces.append(text[pos:])
        self.text = "".join(pieces)
        self._source = text

    def _locate(self, i: int) -> int:
        from bisect import bisect_right

        return bisect_right(self._starts, i) - 1

    def span(self, start: int, end: int) -> tuple[int, int]:
        k = self._locate(start)
        a = self._origins[k] + (0 if self.text[start] == " " else start - self._starts[k])
        k = self._locate(end - 1)
        if self.text[end - 1] == " ":
            nxt = self._origins[k + 1] if k + 1 < len(self._origins) else len(self._source)
            b = nxt
        else:
            b = self._origins[k] + (end - 1 - self._starts[k]) + 1
        return a, b


def _boundaries(text: str, lo: int, hi: int, starts: bool) -> list[int]:
    """Word starts (or ends) of ``text`` in [lo, hi]."""
    lo, hi = max(lo, 0), min(hi, len(text))
    found = []
    for i in range(lo, hi + 1):
        if starts and i < len(text) and text[i] != " " and (i == 0 or text[i - 1] == " "):
            found.append(i)
        if not starts and i > 0 and text[i - 1] != " " and (i == len(text) or text[i] == " "):
            found.append(i)
    return found


def _refine(view: str, quote: str, start: int, end: int) -> tuple[float, int, int]:
    """The best (ratio, start, end) over word boundaries near the window [start, end)."""
    from rapidfuzz import fuzz

    slack = max(8, len(quote) // 4)
    starts = _boundaries(view, start - slack, start + slack, True) or [start]
    ends = _boundaries(view, end - slack, end + slack, False) or [end]
    best = (fuzz.ratio(quote, view[start:end]), start, end)
    for s in starts:
        for e in ends:
            if e > s:
                score = fuzz.ratio(quote, view[s:e])
                # prefer the higher score, then the passage closest to the window found
                if (score, -abs(s - start) - abs(e - end)) > (best[0], -abs(best[1] - start) - abs(best[2] - end)):
                    best = (score, s, e)
    return best


def nearest_passage(text: str, quote: str) -> Nearest | None:
    """The passage of ``text`` most similar to ``quote``; None when either has no visible text."""
    from rapidfuzz import fuzz

    needle = " ".join(quote.split())
    view = _Collapsed(text)
    if not needle or not view.text.strip():
        return None
    found = fuzz.partial_ratio_alignment(needle, view.text)
    if found is None or found.dest_end <= found.dest_start:
        return None
    score, s, e = _refine(view.text, needle, found.dest_start, found.dest_end)
    # never start or end on the collapsed space between words
    while s < e and view.text[s] == " ":
        s += 1
    while e > s and view.text[e - 1] == " ":
        e -= 1
    if e <= s:
        return None
    start, end = view.span(s, e)
    return Nearest(
        similarity=round(score / 100, 4),
        start=start,
        end=end,
        line=text.count("\n", 0, start) + 1,
        snippet=" ".join(text[start:end].split()),
    )
