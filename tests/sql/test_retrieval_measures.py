"""The rank measures (sql/measures/{success,recall,precision,reciprocal_rank,ndcg,average_precision}.sql) per
question against pytrec_eval, for every run and stage of a warehouse that holds more than one of each
(tests/sql/world.py): a value read from the wrong run, stage, level, judgments or corpus differs."""

import pytest

from assay.measures.compute import per_query
from assay.measures.registry import parse_measure
from world import lists, opened, pytrec_reference, write

REF = pytrec_reference()
CUTOFFS = (1, 2, 3, 5, 10)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    questions = lists()
    wh = opened(tmp_path_factory, "retrieval", lambda wh: write(wh, questions))
    yield wh, questions
    wh.close()


def _want(syn, q, family, k):
    qrel_c, run_c, first = REF.chunk_level_inputs(syn, q)
    if family == "R":  # set recall: every unit covered within the top k counts, even two in one chunk
        chunk = sum(1 for r in first.values() if r <= k) / len(q.gold)
    elif family == "nDCG" and k is None:
        chunk = REF.trec(qrel_c, run_c, ["ndcg"])["ndcg"] if run_c else 0.0
    else:
        chunk = REF.expected(qrel_c, run_c, family, k)
    qrel_d, run_d = REF.doc_level_inputs(syn, q)
    if family == "nDCG" and k is None:
        doc = REF.trec(qrel_d, run_d, ["ndcg"])["ndcg"] if run_d else 0.0
    else:
        doc = REF.expected(qrel_d, run_d, family, k)
    return {(q.query_id, "chunk"): chunk, (q.query_id, "doc"): doc}


FAMILIES = [("Success", CUTOFFS), ("R", CUTOFFS), ("P", CUTOFFS), ("RR", (None, *CUTOFFS)),
            ("nDCG", (None, *CUTOFFS)), ("AP", (None, 3, 5, 10))]


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
@pytest.mark.parametrize("family, cutoffs", FAMILIES, ids=[f for f, _ in FAMILIES])
def test_every_run_and_stage_matches_pytrec_eval(world, family, cutoffs):
    wh, questions = world
    for (run, stage), syn in questions.items():
        answerable = [q for q in syn.queries if q.category != "no_answer"]
        assert len(answerable) < len(syn.queries)  # the world holds a no_answer question: it is never scored
        for k in cutoffs:
            name = family if k is None else f"{family}@{k}"
            got = per_query(wh, run, parse_measure(name), stage)
            want = {}
            for q in answerable:
                want.update(_want(syn, q, family, k))
            assert sorted(got) == sorted(want), (name, run, stage)
            for key, value in want.items():
                assert got[key] == pytest.approx(value, abs=1e-12), (name, run, stage, key)


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_edge_questions_by_hand(world):
    """The boundary cases, with values worked out by hand (not only through the reference)."""
    wh, _ = world
    memo = {}

    def v(m, q, level="chunk"):
        if m not in memo:
            memo[m] = per_query(wh, "main", parse_measure(m))
        return memo[m][(q, level)]

    # chunks [0,100) and [110,200) only touch gold [100,110); [105,106) at rank 3 overlaps it
    assert [v(f"Success@{k}", "edge-touch") for k in (2, 3)] == [0.0, 1.0]
    assert v("RR", "edge-touch") == pytest.approx(1 / 3)
    assert v("P@3", "edge-touch") == pytest.approx(1 / 3)
    # [99,100) ends where the gold starts, [110,111) starts where it ends: neither overlaps
    assert v("Success@10", "edge-inside") == 0.0 and v("R@10", "edge-inside") == 0.0
    # grades 1, 3, 1 at ranks 1, 3, 2: DCG = 1 + 1/log2(3) + 3/2, ideal 3 + 1/log2(3) + 1/2
    import math

    dcg, idcg = 1 + 1 / math.log2(3) + 3 / 2, 3 + 1 / math.log2(3) + 1 / 2
    assert v("nDCG@3", "edge-grades") == pytest.approx(dcg / idcg, abs=1e-12)
    assert v("nDCG@1", "edge-grades") == pytest.approx(1 / 3, abs=1e-12)
    # AP: precision 1/1, 2/2, 3/3 at the credited ranks, over three units
    assert v("AP", "edge-grades") == pytest.approx(1.0)
    # two units in one chunk at rank 1: R@1 counts both, P@1 credits the rank once
    assert v("R@1", "edge-ties") == 1.0 and v("P@1", "edge-ties") == 1.0
    for r in (1, 3, 5, 10):
        assert v(f"Success@{r}", f"edge-rank{r}") == 1.0
        assert v(f"RR@{r}", f"edge-rank{r}") == pytest.approx(1 / r)
        assert v(f"P@{r}", f"edge-rank{r}") == pytest.approx(1 / r)
        assert v(f"AP@{r}", f"edge-rank{r}") == pytest.approx(1 / r)
        if r > 1:
            assert v(f"Success@{r - 1}", f"edge-rank{r}") == 0.0
            assert v(f"RR@{r - 1}", f"edge-rank{r}") == 0.0
    for m in ("Success@10", "R@10", "P@5", "RR", "nDCG", "AP"):  # no results: the defined value, and counted
        assert v(m, "edge-none") == 0.0 and v(m, "edge-none", "doc") == 0.0
