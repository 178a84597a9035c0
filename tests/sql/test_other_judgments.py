"""Two runs with the same hits over the same questions, judged by different judgments: other gold units,
other grades, a question answerable in one and no_answer in the other, a question only one of them asks, and
a no_answer question that carries a gold span. Every rank measure of each run must read its own
judgments' units, counts and ideal gains (sql/measures/*.sql and the judged views), checked against
pytrec_eval."""

import pytest

from assay.inputs.chunking import Chunk
from assay.measures.compute import per_query
from assay.measures.registry import parse_measure
from synthetic import DOC_LEN, QuerySpec, Synthetic, write_synthetic
from world import opened, pytrec_reference

REF = pytrec_reference()
OTHER = "k" * 64

CHUNKS = [Chunk("a.md", i, s, s + 50, "x" * 50) for i, s in enumerate(range(0, 500, 50))]
IDS = [c.chunk_id for c in CHUNKS]
RANKING = {"q1": [IDS[i] for i in (3, 0, 5, 1, 7)], "q2": [IDS[i] for i in (2, 4, 6)],
           "q3": [IDS[i] for i in (9, 8)], "nx": [IDS[0]], "only2": [IDS[i] for i in (1, 2)]}
GOLD_ONE = {"q1": [("a.md", 10, 20, 1), ("a.md", 160, 170, 3), ("a.md", 360, 370, 2)],
            "q2": [("a.md", 110, 120, 2)], "q3": [("a.md", 460, 470, 1), ("a.md", 410, 415, 1)]}
# q3 is no_answer under these judgments; q1's chunk [50, 100) newly covers two units at once: credited grade 2
GOLD_TWO = {"q1": [("a.md", 60, 70, 2), ("a.md", 80, 90, 1)], "q2": [("a.md", 210, 220, 1), ("a.md", 310, 320, 3)],
            "only2": [("a.md", 60, 70, 1)]}


def _synthetic(gold):
    queries = [QuerySpec(q, g, RANKING[q]) for q, g in gold.items()]
    return Synthetic(["a.md"], CHUNKS, queries)


@pytest.fixture(scope="module")
def wh(tmp_path_factory):
    def fill(wh):
        one = _synthetic(GOLD_ONE)
        one.queries.append(QuerySpec("nx", [], RANKING["nx"], category="no_answer"))
        write_synthetic(wh, one, run_id="one")
        # run two: run one's rows and hits, read against other judgments
        for table in ("runs", "run_queries", "hit_lists", "run_stages"):
            wh.con.execute(f"INSERT INTO {table} SELECT * REPLACE ('two' AS run_id) FROM {table} WHERE run_id = 'one'")
        wh.con.execute("UPDATE runs SET judgments_hash = ? WHERE run_id = 'two'", [OTHER])
        wh.con.execute("DELETE FROM run_queries WHERE run_id = 'two' AND query_id = 'nx'")
        wh.con.execute("INSERT INTO run_queries SELECT 'two', 'only2', 1.0, 2")
        wh.con.execute("INSERT INTO hit_lists SELECT * REPLACE ('two' AS run_id, 'only2' AS query_id) FROM hit_lists "
                       "WHERE run_id = 'one' AND query_id = 'q1'")  # q1's list: only2 ranks what q1 ranks
        for q in ("q1", "q2", "q3", "only2"):
            category = "no_answer" if q == "q3" else "normal"
            wh.con.execute("INSERT INTO queries (judgments_hash, query_id, query_text, category, form, hard_class, "
                           "line) VALUES (?, ?, 'two', ?, 'match', 'normal', 1)", [OTHER, q, category])
            for i, (d, s, e, g) in enumerate(GOLD_TWO.get(q, [])):
                wh.con.execute("INSERT INTO gold_spans VALUES (?, ?, ?, ?, ?, 'quote', ?, ?, ?)",
                               [OTHER, "c" * 64, q, i, d, g, s, e])
        # a no_answer question of run one that carries gold: the retrieval measures still never score it
        wh.con.execute("INSERT INTO gold_spans VALUES (?, ?, 'nx', 0, 'a.md', 'quote', 1, 0, 10)", ["j" * 64, "c" * 64])

    wh = opened(tmp_path_factory, "judgments", fill)
    yield wh
    wh.close()


def _expected(gold, ranking, family, k):
    """pytrec_eval's value at both levels, as tests/sql/test_retrieval_measures.py computes it."""
    syn = Synthetic(["a.md"], CHUNKS, [QuerySpec("q", gold, ranking)])
    q = syn.queries[0]
    qrel_c, run_c, first = REF.chunk_level_inputs(syn, q)
    qrel_d, run_d = REF.doc_level_inputs(syn, q)
    if family == "R":
        chunk = sum(1 for r in first.values() if r <= k) / len(gold)
    else:
        chunk = REF.expected(qrel_c, run_c, family, k)
    return chunk, REF.expected(qrel_d, run_d, family, k)


def _ranking(run, q):
    return RANKING["q1"] if (run, q) == ("two", "only2") else RANKING[q]


@pytest.mark.parametrize("family, k", [("Success", 2), ("R", 3), ("P", 3), ("RR", None), ("nDCG", 3), ("nDCG", 10),
                                       ("AP", None), ("AP", 3)])
def test_each_run_reads_its_own_judgments(wh, family, k):
    for run, gold in (("one", GOLD_ONE), ("two", GOLD_TWO)):
        got = per_query(wh, run, parse_measure(family if k is None else f"{family}@{k}"))
        want = {}
        for q, units in gold.items():
            want[(q, "chunk")], want[(q, "doc")] = _expected(units, _ranking(run, q), family, k)
        assert got == pytest.approx(want, abs=1e-12), (family, k, run)


@pytest.mark.parametrize("measure", ["SpanRecall@3", "SpanPrecision@3", "SpanIoU@3", "SpanRecall@1000tok",
                                     "SpanIoU@8tok", "Success@8tok", "nDCG@8tok", "nDCG@1000tok"])
def test_each_run_reads_its_own_gold_text(wh, measure):
    """The span and budgeted measures (sql/measures/span_*.sql, ndcg_budget.sql, success_budget.sql) against
    tests/measures/test_span.py's computation over sets of characters."""
    from assay.store.tokens import token_spans
    from assay.measures.registry import NO_CUTOFF
    from test_span_measures import REF as SPAN

    tokens = {"a.md": token_spans(["x" * DOC_LEN])[0]}
    m = parse_measure(measure)
    for run, gold in (("one", GOLD_ONE), ("two", GOLD_TWO)):
        got = per_query(wh, run, m)
        syn = Synthetic(["a.md"], CHUNKS, [QuerySpec(q, units, _ranking(run, q)) for q, units in gold.items()])
        want = {(q.query_id, "chunk"): SPAN.expected(syn, tokens, q, m.cutoff or NO_CUTOFF, m.budget or NO_CUTOFF)[
            m.family.name] for q in syn.queries}
        assert got == pytest.approx(want, abs=1e-12), (measure, run)
