"""`assay.evaluate_run` on dicts, DataFrames and Arrow tables, per query against pytrec_eval."""

import random

import pyarrow as pa
import pytest
import pytrec_eval

import assay
from assay.errors import ConfigError, FormatError

TREC = {"nDCG@10": "ndcg_cut_10", "AP": "map", "RR@10": "recip_rank", "P@5": "P_5", "R@100": "recall_100"}


def _random(seed):
    rng = random.Random(seed)
    qrels, run = {}, {}
    for q in range(40):
        qid = f"q{q}"
        docs = [f"d{i}" for i in range(60)]
        qrels[qid] = {d: rng.choice([0, 1, 1, 2, 3]) for d in rng.sample(docs, rng.randint(1, 8))}
        # coarse scores make ties, which trec_eval breaks by document id descending
        run[qid] = {d: float(rng.randint(0, 20)) for d in rng.sample(docs, rng.randint(0, 40))}
        if not run[qid]:
            del run[qid]
    qrels["only-in-qrels"] = {"d1": 1}
    run["only-in-run"] = {"d1": 1.0}
    return qrels, run


def _by_query(table):
    return {(r["measure"], r["query_id"]): r["value"] for r in table.to_pylist()}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_dicts_agree_with_pytrec_eval_per_query(seed):
    qrels, run = _random(seed)
    got = _by_query(assay.evaluate_run(qrels, run, list(TREC)))
    want = pytrec_eval.RelevanceEvaluator(qrels, set(TREC.values())).evaluate(run)
    # pytrec_eval's recip_rank has no cutoff: with our runs of at most 40 documents RR@10 differs only
    # where the first relevant document lies below rank 10, so compare RR@100 there instead
    rr100 = _by_query(assay.evaluate_run(qrels, run, ["RR@100"]))
    scored = sorted(want)
    assert scored == sorted(q for (m, q) in got if m == "AP" and q != "all")
    for qid in scored:
        for name, trec in TREC.items():
            value = rr100[("RR@100", qid)] if name == "RR@10" else got[(name, qid)]
            assert value == pytest.approx(want[qid][trec], abs=1e-12), (name, qid)
    for name in TREC:
        per = [got[(name, q)] for q in scored]
        assert got[(name, "all")] == pytest.approx(sum(per) / len(per))


def test_dataframes_and_arrow_tables_give_the_same_table():
    import pandas as pd

    qrels, run = _random(3)
    from_dicts = assay.evaluate_run(qrels, run, ["nDCG@10", "AP"])
    q_rows = [(q, d, g) for q, docs in qrels.items() for d, g in docs.items()]
    r_rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    ranx_style = (pd.DataFrame(q_rows, columns=["q_id", "doc_id", "score"]),
                  pd.DataFrame(r_rows, columns=["q_id", "doc_id", "score"]))
    arrow = (pa.table({"query_id": [r[0] for r in q_rows], "docno": [r[1] for r in q_rows],
                       "relevance": [r[2] for r in q_rows]}),
             pa.table({"qid": [r[0] for r in r_rows], "did": [r[1] for r in r_rows], "score": [r[2] for r in r_rows]}))
    for q, r in (ranx_style, arrow):
        assert assay.evaluate_run(q, r, ["nDCG@10", "AP"]).equals(from_dicts)
    assert from_dicts.schema.names == ["measure", "query_id", "value"]


def test_complete_scores_missing_queries_zero():
    qrels, run = {"a": {"d1": 1}, "b": {"d2": 1}}, {"a": {"d1": 2.0}}
    assert _by_query(assay.evaluate_run(qrels, run, ["AP"]))[("AP", "all")] == 1.0
    complete = _by_query(assay.evaluate_run(qrels, run, ["AP"], complete=True))
    assert complete[("AP", "b")] == 0.0 and complete[("AP", "all")] == 0.5


@pytest.mark.parametrize("qrels, run, error, message", [
    ({"a": ["d1"]}, {"a": {"d1": 1.0}}, FormatError, "query 'a' maps to list"),
    ({"a": {"d1": 1.5}}, {"a": {"d1": 1.0}}, FormatError, "relevance 1.5 is not a whole number"),
    ({"a": {"d1": 1}}, {"a": {"d1": "high"}}, FormatError, "'high' is not a number"),
    ({"a": {"d1": 1}}, pa.table({"query": ["a"], "doc_id": ["d1"], "score": [1.0]}), FormatError,
     "no query column; name it one of query_id, q_id, qid"),
    ({"a": {"d1": 1}}, pa.table({"q_id": ["a", "a"], "doc_id": ["d1", "d1"], "score": [1.0, 2.0]}), FormatError,
     "run: document 'd1' is listed twice for query 'a'"),
    ({"a": {"d1": 1}}, [("a", "d1", 1.0)], FormatError, "got list"),
])
def test_bad_input_is_one_clear_error(qrels, run, error, message):
    with pytest.raises(error, match=message):
        assay.evaluate_run(qrels, run, ["AP"])


def test_measures_that_need_an_assay_run_are_refused():
    with pytest.raises(ConfigError, match="does not apply to a TREC run"):
        assay.evaluate_run({"a": {"d1": 1}}, {"a": {"d1": 1.0}}, ["SpanRecall@1000tok"])
