"""The span and budgeted measures (sql/measures/span_*.sql, ndcg_budget.sql, success_budget.sql, the
budget_hits view) against tests/measures/test_span.py's computation over sets of characters, for every run
and stage of a warehouse that also holds gold, chunks and tokens under other hashes, at budgets that a
result fills exactly (the next result starts at the budget)."""

import importlib.util
import random
from pathlib import Path

import pytest

from assay.store.tokens import token_spans
from assay.measures.compute import per_query
from assay.measures.registry import NO_CUTOFF, parse_measure
from synthetic import DOC_LEN, QuerySpec, Synthetic, write_synthetic
from world import CORPUS, JUDGMENTS, OTHER_CORPUS, OTHER_JUDGMENTS, opened


def _reference():
    path = Path(__file__).parents[1] / "measures" / "test_span.py"
    spec = importlib.util.spec_from_file_location("span_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


REF = _reference()


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    rng = random.Random(23)
    syn, texts = REF._random_run(rng, n_queries=16)
    retrieval = [QuerySpec(q.query_id, q.gold, q.ranking[1:] + q.ranking[:1]) for q in syn.queries]
    decoy = [QuerySpec(q.query_id, q.gold, list(reversed(q.ranking))) for q in syn.queries]

    def write(wh):
        stages = {q.query_id: {"final": q.ranking, "retrieval": r.ranking} for q, r in zip(syn.queries, retrieval)}
        write_synthetic(wh, syn, run_id="main", stages=stages, texts=texts)
        write_synthetic(wh, Synthetic(syn.docs, syn.chunks, decoy), run_id="decoy", texts=texts)
        _decoys(wh, syn)

    wh = opened(tmp_path_factory, "span", write)
    tokens = dict(zip(texts, token_spans(list(texts.values()))))
    lists = {("main", "final"): syn, ("main", "retrieval"): Synthetic(syn.docs, syn.chunks, retrieval),
             ("decoy", "final"): Synthetic(syn.docs, syn.chunks, decoy)}
    yield wh, lists, tokens
    wh.close()


def _decoys(wh, syn):
    """Whole-document gold under other hashes; the run's tokens under another tokenizer and another corpus
    (each token running to the document's end), its chunks' tokens under another tokenizer and chunk set
    (none), and its chunk ids in another chunk set, of a document no gold names."""
    docs = sorted(set(syn.docs))
    for judgments, corpus in ((OTHER_JUDGMENTS, CORPUS), (JUDGMENTS, OTHER_CORPUS)):
        wh.con.execute("INSERT INTO gold_spans SELECT ?, ?, q, ROW_NUMBER() OVER (PARTITION BY q ORDER BY d) - 1, d, "
                       "NULL, 3, 0, ? FROM (SELECT UNNEST(?) AS q) CROSS JOIN (SELECT UNNEST(?) AS d)",
                       [judgments, corpus, DOC_LEN, [q.query_id for q in syn.queries], docs])
    tokenizer = wh.con.execute("SELECT DISTINCT tokenizer_id FROM runs").fetchall()
    assert len(tokenizer) == 1
    (tok,), other = tokenizer[0], "t" * 64
    wh.con.execute("INSERT INTO doc_tokens SELECT ?, corpus_hash, doc_id, tok_idx, start_char, ? FROM doc_tokens "
                   "WHERE tokenizer_id = ?", [other, DOC_LEN, tok])
    wh.con.execute("INSERT INTO doc_tokens SELECT tokenizer_id, ?, doc_id, tok_idx, start_char, ? FROM doc_tokens "
                   "WHERE tokenizer_id = ?", [OTHER_CORPUS, DOC_LEN, tok])
    wh.con.execute("INSERT INTO chunk_tokens SELECT ?, chunk_set, chunk_id, 0, 100000 FROM chunk_tokens "
                   "WHERE tokenizer_id = ?", [other, tok])
    wh.con.execute("INSERT INTO chunk_tokens SELECT tokenizer_id, ?, chunk_id, 0, 100000 FROM chunk_tokens "
                   "WHERE tokenizer_id = ?", ["u" * 64, tok])
    wh.con.execute("INSERT INTO chunks SELECT ?, chunk_id, 'z.md', ordinal, 0, ?, text, text_sha256 FROM chunks",
                   ["u" * 64, DOC_LEN])


def _exact_budgets(syn, tokens, n=3):
    """Budgets that the first result, or the first two, fill exactly."""
    by_id = {c.chunk_id: c for c in syn.chunks}
    size = lambda c: len([t for t in tokens[c.doc_id] if t[0] < c.end and c.start < t[1]])  # noqa: E731
    out = []
    for q in syn.queries:
        if len(q.ranking) >= 2 and len(out) < 2 * n:
            first, second = size(by_id[q.ranking[0]]), size(by_id[q.ranking[1]])
            out += [first, first + second]
    return sorted(set(out))


FAMILIES = ("SpanRecall", "SpanPrecision", "SpanIoU", "Success", "nDCG")


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
@pytest.mark.parametrize("family", FAMILIES)
def test_every_run_and_stage_matches_character_sets(world, family):
    wh, lists, tokens = world
    budgets = (1, 7, 60, 250, *_exact_budgets(lists[("main", "final")], tokens))
    for (run, stage), syn in lists.items():
        settings = [(None, b) for b in budgets]
        if family not in ("Success", "nDCG"):  # their top-k forms are the rank measures
            settings += [(1, None), (3, None), (10, None)]
        for k, budget in settings:
            name = f"{family}@{budget}tok" if budget else f"{family}@{k}"
            got = per_query(wh, run, parse_measure(name), stage)
            want = {}
            for q in syn.queries:
                value = REF.expected(syn, tokens, q, k or NO_CUTOFF, budget or NO_CUTOFF)[family]
                want[(q.query_id, "chunk")] = value
            assert sorted(got) == sorted(want), (name, run, stage)
            for key, value in want.items():
                assert got[key] == pytest.approx(value, abs=1e-12), (name, run, stage, key)


def test_exact_budgets_are_on_the_edge(world):
    """The derived budgets really are filled exactly by a first result (the edge the <= and < rules decide)."""
    _, lists, tokens = world
    assert len(_exact_budgets(lists[("main", "final")], tokens)) >= 4
