"""Quote resolution: each gold quote must occur exactly once in its document.

Runs of whitespace in the quote match any run of whitespace in the text, so a
quote copied across a line break still resolves. Matching is otherwise exact
(case and punctuation count). Overlapping occurrences count separately.
"""

from __future__ import annotations

import re

from assay.corpus import Corpus
from assay.errors import JudgmentsError
from assay.judgments.model import GoldSpan, JudgmentSet


def quote_pattern(quote: str) -> re.Pattern:
    return re.compile(r"\s+".join(re.escape(part) for part in quote.split()))


def find_quote(text: str, quote: str) -> list[tuple[int, int]]:
    """Every [start, end) where the quote occurs, overlapping occurrences included."""
    pattern = quote_pattern(quote)
    spans, pos = [], 0
    while True:
        m = pattern.search(text, pos)
        if not m:
            return spans
        spans.append((m.start(), m.end()))
        pos = m.start() + 1


def resolve_gold(judgments: JudgmentSet, corpus: Corpus) -> list[GoldSpan]:
    """Resolve every gold entry to a span, or raise one error listing every failure."""
    docs = corpus.by_id()
    spans: list[GoldSpan] = []
    problems: list[str] = []
    for j in judgments.judgments:
        where = f"{judgments.path}:{j.line} (query {j.query_id})"
        for idx, entry in enumerate(j.gold):
            doc = docs.get(entry.doc)
            if doc is None:
                problems.append(f"{where}: document {entry.doc!r} is not in the corpus {corpus.root}")
                continue
            if entry.quote is None:
                spans.append(GoldSpan(j.query_id, idx, entry.doc, None, entry.grade, 0, len(doc.text)))
                continue
            found = find_quote(doc.text, entry.quote)
            if not found:
                problems.append(f"{where}: quote not found in {entry.doc}: {entry.quote!r}")
            elif len(found) > 1:
                offsets = ", ".join(str(s) for s, _ in found[:5])
                problems.append(
                    f"{where}: quote is ambiguous, it occurs {len(found)} times in {entry.doc} "
                    f"(at characters {offsets}); lengthen it until it is unique: {entry.quote!r}"
                )
            else:
                (start, end), = found
                spans.append(GoldSpan(j.query_id, idx, entry.doc, entry.quote, entry.grade, start, end))
    if problems:
        raise JudgmentsError(problems, f"{len(problems)} gold entr{'y' if len(problems) == 1 else 'ies'} did not resolve")
    return spans
