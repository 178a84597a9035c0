"""`assay judgments check`: validate a golden set and report the lints that keep it honest.

Lints use the same analyzer as the pipeline's BM25 stage (by default lower-casing,
English stop words, stemming), so "a word occurs" means what it means to the
lexical retriever. Lints name the words as the question writes them ("does",
"queries"), not as the analyzer stores them ("doe", "queri").

BM25 returns every chunk that holds ANY of a question's terms, so a ``no_answer``
question gets an empty result only when none of its content words occurs in the
corpus. For a lexical pipeline each ``no_answer`` question that shares a word is
a lint (``no-answer-lexical-match``), and a summary gives their share. The older
rule (every word occurs) is folded into it: for a lexical retriever "every word"
and "some word" end alike, in results instead of nothing, so two lints for one
question would say one thing twice; the message still says when every word occurs.
For a pipeline without a BM25 stage the rule does not apply: dense retrieval
returns results for any question.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass

from assay.inputs.corpus import load_corpus
from assay.core.escape import terminal
from assay.inputs.judgments.parse import load_judgments
from assay.inputs.judgments.resolve import resolve_gold
from assay.inputs.judgments.vocabulary import CATEGORIES, FORMS, UNLABELED

GAP_OVERLAP_LIMIT = 0.5
SHOWN_WORDS = 5  # shared words named in a no-answer-lexical-match lint; the rest are counted
SHOWN_UNLABELED = 5  # unlabeled lints listed without --verbose; the rest are counted


@dataclass(frozen=True)
class Lint:
    kind: str
    line: int
    query_id: str
    message: str


def _terms(analyzer, text: str) -> set[str]:
    return set(analyzer.analyze(text))


def _splitter():
    """The analyzer's tokenizer alone (assay.retrieval.bm25.build_analyzer: tantivy's simple one): words as written."""
    import tantivy

    return tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).build()


def _written(analyzer, splitter, text: str) -> dict[str, str]:
    """Each term of ``text`` and the word it was first written as there: the analyzer's filters (case, stop
    words, stems) act on one word at a time, so a word analyzed alone gives its term."""
    words: dict[str, str] = {}
    for word in splitter.analyze(text):
        for term in analyzer.analyze(word):
            words.setdefault(term, word)
    return words


def _as_written(terms, words: dict[str, str]) -> list[str]:
    return sorted({words.get(t, t) for t in terms}, key=lambda w: (w.lower(), w))


def review_lints(judgments) -> list[Lint]:
    """The lints that need no corpus: a question still carrying ``review`` is a draft nobody has checked."""
    return [Lint("unreviewed-draft", j.line, j.query_id,
                 f"not reviewed yet ({j.review}); check the question, its quote and form, then delete "
                 "the review field") for j in judgments.judgments if j.review is not None]


def _choices(words) -> str:
    return f"{', '.join(words[:-1])} or {words[-1]}"


def label_lints(judgments) -> list[Lint]:
    """The lints that need no corpus: a question without a category or a form (``unlabeled``) counts in every
    measure, but in no slice but the unlabeled one."""
    lints = []
    for j in judgments.judgments:
        missing = [f"{field} ({_choices(words)})" for field, value, words in
                   (("category", j.category, CATEGORIES), ("form", j.form, FORMS)) if value == UNLABELED]
        if missing:
            lints.append(Lint("unlabeled", j.line, j.query_id, f"no {' and no '.join(missing)}; until it has "
                              f"{'them' if len(missing) == 2 else 'one'} it is in the {UNLABELED} slice"))
    return lints


def labels_summary(judgments) -> str | None:
    """What labelling the unlabeled questions buys, or None when every question has a category and a form."""
    js = judgments.judgments
    unlabeled = [j for j in js if UNLABELED in (j.category, j.form)]
    if not unlabeled:
        return None
    named = [f"{field}={UNLABELED}" for field in ("category", "form")
             if any(getattr(j, field) == UNLABELED for j in js)]
    slices = f"the slice{'s' * (len(named) > 1)} {' and '.join(named)}"
    return (f"labels: {len(unlabeled)} of {len(js)} questions are unlabeled (no category or no form). Labels show "
            "where retrieval fails: assay report and assay compare break every measure down by category and by "
            "form, a gate rule can hold one slice (Success@3:doc[form=gap]>=0.5), and category no_answer marks "
            f"the questions Abstain scores. Until labelled they are in {slices}.")


def lint(judgments, corpus, gold, analyzer, lexical: bool = True) -> tuple[list[Lint], list[tuple[str, int, int]]]:
    """Lints, and per question (query_id, documents holding at least half its terms, documents holding all).

    ``lexical``: the pipeline has a BM25 stage, so the ``no_answer`` lints apply.
    """
    doc_terms = {d.doc_id: _terms(analyzer, d.text) for d in corpus.documents}
    vocabulary = set().union(*doc_terms.values())
    lints: list[Lint] = review_lints(judgments) + label_lints(judgments)
    competition = []
    splitter = _splitter()
    for j in judgments.judgments:
        q = _terms(analyzer, j.query)
        words = _written(analyzer, splitter, j.query)  # the stems match, the question's own words are shown
        if j.form == "gap" and q:
            quotes = [e.quote for e in j.gold if e.quote]
            if quotes:
                shared = max((q & _terms(analyzer, quote) for quote in quotes), key=len)
                ratio = len(shared) / len(q)
                if ratio >= GAP_OVERLAP_LIMIT:
                    lints.append(Lint("gap-overlap", j.line, j.query_id,
                                      f"{len(shared)}/{len(q)} of the question's terms occur in its quote "
                                      f"({', '.join(_as_written(shared, words))}); a gap question should "
                                      "reword the answer"))
        if j.category == "no_answer" and lexical:
            if not q:
                lints.append(Lint("no-answer-empty", j.line, j.query_id,
                                  "the question has no content words at all; BM25 returns nothing for it trivially"))
            elif q & vocabulary:
                lints.append(_lexical_match(j, q & vocabulary, len(q), doc_terms, words))
        half_docs = sum(1 for terms in doc_terms.values() if q and 2 * len(q & terms) >= len(q))
        all_docs = sum(1 for terms in doc_terms.values() if q and q <= terms)
        competition.append((j.query_id, half_docs, all_docs))
    return lints, competition


def _lexical_match(j, shared: set[str], n_terms: int, doc_terms: dict[str, set[str]], written: dict[str, str]) -> Lint:
    df = {w: sum(1 for terms in doc_terms.values() if w in terms) for w in shared}
    words = [written.get(w, w) for w in sorted(shared, key=lambda w: (-df[w], written.get(w, w).lower(), w))]
    named = ", ".join(words[:SHOWN_WORDS])
    if len(words) > SHOWN_WORDS:
        named += f", +{len(words) - SHOWN_WORDS} more"
    docs = sum(1 for terms in doc_terms.values() if terms & shared)
    return Lint("no-answer-lexical-match", j.line, j.query_id,
                f"shares {len(shared)} of {n_terms} content words with the corpus ({named}); {docs} of "
                f"{len(doc_terms)} documents contain at least one, so BM25 returns results instead of nothing")


def _no_answer_summary(pipeline, judgments, lints: list[Lint]) -> str:
    n = sum(1 for j in judgments.judgments if j.category == "no_answer")
    if not pipeline.settings["lexical"]:
        why = ("dense retrieval always returns results" if pipeline.settings["dense"]
               else "its retriever decides when it returns nothing")
        return (f"no_answer lexical lint: does not apply to pipeline {pipeline.name}, which has no BM25 stage "
                f"({why}); abstention on its {n} no_answer questions must come from a calibrated threshold "
                "(assay calibrate)")
    if not n:
        return f"pipeline {pipeline.name} is lexical; there are no no_answer questions, so abstention is not tested"
    matched = sum(1 for item in lints if item.kind == "no-answer-lexical-match")
    percent = int(100 * matched / n + 0.5)  # half up: 7 of 8 is 88%
    share = f"{matched} of {n} no_answer questions ({percent}%) share a content word with the corpus"
    if matched:
        return (f"pipeline {pipeline.name} is lexical: {share}: a lexical retriever returns results for them, so "
                "abstention must come from a calibrated threshold (assay calibrate), not from empty results")
    return f"pipeline {pipeline.name} is lexical: {share}: BM25 returns nothing for any of them"


def check(judgments_path, corpus_dir, verbose: bool = False, pipeline: str = "bm25",
          config_path=None, warehouse=None, say=None) -> tuple[str, int]:
    """The check's text and the number of lints. Raises JudgmentsError when the file is invalid.

    ``pipeline`` is resolved as `assay run` resolves it (built-in or from assay.toml at
    ``config_path``); its BM25 analyzer settings are the ones the lints use. With a ``warehouse``,
    ``say`` gets a ``note:`` line when the corpus differs from the one the file last ran against
    (``assay.store.drift``), before any quote is resolved.
    """
    from assay.inputs.project import load_config
    from assay.retrieval.pipelines import resolve_pipeline
    from assay.retrieval.bm25 import AnalyzerOptions, build_analyzer

    resolved = resolve_pipeline(pipeline, load_config(config_path), {})
    s = resolved.settings
    judgments = load_judgments(judgments_path)
    corpus = load_corpus(corpus_dir)
    if say is not None:
        from assay.store.drift import warn_of_drift

        warn_of_drift(warehouse, judgments, corpus, say)
    gold = resolve_gold(judgments, corpus)
    analyzer = build_analyzer(AnalyzerOptions(s["lowercase"], s["stopwords"], s["stemming"]))
    lints, competition = lint(judgments, corpus, gold, analyzer, lexical=s["lexical"])
    js = judgments.judgments
    esc = terminal  # hard classes, ids, paths and quoted words come from the user's files
    count = lambda attr: ", ".join(f"{esc(k)} {v}" for k, v in sorted(Counter(getattr(j, attr) for j in js).items()))  # noqa: E731
    unans = Counter(j.unanswerable for j in js if j.unanswerable)
    out = [
        f"{esc(judgments.path)}: valid, {len(js)} questions; {len(gold)} gold entries resolve exactly once "
        f"against {len(corpus.documents)} documents (corpus {corpus.corpus_hash[:12]})",
        f"  category:   {count('category')}",
        f"  form:       {count('form')}",
        f"  hard_class: {count('hard_class')}",
    ]
    if unans:
        out.append(f"  unanswerable: {', '.join(f'{k} {v}' for k, v in sorted(unans.items()))}")
    out.append("")
    out.append(f"lints: {len(lints)}" + ("" if lints else " (none)"))
    unlabeled = 0
    for item in sorted(lints, key=lambda x: (x.kind, x.line)):
        if item.kind == "unlabeled":  # a set labelled by nobody yet would bury the other lints
            unlabeled += 1
            if unlabeled > SHOWN_UNLABELED and not verbose:
                continue
        out.append(f"  {esc(judgments.path)}:{item.line} [{item.kind}] {esc(item.query_id)}: {esc(item.message)}")
        if item.kind == "unlabeled" and unlabeled == SHOWN_UNLABELED and not verbose:
            more = sum(1 for x in lints if x.kind == "unlabeled") - SHOWN_UNLABELED
            if more:
                out.append(f"  ... {more} more unlabeled (--verbose lists every one)")
    labels = labels_summary(judgments)
    if labels:
        out += ["", labels]
    out += ["", esc(_no_answer_summary(resolved, judgments, lints)), ""]
    n_docs = len(corpus.documents)
    half_counts = [a for _, a, _ in competition]
    out.append(f"term competition: documents holding at least half of a question's terms, median "
               f"{statistics.median(half_counts):g} of {n_docs}, max {max(half_counts)} (most contested first)")
    rows = sorted(competition, key=lambda r: (-r[1], -r[2], r[0]))
    shown = rows if verbose else rows[:5]
    from assay.core.tables import render

    table = render(["query_id", "half terms", "all terms"], shown, align=["left", "right", "right"])
    out += ["  " + line for line in table.splitlines()]  # indented under its heading, as the lints are
    if not verbose and len(rows) > len(shown):
        out.append(f"  ... {len(rows) - len(shown)} more (--verbose lists every question)")
    return "\n".join(out) + "\n", len(lints)
