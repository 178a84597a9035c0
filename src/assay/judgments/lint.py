"""`assay judgments check`: validate a golden set and report the lints that keep it honest.

Lints use the same analyzer as BM25 (lower-casing, English stop words, stemming),
so "a word occurs" means what it means to the lexical retriever.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass

from assay.corpus import load_corpus
from assay.judgments.parse import load_judgments
from assay.judgments.resolve import resolve_gold

GAP_OVERLAP_LIMIT = 0.5


@dataclass(frozen=True)
class Lint:
    kind: str
    line: int
    query_id: str
    message: str


def _terms(analyzer, text: str) -> set[str]:
    return set(analyzer.analyze(text))


def lint(judgments, corpus, gold, analyzer) -> tuple[list[Lint], list[tuple[str, int, int]]]:
    """Lints, and per question (query_id, documents holding at least half its terms, documents holding all)."""
    doc_terms = {d.doc_id: _terms(analyzer, d.text) for d in corpus.documents}
    vocabulary = set().union(*doc_terms.values())
    lints: list[Lint] = []
    competition = []
    for j in judgments.judgments:
        q = _terms(analyzer, j.query)
        if j.form == "gap" and q:
            quotes = [e.quote for e in j.gold if e.quote]
            if quotes:
                shared = max((q & _terms(analyzer, quote) for quote in quotes), key=len)
                ratio = len(shared) / len(q)
                if ratio >= GAP_OVERLAP_LIMIT:
                    lints.append(Lint("gap-overlap", j.line, j.query_id,
                                      f"{len(shared)}/{len(q)} of the question's terms occur in its quote "
                                      f"({', '.join(sorted(shared))}); a gap question should reword the answer"))
        if j.category == "no_answer":
            if not q:
                lints.append(Lint("no-answer-empty", j.line, j.query_id,
                                  "the question has no content words at all; BM25 returns nothing for it trivially"))
            elif q <= vocabulary:
                lints.append(Lint("no-answer-in-vocabulary", j.line, j.query_id,
                                  f"every content word ({', '.join(sorted(q))}) occurs in the corpus; "
                                  "a lexical retriever cannot abstain by returning nothing"))
        half_docs = sum(1 for terms in doc_terms.values() if q and 2 * len(q & terms) >= len(q))
        all_docs = sum(1 for terms in doc_terms.values() if q and q <= terms)
        competition.append((j.query_id, half_docs, all_docs))
    return lints, competition


def check(judgments_path, corpus_dir, verbose: bool = False) -> tuple[str, int]:
    """The check's text and the number of lints. Raises JudgmentsError when the file is invalid."""
    from assay.retrieval.bm25 import AnalyzerOptions, build_analyzer

    judgments = load_judgments(judgments_path)
    corpus = load_corpus(corpus_dir)
    gold = resolve_gold(judgments, corpus)
    lints, competition = lint(judgments, corpus, gold, build_analyzer(AnalyzerOptions()))
    js = judgments.judgments
    count = lambda attr: ", ".join(f"{k} {v}" for k, v in sorted(Counter(getattr(j, attr) for j in js).items()))  # noqa: E731
    unans = Counter(j.unanswerable for j in js if j.unanswerable)
    out = [
        f"{judgments.path}: valid, {len(js)} questions; {len(gold)} gold entries resolve exactly once "
        f"against {len(corpus.documents)} documents (corpus {corpus.corpus_hash[:12]})",
        f"  category:   {count('category')}",
        f"  form:       {count('form')}",
        f"  hard_class: {count('hard_class')}",
    ]
    if unans:
        out.append(f"  unanswerable: {', '.join(f'{k} {v}' for k, v in sorted(unans.items()))}")
    out.append("")
    out.append(f"lints: {len(lints)}" + ("" if lints else " (none)"))
    for item in sorted(lints, key=lambda x: (x.kind, x.line)):
        out.append(f"  {judgments.path}:{item.line} [{item.kind}] {item.query_id}: {item.message}")
    out.append("")
    n_docs = len(corpus.documents)
    half_counts = [a for _, a, _ in competition]
    out.append(f"term competition: documents holding at least half of a question's terms, median "
               f"{statistics.median(half_counts):g} of {n_docs}, max {max(half_counts)} (most contested first)")
    rows = sorted(competition, key=lambda r: (-r[1], -r[2], r[0]))
    shown = rows if verbose else rows[:5]
    out.append(f"  {'query_id':<40} {'half terms':>10} {'all terms':>9}")
    for qid, a, b in shown:
        out.append(f"  {qid:<40} {a:>10} {b:>9}")
    if not verbose and len(rows) > len(shown):
        out.append(f"  ... {len(rows) - len(shown)} more (--verbose lists every question)")
    return "\n".join(out) + "\n", len(lints)
