"""The passage of a document nearest to a quote that does not resolve, so the fix takes seconds.

RapidFuzz's ``partial_ratio_alignment`` slides a window the quote's length over the document
(bit-parallel; about 10 ms for a 1 MB document) and returns the best-scoring window. That window
has the quote's length, so an edit that added or removed words leaves it cut mid-word or short;
the window is then refined over the word boundaries near its ends, keeping the passage whose
Indel similarity (``fuzz.ratio``: 2 * matched characters / total characters) with the quote is
highest. The passage is located ignoring case and scored with it. Both sides are compared in the
normalised view quotes resolve in (:mod:`assay.inputs.judgments.normalize`; rendered for Markdown and
reStructuredText), so a line break, a curly quote or a ``**`` costs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from assay.inputs.judgments.markup import markup_syntax
from assay.inputs.judgments.normalize import normalize, views

MAX_SLACK = 64  # characters either side of the aligned window where a passage may start or end
MAX_PAIRS = 400  # (start, end) pairs scored together; past it, the start and then the end


@dataclass(frozen=True)
class Nearest:
    """The passage of ``text[start:end]`` nearest to a quote.

    ``similarity``: 0..1, Indel similarity of the normalised passage and quote (1 is equal).
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
    """The best (ratio, start, end) over word boundaries near the window [start, end).

    Whole words only (the window itself only where there is no word boundary near, as in text
    without spaces); ties go to the passage closest to the window. Every pair of a start and an
    end is tried when there are few; past ``MAX_PAIRS`` (a quote of some thousand characters,
    where every pair would cost seconds) the start is chosen with the window's end, then the end
    with that start.
    """
    from rapidfuzz import fuzz

    slack = min(max(8, len(quote) // 4), MAX_SLACK)
    starts = _boundaries(view, start - slack, start + slack, True) or [start]
    ends = _boundaries(view, end - slack, end + slack, False) or [end]

    def best(pairs):
        scored = [(fuzz.ratio(quote, view[s:e]), -abs(s - start) - abs(e - end), s, e) for s, e in pairs if e > s]
        return max(scored) if scored else None

    if len(starts) * len(ends) <= MAX_PAIRS:
        found = best((s, e) for s in starts for e in ends)
    else:
        first = best((s, end) for s in starts)
        chosen = first[2] if first else start
        found = best((chosen, e) for e in ends)
    if found is None:
        return fuzz.ratio(quote, view[start:end]), start, end
    return found[0], found[2], found[3]


def nearest_passage(text: str, quote: str, doc_id: str | None = None) -> Nearest | None:
    """The passage of ``text`` most similar to ``quote``; None when either has no visible text.

    ``doc_id``: as for :func:`assay.inputs.judgments.resolve.find_quote`, its extension says whether
    Markdown or reStructuredText markup is skipped.
    """
    from rapidfuzz import fuzz

    syntax = markup_syntax(doc_id)
    view = views(text, syntax)[-1]  # rendered, where there is one
    needle = normalize(quote, syntax, view.rendered).text.strip(" ")
    haystack = view.text
    if not needle or not haystack.strip(" "):
        return None
    # located ignoring case (a quote typed in the wrong case is still that passage), scored with it
    lower, lower_needle = haystack.lower(), needle.lower()
    if len(lower) != len(haystack) or len(lower_needle) != len(needle):
        lower, lower_needle = haystack, needle  # a few letters lower-case to two characters
    found = fuzz.partial_ratio_alignment(lower_needle, lower)
    if found is None or found.dest_end <= found.dest_start:
        return None
    _, s, e = _refine(lower, lower_needle, found.dest_start, found.dest_end)
    # never start or end on the space between words
    while s < e and haystack[s] == " ":
        s += 1
    while e > s and haystack[e - 1] == " ":
        e -= 1
    if e <= s:
        return None
    start, end = view.span(s, e)
    return Nearest(
        similarity=round(fuzz.ratio(needle, haystack[s:e]) / 100, 4),
        start=start,
        end=end,
        line=text.count("\n", 0, start) + 1,
        snippet=" ".join(text[start:end].split()),
    )


PATH_CUTOFF = 60  # rapidfuzz ratio (0-100) below which a corpus path is not offered as the one meant
SHOWN_PATHS = 3


class PathIndex:
    """The corpus paths, made ready once for :meth:`closest` (a run may miss many documents of one corpus)."""

    def __init__(self, doc_ids):
        self.ids = sorted(doc_ids)
        self.known = set(self.ids)
        self.lower = [i.lower() for i in self.ids]
        self.names = [i.rsplit("/", 1)[-1] for i in self.lower]
        self.by_lower: dict[str, list[str]] = {}
        for i, low in zip(self.ids, self.lower):
            self.by_lower.setdefault(low, []).append(i)

    def closest(self, doc: str, limit: int = SHOWN_PATHS) -> list[str]:
        """The corpus paths a mistyped gold ``doc`` most likely meant, best first (at most ``limit``).

        Certain fixes first: the same path in another case, or the path with leading directories
        dropped (``corpus/returns.md`` when paths are relative to ``corpus/``). Then the paths most
        similar by RapidFuzz's Indel ratio, ignoring case, of the whole path or of the file name alone
        (whichever is higher, so ``return.md`` finds ``guides/returns.md``); ties by path.
        """
        from rapidfuzz import fuzz, process

        lower = doc.lower()
        certain = list(self.by_lower.get(lower, []))
        parts = doc.split("/")
        certain += [rest for n in range(1, len(parts)) if (rest := "/".join(parts[n:])) in self.known]
        scores: dict[str, float] = {}
        for query, choices in ((lower, self.lower), (lower.rsplit("/", 1)[-1], self.names)):
            for _, score, at in process.extract(query, choices, scorer=fuzz.ratio, limit=None,
                                                score_cutoff=PATH_CUTOFF):
                scores[self.ids[at]] = max(score, scores.get(self.ids[at], 0.0))
        similar = sorted(scores, key=lambda i: (-scores[i], i))
        return list(dict.fromkeys(certain + similar))[:limit]


def closest_paths(doc: str, doc_ids, limit: int = SHOWN_PATHS) -> list[str]:
    """:meth:`PathIndex.closest` over ``doc_ids``, for one look-up."""
    return PathIndex(doc_ids).closest(doc, limit)
