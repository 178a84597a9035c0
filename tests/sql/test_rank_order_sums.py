"""nDCG and AP sum in rank order (sql/measures/ndcg.sql, average_precision.sql, ndcg_budget.sql say so: a
value never depends on the order rows reach the sum, down to the last bit). Each value is checked bit for bit
against the same terms added one by one in rank order in Python, which is how DuckDB adds an ordered SUM; a
sum in any other order (the same value to within rounding) differs in the last bits for some question."""

import math
import random

import pytest

from assay.inputs.chunking import Chunk
from assay.measures.compute import per_query
from assay.measures.registry import parse_measure
from synthetic import QuerySpec, Synthetic, write_synthetic
from world import opened


def _long_sums() -> Synthetic:
    """Questions with a dozen graded gold spans spread over a long ranking: sums of many unlike terms."""
    rng = random.Random(5)
    chunks = [Chunk(d, i, s, s + 30, "x" * 30) for i, (d, s) in
              enumerate((d, s) for d in ("s.md", "t.md") for s in range(0, 900, 30))]
    queries = []
    for n in range(6):
        gold = [(c.doc_id, c.start + 5, c.start + 10, rng.randint(1, 3)) for c in rng.sample(chunks, 12)]
        queries.append(QuerySpec(f"long{n}", gold, [c.chunk_id for c in rng.sample(chunks, 40)]))
    return Synthetic(["s.md", "t.md"], chunks, queries)


@pytest.fixture(scope="module")
def wh(tmp_path_factory):
    syn = _long_sums()
    retrieval = {q.query_id: {"final": q.ranking, "retrieval": q.ranking[::-1]} for q in syn.queries}
    decoy = Synthetic(syn.docs, syn.chunks, [QuerySpec(q.query_id, q.gold, q.ranking[5:]) for q in syn.queries])

    def fill(wh):
        write_synthetic(wh, syn, run_id="main", stages=retrieval)
        write_synthetic(wh, decoy, run_id="decoy")

    wh = opened(tmp_path_factory, "sums", fill)
    yield wh
    wh.close()


def _in_order(terms):
    total = 0.0
    for t in terms:
        total += t
    return total


def _ranked(wh, run, stage, level, k):
    rows = wh.con.execute("SELECT query_id, rank, gain FROM judged_ranking WHERE run_id = ? AND stage = ? "
                          "AND level = ? AND rank <= ? ORDER BY query_id, rank", [run, stage, level, k]).fetchall()
    out = {}
    for q, rank, gain in rows:
        out.setdefault(q, []).append((rank, gain))
    return out


def _ideal(wh, run, level, k):
    rows = wh.con.execute("SELECT query_id, ideal_rank, gain FROM ideal_gains WHERE run_id = ? AND level = ? "
                          "AND ideal_rank <= ? ORDER BY query_id, ideal_rank", [run, level, k]).fetchall()
    out = {}
    for q, rank, gain in rows:
        out.setdefault(q, []).append(gain / (math.log(rank + 1) / math.log(2)))
    return out


RUNS = [("main", "final"), ("main", "retrieval"), ("decoy", "final")]


@pytest.mark.parametrize("k", [30, 1000])
def test_ndcg_is_the_rank_ordered_sum_bit_for_bit(wh, k):
    differs = 0
    for run, stage in RUNS:
        got = per_query(wh, run, parse_measure(f"nDCG@{k}"), stage)
        for level in ("chunk", "doc"):
            ranked, ideal = _ranked(wh, run, stage, level, k), _ideal(wh, run, level, k)
            for (q, lvl), value in got.items():
                if lvl != level:
                    continue
                terms = [g / (math.log(r + 1) / math.log(2)) for r, g in ranked.get(q, []) if g > 0]
                want = (_in_order(terms) if terms else 0.0) / _in_order(ideal[q])
                assert value == want, (run, stage, q, level, value - want)
                differs += _in_order(reversed(terms)) != _in_order(terms)
    assert differs  # some question's sum depends on its order: the check has teeth


@pytest.mark.parametrize("k", [30, None])
def test_ap_is_the_rank_ordered_sum_bit_for_bit(wh, k):
    differs = 0
    counts = dict(((r, q, lvl), n) for r, lvl, q, n in
                  wh.con.execute("SELECT run_id, level, query_id, n_units FROM unit_counts").fetchall())
    for run, stage in RUNS:
        got = per_query(wh, run, parse_measure("AP" if k is None else f"AP@{k}"), stage)
        for level in ("chunk", "doc"):
            ranked = _ranked(wh, run, stage, level, k or 10**9)
            for (q, lvl), value in got.items():
                if lvl != level:
                    continue
                terms, credited = [], 0
                for r, g in ranked.get(q, []):
                    if g > 0:
                        credited += 1
                        terms.append(credited * 1.0 / r)
                want = (_in_order(terms) if terms else 0.0) / counts[(run, q, level)]
                assert value == want, (run, stage, q, level, value - want)
                differs += _in_order(reversed(terms)) != _in_order(terms)
    assert differs


@pytest.mark.parametrize("budget", [40, 100000])
def test_budgeted_ndcg_is_the_rank_ordered_sum_bit_for_bit(wh, budget):
    """nDCG@Ntok (sql/measures/ndcg_budget.sql): each gold entry credited at the first rank within the budget
    whose text overlaps it, a rank worth the best grade it newly covers (tests/measures/test_span.py's rule)."""
    from assay.store.tokens import token_spans
    from synthetic import DOC_LEN
    from test_span_measures import REF as SPAN

    syn = _long_sums()
    pieces = token_spans(["x" * DOC_LEN])[0]
    tokens = {d: pieces for d in syn.docs}
    got = per_query(wh, "main", parse_measure(f"nDCG@{budget}tok"))
    differs = 0
    for q in syn.queries:
        credited, terms = set(), []
        for rank, d, s, e in SPAN._context(syn, tokens, q, 10**9, budget):
            new = [i for i, (gd, gs, ge, _) in enumerate(q.gold) if i not in credited and gd == d and s < ge and gs < e]
            credited.update(new)
            if new:
                terms.append(max(q.gold[i][3] for i in new) / (math.log(rank + 1) / math.log(2)))
        ideal = [g / (math.log(i + 1) / math.log(2))
                 for i, g in enumerate(sorted((u[3] for u in q.gold), reverse=True), 1)]
        want = (_in_order(terms) if terms else 0.0) / _in_order(ideal)
        assert got[(q.query_id, "chunk")] == want, (q.query_id, got[(q.query_id, "chunk")] - want)
        differs += _in_order(reversed(terms)) != _in_order(terms) or _in_order(reversed(ideal)) != _in_order(ideal)
    assert differs
