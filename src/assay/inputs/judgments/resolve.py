"""Quote resolution: each gold quote must occur exactly once in its document.

A quote matches where its normalised form occurs in a normalised view of the document
(:mod:`assay.inputs.judgments.normalize`): runs of whitespace are one space, so a quote copied across a
line break resolves; typographic variants (curly quotes, dashes, NBSP, soft hyphens, ligatures,
PDF line-end hyphenation) are folded; and in Markdown and reStructuredText documents (by
extension: ``.md``, ``.markdown``, ``.rst``) markup a reader does not see is skipped, in the
document and in the quote alike. Case, letters, digits and other punctuation still count.

A span is an exact [start, end) range of the original text, from the first to the last visible
character the quote names: markup around the quote's first or last word is in the span only when
the quote has it too (``has support for`` against ``has **support for**`` ends before the ``**``;
``**support for**`` takes both). Overlapping occurrences count separately, and occurrences that
differ only by what normalisation folds count separately too, so exactly-once still fails closed.
A quote that was found exactly before (in the plain view) is found at the same span.
"""

from __future__ import annotations

import re

from assay.inputs.corpus import Corpus
from assay.core.errors import JudgmentsError
from assay.inputs.judgments.markup import markup_syntax
from assay.inputs.judgments.model import GoldSpan, JudgmentSet
from assay.inputs.judgments.normalize import normalize, views

MIN_SHOWN_SIMILARITY = 0.5  # below this the nearest passage is noise, and the message says so
SHOWN_OFFSETS = 5
MAX_HYPHENS_TRIED = 4  # in-word hyphens of one quote tried both ways against line-end hyphenation
_WORD_HYPHEN = re.compile(r"(?<=[^\W\d_])-(?=[^\W\d_])")
_LINE_END_BREAK = re.compile(r"[-\u2010\u2011\u00ad][^\S\n]*\n")


def quote_pattern(quote: str) -> re.Pattern:
    """The quote as a literal pattern whose whitespace runs match any whitespace run (no folding)."""
    return re.compile(r"\s+".join(re.escape(part) for part in quote.split()))


def _loose(fragment: str) -> str:
    pattern = r"\s+".join(re.escape(part) for part in fragment.split())
    if fragment[:1].isspace():
        pattern = r"\s+" + pattern
    if fragment[-1:].isspace() and fragment.strip():
        pattern += r"\s+"
    return pattern


def _extend(text: str, start: int, end: int, prefix: str, suffix: str) -> tuple[int, int]:
    """Widen [start, end) over the markup the quote itself has before its first and after its last
    visible character, where the text has the same characters there."""
    if prefix:
        window = max(0, start - 4 * len(prefix) - 64)
        m = re.compile(f"(?:{_loose(prefix)})\\Z").search(text, window, start)
        if m:
            start = m.start()
    if suffix:
        m = re.compile(_loose(suffix)).match(text, end)
        if m:
            end = m.end()
    return start, end


def _needles(needle: str, breaks: bool) -> list[tuple[str, tuple[int, ...]]]:
    """The needle, and against a view that joined line-end hyphens, the needle with each of its
    in-word hyphens kept or dropped: (variant, where in the variant a hyphen was dropped).

    The view cannot tell ``exam-\\nple`` from ``well-\\nknown``; the quote can.
    """
    hyphens = [m.start() for m in _WORD_HYPHEN.finditer(needle)][:MAX_HYPHENS_TRIED] if breaks else []
    variants = []
    for mask in range(2 ** len(hyphens)):
        dropped = [h for k, h in enumerate(hyphens) if mask >> k & 1]
        parts, joins, previous = [], [], 0
        for n, h in enumerate(dropped):
            parts.append(needle[previous:h])
            joins.append(h - n)
            previous = h + 1
        parts.append(needle[previous:])
        variants.append(("".join(parts), tuple(joins)))
    return variants


def find_quote(text: str, quote: str, doc_id: str | None = None) -> list[tuple[int, int]]:
    """Every [start, end) of ``text`` where the quote occurs, overlapping occurrences included.

    ``doc_id``: the document's id; its extension says whether Markdown or reStructuredText markup
    is skipped. Sorted by start. One place counts once: spans that share a start or an end are one
    occurrence seen through two views (a quote that ends on the ``&`` of ``&amp;`` reads the same
    in the source and in the rendered text), and the first view's span (the plain one) is kept.
    """
    syntax = markup_syntax(doc_id)
    stripped = quote.strip()
    spans: list[tuple[int, int]] = []
    starts: set[int] = set()
    ends: set[int] = set()
    for view in views(text, syntax):
        q = normalize(stripped, syntax, view.rendered)
        needle = q.text.strip(" ")
        if not needle:
            continue
        first = q.text.index(needle)
        shown_start, shown_end = q.span(first, first + len(needle))
        prefix, suffix = stripped[:shown_start], stripped[shown_end:]
        haystack = view.text
        for variant, joins in _needles(needle, view.breaks):
            at = haystack.find(variant)
            while at != -1:
                # a hyphen the quote dropped must be a line-end hyphen the view joined, nothing else
                if all(_LINE_END_BREAK.search(text, *view.span(at + j - 1, at + j + 1)) for j in joins):
                    start, end = view.span(at, at + len(variant))
                    start, end = _extend(text, start, end, prefix, suffix)
                    if start not in starts and end not in ends:
                        spans.append((start, end))
                        starts.add(start)
                        ends.add(end)
                at = haystack.find(variant, at + 1)
    return sorted(spans)


def line_of(text: str, offset: int) -> int:
    """1-based line number of a character offset."""
    return text.count("\n", 0, offset) + 1


def not_found_message(text: str, quote: str, doc_id: str) -> str:
    """``quote not found in DOC: 'QUOTE'; nearest passage (similarity 0.93, line 12, chars 340-389): '...'``"""
    from assay.inputs.judgments.nearest import nearest_passage

    message = f"quote not found in {doc_id}: {quote!r}"
    near = nearest_passage(text, quote, doc_id)
    if near is None:
        return message
    if near.similarity < MIN_SHOWN_SIMILARITY:
        return f"{message}; no passage comes close (best similarity {near.similarity:.2f}, line {near.line})"
    return f"{message}; nearest passage ({near.describe()}): {near.snippet!r}"


def ambiguous_message(text: str, quote: str, doc_id: str, found: list[tuple[int, int]]) -> str:
    shown = found[:SHOWN_OFFSETS]
    offsets = ", ".join(str(s) for s, _ in shown)
    lines = ", ".join(str(line_of(text, s)) for s, _ in shown)
    return (f"quote is ambiguous, it occurs {len(found)} times in {doc_id} (at characters {offsets}; "
            f"lines {lines}); lengthen it until it is unique: {quote!r}")


def _why_not_read(corpus: Corpus, doc_id: str) -> str:
    """Why a file of the corpus directory was not read, when it was there (``Corpus.skipped``)."""
    skipped = next((s for s in corpus.skipped or ()
                    if s.path == doc_id or (s.path.endswith("/") and doc_id.startswith(s.path))), None)
    if skipped is None:
        return ""
    what = "the file is there" if skipped.path == doc_id else f"it lies under {skipped.path}, which is there"
    return f": {what} but was not read ({skipped.reason})"


def _closest(doc_id: str, paths) -> str:
    """``; closest: a.md, b.md``: the corpus paths a gold ``doc`` that is not there most likely meant."""
    close = paths.closest(doc_id)
    if close:
        return f"; closest: {', '.join(close)}"
    n = len(paths.ids)
    return f"; no path in it is close ({n} document{'s' * (n != 1)}): write the path relative to the corpus directory"


def resolve_gold(judgments: JudgmentSet, corpus: Corpus) -> list[GoldSpan]:
    """Resolve every gold entry to a span, or raise one error listing every failure."""
    docs = corpus.by_id()
    spans: list[GoldSpan] = []
    problems: list[str] = []
    missing: dict[str, str] = {}  # a document named by many entries is looked for once
    paths = None
    for j in judgments.judgments:
        where = f"{judgments.path}:{j.line} (query {j.query_id})"
        for idx, entry in enumerate(j.gold):
            doc = docs.get(entry.doc)
            if doc is None:
                if entry.doc not in missing:
                    why = _why_not_read(corpus, entry.doc)
                    if not why:
                        from assay.inputs.judgments.nearest import PathIndex

                        paths = paths or PathIndex(docs)
                        why = _closest(entry.doc, paths)
                    missing[entry.doc] = why
                problems.append(f"{where}: document {entry.doc!r} is not in the corpus {corpus.root}"
                                + missing[entry.doc])
                continue
            if entry.quote is None:
                spans.append(GoldSpan(j.query_id, idx, entry.doc, None, entry.grade, 0, len(doc.text)))
                continue
            if not doc.text.strip():
                problems.append(f"{where}: {entry.doc} is empty (no text to quote; the corpus keeps it so it can "
                                f"be judged whole): drop the quote to judge the whole document, or give the file "
                                f"text: {entry.quote!r}")
                continue
            found = find_quote(doc.text, entry.quote, entry.doc)
            if not found:
                problems.append(f"{where}: {not_found_message(doc.text, entry.quote, entry.doc)}")
            elif len(found) > 1:
                problems.append(f"{where}: {ambiguous_message(doc.text, entry.quote, entry.doc, found)}")
            else:
                (start, end), = found
                spans.append(GoldSpan(j.query_id, idx, entry.doc, entry.quote, entry.grade, start, end))
    if problems:
        raise JudgmentsError(problems, f"{len(problems)} gold entr{'y' if len(problems) == 1 else 'ies'} did not resolve")
    return spans
