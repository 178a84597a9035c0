"""The extractive generator: an offline, deterministic answerer that only quotes its context.

For each context chunk in rank order, the chunk is split into sentences (after ``.``, ``!`` or
``?`` followed by whitespace, and at blank lines between paragraphs). A sentence scores

    overlap(s) = |terms(question) ∩ terms(s)|,   terms = BM25's analyzer (default options)

and the chunk's best sentence (ties: the earliest) becomes one claim, unless its overlap is below
``min_overlap``. The claim text is the sentence with whitespace collapsed; its one citation quotes
the sentence verbatim from the chunk. A sentence longer than ``max_quote`` characters is quoted by
its window of at most ``max_quote`` characters, starting and ending at word boundaries, with the
highest overlap (ties: the earliest). It stops after ``max_claims`` claims; when no chunk qualifies
the answer is ``insufficient_evidence``. Every claim it makes passes the citation contract.
"""

from __future__ import annotations

import re

from assay.retrieval.answer.contract import MAX_QUOTE
from assay.core.errors import ConfigError
from assay.retrieval.bm25 import AnalyzerOptions, build_analyzer

_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n[^\S\n]*\n\s*")
_WORD = re.compile(r"\S+")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """[start, end) of each sentence in ``text``, surrounding whitespace excluded."""
    spans, pos = [], 0
    for brk in [*_SENTENCE_BREAK.finditer(text), None]:
        end = brk.start() if brk else len(text)
        piece = text[pos:end]
        lead = len(piece) - len(piece.lstrip())
        trail = len(piece.rstrip())
        if trail > lead:
            spans.append((pos + lead, pos + trail))
        if brk:
            pos = brk.end()
    return spans


class ExtractiveGenerator:
    name = "extractive"

    def __init__(self, max_claims: int = 3, max_quote: int = MAX_QUOTE, min_overlap: int = 1):
        for label, value, least in (("max_claims", max_claims, 1), ("max_quote", max_quote, 1),
                                    ("min_overlap", min_overlap, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ConfigError(f"extractive generator: {label} must be an integer of at least {least}, "
                                  f"got {value!r}")
        self.max_claims = max_claims
        self.max_quote = max_quote
        self.min_overlap = min_overlap
        self._analyzer = None

    def config(self) -> dict:
        return {"name": self.name, "max_claims": self.max_claims, "max_quote": self.max_quote,
                "min_overlap": self.min_overlap, "analyzer": AnalyzerOptions().config()}

    def _terms(self, text: str) -> set[str]:
        if self._analyzer is None:  # tantivy loads on first use, not at import
            self._analyzer = build_analyzer(AnalyzerOptions())
        return set(self._analyzer.analyze(text))

    def _window(self, text: str, start: int, end: int, wanted: set[str]) -> tuple[int, int]:
        """The best window of at most ``max_quote`` characters within text[start:end]."""
        words = [(m.start() + start, m.end() + start) for m in _WORD.finditer(text[start:end])]
        # Words never span whitespace and the analyzer splits at it, so a window's terms are the
        # union of its words' terms.
        terms = [self._terms(text[a:b]) & wanted for a, b in words]
        best, best_score = None, -1
        for i, (a, _) in enumerate(words):
            j = i
            while j + 1 < len(words) and words[j + 1][1] - a <= self.max_quote:
                j += 1
            if words[j][1] - a <= self.max_quote:
                score = len(set().union(*terms[i:j + 1]))
                b = words[j][1]
            else:  # one word longer than the whole window: cut inside it
                b = a + self.max_quote
                score = len(self._terms(text[a:b]) & wanted)
            if score > best_score:
                best, best_score = (a, b), score
        return best

    def generate(self, question: str, context: list[tuple[str, str]]) -> dict:
        wanted = self._terms(question)
        claims = []
        for chunk_id, text in context:
            if len(claims) >= self.max_claims:
                break
            best, best_score = None, -1
            for a, b in sentence_spans(text):
                score = len(self._terms(text[a:b]) & wanted)
                if score > best_score:
                    best, best_score = (a, b), score
            if best is None or best_score < self.min_overlap:
                continue
            a, b = best
            qa, qb = (a, b) if b - a <= self.max_quote else self._window(text, a, b, wanted)
            claims.append({"text": " ".join(text[a:b].split()),
                           "citations": [{"chunk_id": chunk_id, "quote": text[qa:qb]}]})
        return {"claims": claims, "insufficient_evidence": not claims}
